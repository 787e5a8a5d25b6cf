/* PE_MATH (pe.h): a vector unit of simd_bytes per instruction
 * (docs/pe-model.md). The formula counts vectors by op class; a latency
 * model may replace it ({op = NAME, elements, outputs, dtype_bytes}). The
 * math command (tl.exp, tl.add, tl.sum ...) is dispatch -> fetch -> MATH ->
 * write back; its MATH stage is on the accel slot, a slice (the op's name,
 * with elements) and a `math` op-log record; with data, its result is
 * computed in double and rounded once to its dtype when the command ends.
 * Its builder holds the rules of the math calls: arity, broadcasting,
 * axes, the result's dtype. */
#include "comp/pe/engines.h"

#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* vectors = ceil(elems / lanes), lanes = simd_bytes / itemsize; simple ops
 * 1 cycle per vector, transcendental ones transcendental_cycles,
 * reductions 1 per vector plus ceil(log2(lanes)) per output, softmax 3 + 2
 * x transcendental per vector. */
static double math_cycles(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t)
{
    int64_t lanes = m->simd_bytes / (int64_t)kb_dtype_size(t);
    if (lanes < 1)
        lanes = 1;
    double vectors = (double)cdiv(elems > 0 ? elems : 0, lanes);
    const kb_mop_info *info = kb_mop_info_of(op);
    switch (info->cost) {
    case KB_COST_SIMPLE: return vectors;
    case KB_COST_TRANSCENDENTAL: return vectors * m->transcendental_cycles;
    case KB_COST_REDUCE: return vectors + ceil(log2((double)lanes)) * (double)outs;
    case KB_COST_SOFTMAX: return vectors * (3.0 + 2.0 * m->transcendental_cycles);
    }
    return vectors;
}

