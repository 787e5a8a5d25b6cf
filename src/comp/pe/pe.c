/* A PE's engines and the stages of kernel commands (pe.h). The PE state
 * lives in its PE_CPU component (builtin.pe_cpu), which also terminates
 * control messages like any store-and-forward node. */
#include "comp/pe/pe.h"

#include "comp/pe/pipeline.h"

#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the PE state ---- */

static uint32_t sibling(const kb_topo *t, const kb_node *cpu, const char *kind, bool *ok)
{
    int64_t n = kb_topo_pe_node(t, cpu->sip, cpu->cube, cpu->pe, kind);
    if (n < 0)
        *ok = false;
    return n < 0 ? 0 : (uint32_t)n;
}

static double attr(const kb_topo *t, uint32_t node, const char *name)
{
    return kb_spec_attr(kb_topo_node(t, node)->spec, name);
}

static kb_time attr_ps(const kb_topo *t, uint32_t node, const char *name)
{
    return (kb_time)llround(attr(t, node, name) * 1000.0);
}

/* Attributes an implementation does not declare read as 0 (a Lua or other
 * implementation of a part): only builtin parts give engine parameters. */
static void pe_init(kb_comp *c)
{
    const kb_topo *t = kb_fabric_topo(c->fab);
    kb_pe *p = kb_xcalloc(1, sizeof *p);
    c->state = p;
    p->fab = c->fab;
    p->cpu = c->node;
    p->sip = c->n->sip;
    p->cube = c->n->cube;
    p->pe = c->n->pe;
    bool ok = true;
    p->sched = sibling(t, c->n, "pe_scheduler", &ok);
    p->dma = sibling(t, c->n, "pe_dma", &ok);
    p->fetch_store = sibling(t, c->n, "pe_fetch_store", &ok);
    p->gemm = sibling(t, c->n, "pe_gemm", &ok);
    p->math = sibling(t, c->n, "pe_math", &ok);
    p->tcm = sibling(t, c->n, "pe_tcm", &ok);
    p->mmu = sibling(t, c->n, "pe_mmu", &ok);
    if (!ok) { /* the builder always makes all nine parts */
        free(p);
        c->state = NULL;
        return;
    }
    p->cpu_clock_ghz = attr(t, p->cpu, "clock_ghz");
    p->dispatch_cycles = (int64_t)attr(t, p->cpu, "dispatch_cycles");
    p->scratch_bytes = (uint64_t)llround(attr(t, p->cpu, "scratch_kb") * 1024.0);
    p->cpu_ps = c->overhead_ps;
    p->sched_ps = attr_ps(t, p->sched, "overhead_ns");
    p->fs_ps = attr_ps(t, p->fetch_store, "overhead_ns");
    p->tlb_ps = attr_ps(t, p->mmu, "tlb_overhead_ns");
    p->tcm_bw[0] = attr(t, p->tcm, "read_bw_gbs");
    p->tcm_bw[1] = attr(t, p->tcm, "write_bw_gbs");
    p->gemm_m = (kb_gemm_model){attr(t, p->gemm, "clock_ghz"), (int64_t)attr(t, p->gemm, "mac_rows"),
                                (int64_t)attr(t, p->gemm, "mac_cols"), (int64_t)attr(t, p->gemm, "mac_depth"),
                                attr(t, p->gemm, "f32_slowdown"), attr_ps(t, p->gemm, "overhead_ns")};
    p->math_m = (kb_math_model){attr(t, p->math, "clock_ghz"), (int64_t)attr(t, p->math, "simd_bytes"),
                                attr(t, p->math, "transcendental_cycles"), attr_ps(t, p->math, "overhead_ns")};
}

static void pe_fini(kb_comp *c)
{
    if (c->state)
        kb_pipe_free(c->state);
    free(c->state);
}

const kb_comp_ops kb_pe_cpu_ops = {
    .flit_aware = false, .init = pe_init, .fini = pe_fini, .on_txn = kb_store_forward_txn};

/* PE_MMU (builtin.pe_mmu): terminates map messages like any
 * store-and-forward node and holds its PE's page table. */
