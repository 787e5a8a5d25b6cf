/* PE_GEMM (pe.h): an output-stationary MAC array (docs/pe-model.md). The
 * formula is a pure function of the product's shape; a latency model may
 * replace it ({op = "gemm", m, k, n, dtype_bytes}). The dot command
 * (tl.dot) is dispatch -> fetch -> GEMM -> write back; its GEMM stage is on
 * the accel slot, a slice ("gemm" with m, k, n) and a `gemm` op-log record;
 * with data, its result is computed (engine.h: f32 accumulation along k in
 * order for floats, double for integers) when the command ends. */
#include "comp/pe/engines.h"

#include "core/util.h"

#include <stdlib.h>

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* ceil(m/rows) * ceil(n/cols) * ceil(k/depth), times f32_slowdown for
 * 32-bit operands. */
double kb_gemm_cycles(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in)
{
    if (m <= 0 || k <= 0 || n <= 0)
        return 0;
    double c = (double)cdiv(m, g->rows) * (double)cdiv(n, g->cols) * (double)cdiv(k, g->depth);
    return kb_dtype_size(in) >= 4 ? c * g->f32_slowdown : c;
}

kb_time kb_gemm_ps(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in)
{
    return g->overhead_ps + kb_cycles_ps(kb_gemm_cycles(g, m, k, n, in), g->clock_ghz);
}

kb_time kb_pe_gemm_ps(kb_pe *p, int64_t m, int64_t k, int64_t n, kb_dtype dt)
{
    kb_time t = kb_gemm_ps(&p->gemm_m, m, k, n, dt);
    kb_comp *c = kb_fabric_comp(p->fab, p->gemm);
    if (!c->latency)
        return t;
    kb_lat_query q = {.op = "gemm", .builtin_ps = t};
    kb_lat_param(&q, "m", (double)m);
    kb_lat_param(&q, "k", (double)k);
    kb_lat_param(&q, "n", (double)n);
    kb_lat_param(&q, "dtype_bytes", (double)kb_dtype_size(dt));
    return kb_comp_latency(c, &q);
}

static const char *const names[KB_NDTYPES] = {
    [KB_F32] = "gemm_f32", [KB_F16] = "gemm_f16", [KB_BF16] = "gemm_bf16", [KB_I32] = "gemm_i32",
    [KB_I16] = "gemm_i16", [KB_I8] = "gemm_i8",   [KB_U8] = "gemm_u8",     [KB_BOOL] = "gemm_bool"};

/* The op-log record (its fields: docs/tl.md, "Trace and op log"). */
static void log_gemm(kb_pe_op *op, kb_time start, kb_time end)
{
    kb_pe *p = op->pe;
    const char *comp = kb_topo_node(kb_fabric_topo(p->fab), p->gemm)->id;
    const kb_pe_operands *in = KB_PE_ARGS(op, kb_pe_operands);
    const kb_tview *a = &in->in[0].v, *b = &in->in[1].v;
    kb_oplog *log = kb_fabric_oplog(p->fab);
    if (!kb_oplog_keeps(log)) {
        kb_oplog_add(log, start, end, comp, "gemm", names[a->dtype], NULL);
        return;
    }
    kb_val *prm = kb_val_obj();
    kb_obj_int(prm, "src_a_addr", (int64_t)a->offset);
    kb_obj_int(prm, "src_b_addr", (int64_t)b->offset);
    kb_obj_int(prm, "dst_addr", (int64_t)op->out.offset);
    kb_obj_put(prm, "shape_a", kb_pe_shape_val(a));
    kb_obj_put(prm, "shape_b", kb_pe_shape_val(b));
    kb_obj_put(prm, "shape_out", kb_pe_shape_val(&op->out));
    kb_obj_str(prm, "dtype_in", kb_dtype_name(a->dtype));
    kb_obj_str(prm, "dtype_out", kb_dtype_name(op->out.dtype));
    kb_obj_int(prm, "m", a->shape[0]);
    kb_obj_int(prm, "k", a->shape[1]);
    kb_obj_int(prm, "n", b->shape[1]);
    kb_obj_str(prm, "src_a_space", "tcm");
    kb_obj_str(prm, "src_b_space", "tcm");
    kb_obj_str(prm, "dst_space", "tcm");
    kb_oplog_add(log, start, end, comp, "gemm", names[a->dtype], prm);
}