kb_time kb_math_ps(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t)
{
    return m->overhead_ps + kb_cycles_ps(math_cycles(m, op, elems, outs, t), m->clock_ghz);
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

/* The op-log record (its fields: docs/tl.md, "Trace and op log"). */
static void log_math(kb_pe_op *op, kb_time start, kb_time end)
{
    const kb_pe_operands *args = KB_PE_ARGS(op, kb_pe_operands);
    kb_pe *p = op->pe;
    const char *comp = kb_topo_node(kb_fabric_topo(p->fab), p->math)->id;
    const char *name = kb_mop_info_of(args->mop)->name;
    kb_oplog *log = kb_fabric_oplog(p->fab);
    if (!kb_oplog_keeps(log)) {
        kb_oplog_add(log, start, end, comp, "math", name, NULL);
        return;
    }
    kb_val *prm = kb_val_obj();
    kb_val *addrs = kb_val_arr(), *shapes = kb_val_arr(), *spaces = kb_val_arr(), *dtypes = kb_val_arr();
    for (int i = 0; i < args->nin; i++) {
        const kb_pe_operand *o = &args->in[i];
        if (o->is_imm) { /* an immediate: no address */
            kb_arr_push(addrs, kb_val_int(-1));
            kb_arr_push(shapes, kb_val_arr());
            kb_arr_push(spaces, kb_val_str("imm"));
            kb_arr_push(dtypes, kb_val_str(kb_dtype_name(op->out.dtype)));
            continue;
        }
        kb_arr_push(addrs, kb_val_int((int64_t)o->v.offset));
        kb_arr_push(shapes, kb_pe_shape_val(&o->v));
        kb_arr_push(spaces, kb_val_str("tcm"));
        kb_arr_push(dtypes, kb_val_str(kb_dtype_name(o->v.dtype)));
    }
    kb_obj_put(prm, "input_addrs", addrs);
    kb_obj_put(prm, "input_shapes", shapes);
    kb_obj_put(prm, "input_spaces", spaces);
    kb_obj_put(prm, "input_dtypes", dtypes);
    kb_obj_int(prm, "dst_addr", (int64_t)op->out.offset);
    kb_obj_str(prm, "dst_space", "tcm");
    kb_obj_put(prm, "shape_out", kb_pe_shape_val(&op->out));
    kb_obj_str(prm, "dtype", kb_dtype_name(op->out.dtype));
    if (kb_mop_info_of(args->mop)->axis)
        kb_obj_int(prm, "axis", args->axis);
    kb_oplog_add(log, start, end, comp, "math", name, prm);
}

/* On the accel slot (shared with PE_GEMM). */
static kb_pe_step vector(kb_pe_op *op, kb_time now, kb_time *at)
{
    const kb_pe_operands *args = KB_PE_ARGS(op, kb_pe_operands);
    kb_pe *p = op->pe;
    /* elements processed: the input of an axis op, else the (broadcast) output */
    const kb_tview *v = kb_mop_info_of(args->mop)->axis ? &args->in[0].v : &op->out;
    kb_time start, end = kb_pe_take(&p->accel_free, now,
                                    kb_pe_math_ps(p, args->mop, kb_tview_numel(v), kb_tview_numel(&op->out), v->dtype),
                                    &start);
    kb_targ a = {"elements", NULL, kb_tview_numel(v)};
    kb_pe_span(p, p->math, kb_mop_info_of(args->mop)->name, start, end, &a, 1);
    op->compute_ps += end - start;
    log_math(op, start, end);
    *at = end;
    return KB_PE_AT;
}

/* Operand i broadcast to the output's shape. */
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

/* Data mode: the result, in double rounded once to its dtype, written as
 * the command ends. */
static void land(kb_pe_op *op)
{
    const kb_pe_operands *args = KB_PE_ARGS(op, kb_pe_operands);
    kb_memstore *m = kb_fabric_memstore(op->pe->fab);
    const kb_mop_info *info = kb_mop_info_of(args->mop);
    int64_t n = kb_tview_numel(&op->out);
    double *y = kb_xmalloc((size_t)(n ? n : 1) * sizeof *y);
    if (info->axis) {
        const kb_tview *v = &args->in[0].v;
        int64_t outer = 1, inner = 1, len = v->shape[args->axis];
        for (int d = 0; d < args->axis; d++)
            outer *= v->shape[d];
        for (int d = args->axis + 1; d < v->ndim; d++)
            inner *= v->shape[d];
        double *x = kb_pe_view_values(m, v);
        kb_compute_axis(args->mop, x, y, outer, len, inner);
        free(x);
    } else {
        double *x[3] = {NULL, NULL, NULL};
        for (int i = 0; i < args->nin; i++)
            x[i] = operand_values(m, &args->in[i], &op->out);
        kb_compute_ewise(args->mop, (const double *const[]){x[0], x[1], x[2]}, y, n);
        for (int i = 0; i < args->nin; i++)
            free(x[i]);
    }
    kb_tview_write(m, &op->out, y);
    free(y);
}

static const kb_pe_cmd math_cmd = {
    .name = "math", .stages = {kb_pe_stage_dispatch, kb_pe_stage_fetch, vector, kb_pe_stage_writeback}, .land = land};

kb_dtype kb_pe_common_dtype(kb_dtype a, kb_dtype b)
{
    if (a == b)
        return a;
    return kb_dtype_is_float(a) || kb_dtype_is_float(b) ? KB_F32 : KB_I32;
}

/* "tl.add: shapes [2, 3] and [4] cannot be broadcast together": the shapes
 * of the tensors among in[0 .. last]. */
static bool broadcast_error(const char *name, const kb_pe_operand *in, int last, char **err)
{
    char seen[256] = "", s[96];
    for (int i = 0; i <= last; i++) {
        if (in[i].is_imm)
            continue;
        size_t len = strlen(seen);
        snprintf(seen + len, sizeof seen - len, "%s%s", len ? " and " : "",
                 kb_shape_str(in[i].v.ndim, in[i].v.shape, s, sizeof s));
    }
    return kb_pe_fail(err, "tl.%s: shapes %s cannot be broadcast together", name, seen);
}

/* The axis of op's tensor operand: no axis, every element of a contiguous
 * view as 1-D (reductions); else *axis, softmax's default the last. Sets
 * the result's shape (nd, shape: the operand's so far). */
static bool math_axis(kb_pe_operands *args, const char *name, const int64_t *axis, int *nd, int64_t *shape,
                      char **err)
{
    kb_tview *x = &args->in[0].v;
    if (!axis && args->mop != KB_OP_SOFTMAX) {
        if (!kb_tview_contiguous(x))
            return kb_pe_fail(err, "tl.%s: reducing every element of a transposed view: give an axis", name);
        int64_t n = kb_tview_numel(x);
        kb_tview_init(x, x->domain, x->offset, x->dtype, 1, &n);
        args->axis = 0;
        *nd = 1;
        shape[0] = 1;
        return true;
    }
    int64_t ax = axis ? *axis : -1;
    if (ax < -x->ndim || ax >= x->ndim)
        return kb_pe_fail(err, "tl.%s: axis %lld is out of range for %d dimension(s)", name, (long long)ax, x->ndim);
    args->axis = (int)(ax < 0 ? ax + x->ndim : ax);
    if (args->mop != KB_OP_SOFTMAX)
        shape[args->axis] = 1;
    return true;
}

bool kb_pe_op_math(kb_pe_op *op, kb_mop mop, int nin, const kb_pe_operand *in, const int64_t *axis, char **err)
{
    const kb_mop_info *info = kb_mop_info_of(mop);
    if (nin != info->arity)
        return kb_pe_fail(err, "tl.%s: takes %d operand(s), got %d", info->name, info->arity, nin);
    op->cmd = &math_cmd;
    kb_pe_operands *args = KB_PE_ARGS(op, kb_pe_operands);
    args->mop = mop;
    args->nin = nin;
    int nd = 0;
    int64_t shape[KB_VIEW_MAXDIM];
    bool have_dtype = false;
    kb_dtype dt = KB_F32;
    for (int i = 0; i < nin; i++) {
        args->in[i] = in[i];
        if (in[i].is_imm) {
            if (info->axis)
                return kb_pe_fail(err, "tl.%s: the operand must be a tensor handle", info->name);
            continue;
        }
        const kb_tview *v = &in[i].v;
        if (nd == 0) {
            nd = v->ndim;
            memcpy(shape, v->shape, (size_t)nd * sizeof *shape);
        } else if (!kb_broadcast_shapes(nd, shape, v->ndim, v->shape, &nd, shape)) {
            return broadcast_error(info->name, in, i, err);
        }
        if (mop == KB_OP_WHERE && i == 0)
            continue; /* the condition does not set the result dtype */
        dt = have_dtype ? kb_pe_common_dtype(dt, v->dtype) : v->dtype;
        have_dtype = true;
    }
    if (nd == 0)
        return kb_pe_fail(err, "tl.%s: at least one operand must be a tensor handle", info->name);
    if (!have_dtype) /* where(cond, x, y) with two immediates: cond's float dtype, else f32 */
        dt = kb_dtype_is_float(in[0].v.dtype) ? in[0].v.dtype : KB_F32;
    if (info->axis && !math_axis(args, info->name, axis, &nd, shape, err))
        return false;
    op->out.dtype = dt;
    op->out.ndim = nd;
    memcpy(op->out.shape, shape, (size_t)nd * sizeof *shape);
    return true;
}

bool kb_pe_op_cast(kb_pe_op *op, const kb_pe_operand *x, kb_dtype dtype, char **err)
{
    if (x->is_imm)
        return kb_pe_fail(err, "tl.cast: the operand must be a tensor handle");
    if (!kb_pe_op_math(op, KB_OP_CAST, 1, x, NULL, err))
        return false;
    op->out.dtype = dtype;
    return true;
}