static void mmu_init(kb_comp *c)
{
    kb_pagetable *pt = kb_xmalloc(sizeof *pt);
    kb_pt_init(pt, (uint64_t)kb_spec_attr(c->n->spec, "page_size"));
    c->state = pt;
}

static void mmu_fini(kb_comp *c)
{
    kb_pt_free(c->state);
    free(c->state);
}

const kb_comp_ops kb_pe_mmu_ops = {
    .flit_aware = false, .init = mmu_init, .fini = mmu_fini, .on_txn = kb_store_forward_txn};

kb_pagetable *kb_pe_pagetable(kb_pe *p)
{
    kb_comp *c = kb_fabric_comp(p->fab, p->mmu);
    return c->ops == &kb_pe_mmu_ops ? c->state : NULL;
}

kb_pe *kb_pe_of(kb_fabric *f, uint32_t node)
{
    kb_comp *c = kb_fabric_comp(f, node);
    return c->ops == &kb_pe_cpu_ops ? c->state : NULL;
}

kb_pe *kb_pe_find(kb_fabric *f, int sip, int cube, int pe, char **err)
{
    const kb_topo *t = kb_fabric_topo(f);
    int64_t n = kb_topo_pe_node(t, sip, cube, pe, "pe_cpu");
    kb_pe *p = n < 0 ? NULL : kb_pe_of(f, (uint32_t)n);
    if (!p) {
        *err = n < 0 ? kb_asprintf("no PE sip%d.cube%d.pe%d in topology %s", sip, cube, pe, kb_topo_name(t))
                     : kb_asprintf("%s is not a builtin.pe_cpu: it cannot run kernels", kb_topo_node(t, (uint32_t)n)->id);
        return NULL;
    }
    /* The engines are driven by the PE's commands, not by fabric traffic:
     * another implementation in their place would never be asked. */
    const uint32_t parts[] = {p->sched, p->fetch_store, p->gemm, p->math, p->tcm};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        kb_comp *c = kb_fabric_comp(f, parts[i]);
        if (c->ops != &kb_pe_part_ops) {
            *err = kb_asprintf("%s is %s: a PE engine must be its builtin (the PE's commands drive it); "
                               "change its timing with a latency_model instead (docs/extending.md)",
                               c->n->id, c->n->spec->impl->name);
            return NULL;
        }
    }
    return p;
}

/* ---- engine times ---- */