/* On the accel slot (shared with PE_MATH). */
static kb_pe_step gemm(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_pe *p = op->pe;
    const kb_pe_operands *in = KB_PE_ARGS(op, kb_pe_operands);
    const kb_tview *a = &in->in[0].v;
    int64_t n = in->in[1].v.shape[1];
    kb_time start, end = kb_pe_take(&p->accel_free, now, kb_pe_gemm_ps(p, a->shape[0], a->shape[1], n, a->dtype),
                                    &start);
    kb_targ args[3] = {{"m", NULL, a->shape[0]}, {"k", NULL, a->shape[1]}, {"n", NULL, n}};
    kb_pe_span(p, p->gemm, "gemm", start, end, args, 3);
    op->compute_ps += end - start;
    log_gemm(op, start, end);
    *at = end;
    return KB_PE_AT;
}

/* Data mode: the product, written as the command ends. */
static void land(kb_pe_op *op)
{
    kb_memstore *m = kb_fabric_memstore(op->pe->fab);
    const kb_pe_operands *in = KB_PE_ARGS(op, kb_pe_operands);
    const kb_tview *a = &in->in[0].v, *b = &in->in[1].v;
    int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
    double *x = kb_pe_view_values(m, a), *y = kb_pe_view_values(m, b);
    double *z = kb_xmalloc((size_t)(M * N + 1) * sizeof *z);
    if (kb_dtype_is_float(a->dtype)) {
        float *fa = kb_xmalloc((size_t)(M * K + 1) * sizeof *fa);
        float *fb = kb_xmalloc((size_t)(K * N + 1) * sizeof *fb);
        float *fc = kb_xmalloc((size_t)(M * N + 1) * sizeof *fc);
        kb_compute_store_run(KB_F32, fa, 1, x, M * K);
        kb_compute_store_run(KB_F32, fb, 1, y, K * N);
        kb_compute_matmul_f32(fa, fb, fc, M, K, N);
        kb_compute_load_run(KB_F32, fc, 1, z, M * N);
        free(fa);
        free(fb);
        free(fc);
    } else {
        kb_compute_matmul_f64(x, y, z, M, K, N);
    }
    kb_tview_write(m, &op->out, z);
    free(x);
    free(y);
    free(z);
}

static const kb_pe_cmd dot_cmd = {
    .name = "dot", .stages = {kb_pe_stage_dispatch, kb_pe_stage_fetch, gemm, kb_pe_stage_writeback}, .land = land};

bool kb_pe_op_dot(kb_pe_op *op, const kb_tview *a, const kb_tview *b, const kb_dtype *out_dtype, char **err)
{
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) {
        char sa[96], sb[96];
        kb_shape_str(a->ndim, a->shape, sa, sizeof sa);
        kb_shape_str(b->ndim, b->shape, sb, sizeof sb);
        if (a->ndim != 2 || b->ndim != 2)
            return kb_pe_fail(err, "tl.dot: operands must be 2-D (got shapes %s and %s)", sa, sb);
        return kb_pe_fail(err, "tl.dot: shapes %s and %s cannot be multiplied (%d != %d)", sa, sb, (int)a->shape[1],
                          (int)b->shape[0]);
    }
    if (a->dtype != b->dtype)
        return kb_pe_fail(err, "tl.dot: operand dtypes differ (%s and %s)", kb_dtype_name(a->dtype),
                          kb_dtype_name(b->dtype));
    op->cmd = &dot_cmd;
    kb_pe_operands *in = KB_PE_ARGS(op, kb_pe_operands);
    in->nin = 2;
    in->in[0].v = *a;
    in->in[1].v = *b;
    op->out.dtype = out_dtype ? *out_dtype : a->dtype;
    op->out.ndim = 2;
    op->out.shape[0] = a->shape[0];
    op->out.shape[1] = b->shape[1];
    return true;
}