kb_time kb_pe_tcm_ps(kb_pe *p, int write, uint64_t bytes)
{
    kb_time t = kb_bw_ps(bytes, p->tcm_bw[write]);
    kb_comp *c = kb_fabric_comp(p->fab, p->tcm);
    if (!c->latency)
        return t;
    kb_lat_query q = {.op = write ? "write" : "read", .builtin_ps = t};
    kb_lat_param(&q, "bytes", (double)bytes);
    return kb_comp_latency(c, &q);
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

kb_time kb_pe_math_ps(kb_pe *p, kb_mop op, int64_t elems, int64_t outs, kb_dtype dt)
{
    kb_time t = kb_math_ps(&p->math_m, op, elems, outs, dt);
    kb_comp *c = kb_fabric_comp(p->fab, p->math);
    if (!c->latency)
        return t;
    kb_lat_query q = {.op = kb_mop_info_of(op)->name, .builtin_ps = t};
    kb_lat_param(&q, "elements", (double)elems);
    kb_lat_param(&q, "outputs", (double)outs);
    kb_lat_param(&q, "dtype_bytes", (double)kb_dtype_size(dt));
    return kb_comp_latency(c, &q);
}

/* ---- stages ---- */

enum stage {
    S_DISPATCH, /* PE_CPU issue (dispatch cycles) and PE_SCHEDULER dispatch */
    S_MMU,      /* PE_MMU translation cost */
    S_DMA_READ, S_DMA_WRITE,
    S_TCM_WRITE, S_TCM_READ, /* a load's landing, a store's read-out */
    S_FETCH,    /* PE_FETCH_STORE: operands TCM -> register file */
    S_COMPUTE,  /* PE_GEMM or PE_MATH on the accel slot */
    S_WRITEBACK,/* PE_FETCH_STORE: result register file -> TCM */
    S_CYCLES,   /* tl.cycles: PE_CPU busy */
    S_END
};

static const uint8_t plans[][5] = {
    [KB_PE_LOAD] = {S_DISPATCH, S_MMU, S_DMA_READ, S_TCM_WRITE, S_END},
    [KB_PE_STORE] = {S_DISPATCH, S_MMU, S_TCM_READ, S_DMA_WRITE, S_END},
    [KB_PE_GEMM] = {S_DISPATCH, S_FETCH, S_COMPUTE, S_WRITEBACK, S_END},
    [KB_PE_MATH] = {S_DISPATCH, S_FETCH, S_COMPUTE, S_WRITEBACK, S_END},
    [KB_PE_CYCLES] = {S_DISPATCH, S_CYCLES, S_END, S_END, S_END},
};

static kb_sim *sim_of(const kb_pe_op *op) { return kb_fabric_sim(op->pe->fab); }

static void span_args(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, const kb_targ *args,
                      size_t nargs)
{
    kb_comp_busy(kb_fabric_comp(p->fab, node), start, end);
    kb_tracer *tr = kb_fabric_tracer(p->fab);
    if (tr)
        kb_trace_span(tr, kb_fabric_track(p->fab, node), name, start, end, args, nargs, 0, KB_FLOW_NONE);
}

/* A stage moving n bytes: the slice says how many. */
static void span(kb_pe *p, uint32_t node, const char *name, kb_time start, kb_time end, uint64_t n)
{
    kb_targ a = {"bytes", NULL, (int64_t)n};
    span_args(p, node, name, start, end, &a, 1);
}

static uint64_t operand_bytes(const kb_pe_op *op)
{
    uint64_t n = 0;
    for (int i = 0; i < op->nin; i++)
        if (!op->in[i].is_imm)
            n += kb_tview_nbytes(&op->in[i].v);
    return n;
}

static void run(kb_pe_op *op);

static void resume(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_pe_op *op = arg;
    op->stage++;
    run(op);
}

static void after(kb_pe_op *op, kb_time end)
{
    kb_sim_at(sim_of(op), end, KB_PRIO_NORMAL, resume, op);
}

static void dma_done(kb_txn *t, void *arg)
{
    kb_pe_op *op = arg;
    kb_time now = kb_sim_now(sim_of(op));
    op->dma_ps += now - op->t_stage;
    if (op->kind == KB_PE_LOAD && t->data) {
        op->buf = kb_xmalloc(t->req_bytes);
        memcpy(op->buf, kb_data_buffer_bytes(t->data), t->req_bytes);
    }
    after(op, now);
}

static void fail(kb_pe_op *op, char *err)
{
    op->error = err;
    op->stage = (int)(sizeof plans[0] - 1); /* S_END */
    run(op);
}

/* ---- data mode: GEMM and MATH results ---- */

static double *read_view(const kb_memstore *m, const kb_tview *v)
{
    int64_t n = kb_tview_numel(v);
    double *x = kb_xmalloc((size_t)(n ? n : 1) * sizeof *x);
    kb_tview_read(m, v, x);
    return x;
}

static void compute_gemm(kb_pe_op *op, kb_memstore *m)
{
    const kb_tview *a = &op->in[0].v, *b = &op->in[1].v;
    int64_t M = a->shape[0], K = a->shape[1], N = b->shape[1];
    double *x = read_view(m, a), *y = read_view(m, b);
    double *z = kb_xmalloc((size_t)(M * N + 1) * sizeof *z);
    if (kb_dtype_is_float(a->dtype)) {
        float *fa = kb_xmalloc((size_t)(M * K + 1) * sizeof *fa);
        float *fb = kb_xmalloc((size_t)(K * N + 1) * sizeof *fb);
        float *fc = kb_xmalloc((size_t)(M * N + 1) * sizeof *fc);
        for (int64_t i = 0; i < M * K; i++)
            fa[i] = (float)x[i];
        for (int64_t i = 0; i < K * N; i++)
            fb[i] = (float)y[i];
        kb_compute_matmul_f32(fa, fb, fc, M, K, N);
        for (int64_t i = 0; i < M * N; i++)
            z[i] = fc[i];
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

/* Operands broadcast to the output's shape (math ops). */
static double *operand_values(kb_memstore *m, const kb_pe_operand *o, const kb_tview *out)
{
    int64_t n = kb_tview_numel(out);
    double *x = kb_xmalloc((size_t)(n ? n : 1) * sizeof *x);
    if (o->is_imm) {
        for (int64_t i = 0; i < n; i++)
            x[i] = o->imm;
        return x;
    }
    kb_tview b;
    kb_tview_broadcast(&o->v, out->ndim, out->shape, &b); /* checked when the op was made */
    kb_tview_read(m, &b, x);
    return x;
}

static void compute_math(kb_pe_op *op, kb_memstore *m)
{
    const kb_mop_info *info = kb_mop_info_of(op->mop);
    int64_t n = kb_tview_numel(&op->out);
    double *y = kb_xmalloc((size_t)(n ? n : 1) * sizeof *y);
    if (info->axis) {
        const kb_tview *v = &op->in[0].v;
        int64_t outer = 1, inner = 1, len = v->shape[op->axis];
        for (int d = 0; d < op->axis; d++)
            outer *= v->shape[d];
        for (int d = op->axis + 1; d < v->ndim; d++)
            inner *= v->shape[d];
        double *x = read_view(m, v);
        kb_compute_axis(op->mop, x, y, outer, len, inner);
        free(x);
    } else {
        double *x[3] = {NULL, NULL, NULL};
        for (int i = 0; i < op->nin; i++)
            x[i] = operand_values(m, &op->in[i], &op->out);
        if (info->arity == 1)
            kb_compute_unary(op->mop, x[0], y, n);
        else if (info->arity == 2)
            kb_compute_binary(op->mop, x[0], x[1], y, n);
        else
            kb_compute_ternary(op->mop, x[0], x[1], x[2], y, n);
        for (int i = 0; i < op->nin; i++)
            free(x[i]);
    }
    kb_tview_write(m, &op->out, y);
    free(y);
}

static void land_data(kb_pe_op *op)
{
    kb_memstore *m = kb_fabric_memstore(op->pe->fab);
    if (op->kind == KB_PE_LOAD && op->buf)
        kb_memstore_write(m, op->tcm.domain, op->tcm.offset, op->buf, kb_tview_nbytes(&op->tcm));
    else if (op->kind == KB_PE_GEMM)
        compute_gemm(op, m);
    else if (op->kind == KB_PE_MATH)
        compute_math(op, m);
}

/* ---- op log ---- */

static kb_val *shape_val(const kb_tview *v)
{
    kb_val *a = kb_val_arr();
    for (int d = 0; d < v->ndim; d++)
        kb_arr_push(a, kb_val_int(v->shape[d]));
    return a;
}

static const char *const gemm_names[KB_NDTYPES] = {
    [KB_F32] = "gemm_f32", [KB_F16] = "gemm_f16", [KB_BF16] = "gemm_bf16", [KB_I32] = "gemm_i32",
    [KB_I16] = "gemm_i16", [KB_I8] = "gemm_i8",   [KB_U8] = "gemm_u8",     [KB_BOOL] = "gemm_bool"};

static void log_compute(kb_pe_op *op, kb_time start, kb_time end)
{
    kb_pe *p = op->pe;
    uint32_t node = op->kind == KB_PE_GEMM ? p->gemm : p->math;
    const char *comp = kb_topo_node(kb_fabric_topo(p->fab), node)->id;
    const char *kind = op->kind == KB_PE_GEMM ? "gemm" : "math";
    const char *name = op->kind == KB_PE_GEMM ? gemm_names[op->in[0].v.dtype] : kb_mop_info_of(op->mop)->name;
    kb_oplog *log = kb_fabric_oplog(p->fab);
    if (!kb_oplog_keeps(log)) {
        kb_oplog_add(log, start, end, comp, kind, name, NULL);
        return;
    }
    kb_val *prm = kb_val_obj();
    if (op->kind == KB_PE_GEMM) {
        const kb_tview *a = &op->in[0].v, *b = &op->in[1].v;
        kb_obj_int(prm, "src_a_addr", (int64_t)a->offset);
        kb_obj_int(prm, "src_b_addr", (int64_t)b->offset);
        kb_obj_int(prm, "dst_addr", (int64_t)op->out.offset);
        kb_obj_put(prm, "shape_a", shape_val(a));
        kb_obj_put(prm, "shape_b", shape_val(b));
        kb_obj_put(prm, "shape_out", shape_val(&op->out));
        kb_obj_str(prm, "dtype_in", kb_dtype_name(a->dtype));
        kb_obj_str(prm, "dtype_out", kb_dtype_name(op->out.dtype));
        kb_obj_int(prm, "m", a->shape[0]);
        kb_obj_int(prm, "k", a->shape[1]);
        kb_obj_int(prm, "n", b->shape[1]);
        kb_obj_str(prm, "src_a_space", "tcm");
        kb_obj_str(prm, "src_b_space", "tcm");
        kb_obj_str(prm, "dst_space", "tcm");
    } else {
        kb_val *addrs = kb_val_arr(), *shapes = kb_val_arr(), *spaces = kb_val_arr(), *dtypes = kb_val_arr();
        for (int i = 0; i < op->nin; i++) {
            const kb_pe_operand *o = &op->in[i];
            if (o->is_imm) { /* an immediate: no address */
                kb_arr_push(addrs, kb_val_int(-1));
                kb_arr_push(shapes, kb_val_arr());
                kb_arr_push(spaces, kb_val_str("imm"));
                kb_arr_push(dtypes, kb_val_str(kb_dtype_name(op->out.dtype)));
                continue;
            }
            kb_arr_push(addrs, kb_val_int((int64_t)o->v.offset));
            kb_arr_push(shapes, shape_val(&o->v));
            kb_arr_push(spaces, kb_val_str("tcm"));
            kb_arr_push(dtypes, kb_val_str(kb_dtype_name(o->v.dtype)));
        }
        kb_obj_put(prm, "input_addrs", addrs);
        kb_obj_put(prm, "input_shapes", shapes);
        kb_obj_put(prm, "input_spaces", spaces);
        kb_obj_put(prm, "input_dtypes", dtypes);
        kb_obj_int(prm, "dst_addr", (int64_t)op->out.offset);
        kb_obj_str(prm, "dst_space", "tcm");
        kb_obj_put(prm, "shape_out", shape_val(&op->out));
        kb_obj_str(prm, "dtype", kb_dtype_name(op->out.dtype));
        if (kb_mop_info_of(op->mop)->axis)
            kb_obj_int(prm, "axis", op->axis);
    }
    kb_oplog_add(log, start, end, comp, kind, name, prm);
}

static kb_time compute_ps(const kb_pe_op *op)
{
    kb_pe *p = op->pe;
    if (op->kind == KB_PE_GEMM) {
        const kb_tview *a = &op->in[0].v;
        return kb_pe_gemm_ps(p, a->shape[0], a->shape[1], op->in[1].v.shape[1], a->dtype);
    }
    /* elements processed: the input of an axis op, else the (broadcast) output */
    const kb_tview *v = kb_mop_info_of(op->mop)->axis ? &op->in[0].v : &op->out;
    int64_t outs = kb_tview_numel(&op->out);
    return kb_pe_math_ps(p, op->mop, kb_tview_numel(v), outs, v->dtype);
}

/* ---- the stage machine ---- */

static void run(kb_pe_op *op)
{
    kb_pe *p = op->pe;
    kb_sim *sim = sim_of(op);
    for (;;) {
        kb_time now = kb_sim_now(sim), start, end;
        op->t_stage = now;
        switch (plans[op->kind][op->stage]) {
        case S_DISPATCH: {
            kb_time cpu = kb_cycles_ps((double)p->dispatch_cycles, p->cpu_clock_ghz) + p->cpu_ps;
            end = now + cpu + p->sched_ps;
            if (p->sched_ps)
                span_args(p, p->sched, op->what, now + cpu, end, NULL, 0);
            if (end > now)
                return after(op, end);
            break;
        }
        case S_MMU:
            if (op->translated && p->tlb_ps) {
                span_args(p, p->mmu, "translate", now, now + p->tlb_ps, NULL, 0);
                return after(op, now + p->tlb_ps);
            }
            break;
        case S_DMA_READ:
        case S_DMA_WRITE: {
            bool write = plans[op->kind][op->stage] == S_DMA_WRITE;
            uint64_t n = kb_tview_nbytes(&op->tcm);
            kb_data *d = NULL;
            if (op->data) {
                d = kb_data_buffer(op->buf, n);
                free(op->buf);
                op->buf = NULL;
            }
            char *err = NULL;
            if (!kb_pe_dma_submit(p->fab, p->dma, write ? KB_MSG_DMA_WRITE : KB_MSG_DMA_READ, op->target,
                                  op->target_off, n, d, dma_done, op, NULL, &err))
                return fail(op, err);
            return;
        }
        case S_TCM_WRITE:
        case S_TCM_READ: {
            int w = plans[op->kind][op->stage] == S_TCM_WRITE;
            uint64_t n = kb_tview_nbytes(&op->tcm);
            end = kb_pe_take(&p->tcm_free[w], now, kb_pe_tcm_ps(p, w, n), &start);
            span(p, p->tcm, w ? "write" : "read", start, end, n);
            if (op->data && !w) { /* a store's bytes leave TCM now (a load's land at the end) */
                op->buf = kb_xmalloc(n ? n : 1);
                kb_memstore_read(kb_fabric_memstore(p->fab), op->tcm.domain, op->tcm.offset, op->buf, n);
            }
            return after(op, end);
        }
        case S_FETCH:
        case S_WRITEBACK: {
            int w = plans[op->kind][op->stage] == S_WRITEBACK;
            uint64_t n = w ? kb_tview_nbytes(&op->out) : operand_bytes(op);
            end = kb_pe_take(&p->tcm_free[w], now + p->fs_ps, kb_pe_tcm_ps(p, w, n), &start);
            span(p, p->fetch_store, w ? "store" : "fetch", now, end, n);
            span(p, p->tcm, w ? "write" : "read", start, end, n);
            return after(op, end);
        }
        case S_COMPUTE: {
            end = kb_pe_take(&p->accel_free, now, compute_ps(op), &start);
            if (op->kind == KB_PE_GEMM) {
                kb_targ a[3] = {{"m", NULL, op->in[0].v.shape[0]}, {"k", NULL, op->in[0].v.shape[1]},
                                {"n", NULL, op->in[1].v.shape[1]}};
                span_args(p, p->gemm, "gemm", start, end, a, 3);
            } else {
                kb_targ a = {"elements", NULL, kb_tview_numel(kb_mop_info_of(op->mop)->axis ? &op->in[0].v : &op->out)};
                span_args(p, p->math, kb_mop_info_of(op->mop)->name, start, end, &a, 1);
            }
            op->compute_ps += end - start;
            log_compute(op, start, end);
            return after(op, end);
        }
        case S_CYCLES:
            end = now + kb_cycles_ps((double)op->cycles, p->cpu_clock_ghz);
            if (end > now)
                return after(op, end);
            break;
        case S_END: {
            if (op->data && !op->error) /* results are in TCM as the last write ends */
                land_data(op);
            kb_tracer *tr = kb_fabric_tracer(p->fab);
            if (tr)
                kb_trace_span(tr, kb_fabric_track(p->fab, p->cpu), op->what, op->t_issue, now, NULL, 0, 0,
                              KB_FLOW_NONE);
            free(op->buf);
            op->buf = NULL;
            if (p->active == op)
                p->active = NULL;
            op->done(op);
            return;
        }
        }
        op->stage++;
    }
}

bool kb_pe_submit(kb_pe_op *op, char **err)
{
    (void)err; /* a failing stage (no route ...) completes the op with op->error set */
    op->t_issue = kb_sim_now(sim_of(op));
    op->dma_ps = op->compute_ps = 0;
    op->error = NULL;
    op->stage = 0;
    op->buf = NULL;
    op->submitting = true;
    op->pe->active = op;
    run(op);
    op->submitting = false;
    return true;
}
