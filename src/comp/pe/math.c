/* PE_MATH (pe.h): a vector unit of simd_bytes per instruction
 * (docs/pe-model.md). The formula counts vectors by op class; a latency
 * model may replace it ({op = NAME, elements, outputs, dtype_bytes}). A math
 * command is one stage on the accel slot, a slice (the op's name, with
 * elements) and a `math` op-log record; with data, its result is computed
 * in double and rounded once to its dtype when the command ends. */
#include "comp/pe/engines.h"

#include "core/util.h"

#include <math.h>
#include <stdlib.h>

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
    kb_pe *p = op->pe;
    const char *comp = kb_topo_node(kb_fabric_topo(p->fab), p->math)->id;
    const char *name = kb_mop_info_of(op->mop)->name;
    kb_oplog *log = kb_fabric_oplog(p->fab);
    if (!kb_oplog_keeps(log)) {
        kb_oplog_add(log, start, end, comp, "math", name, NULL);
        return;
    }
    kb_val *prm = kb_val_obj();
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
    if (kb_mop_info_of(op->mop)->axis)
        kb_obj_int(prm, "axis", op->axis);
    kb_oplog_add(log, start, end, comp, "math", name, prm);
}

kb_time kb_pe_math_stage(kb_pe_op *op, kb_time now)
{
    kb_pe *p = op->pe;
    /* elements processed: the input of an axis op, else the (broadcast) output */
    const kb_tview *v = kb_mop_info_of(op->mop)->axis ? &op->in[0].v : &op->out;
    kb_time start, end = kb_pe_take(&p->accel_free, now,
                                    kb_pe_math_ps(p, op->mop, kb_tview_numel(v), kb_tview_numel(&op->out), v->dtype),
                                    &start);
    kb_targ a = {"elements", NULL, kb_tview_numel(v)};
    kb_pe_span(p, p->math, kb_mop_info_of(op->mop)->name, start, end, &a, 1);
    op->compute_ps += end - start;
    log_math(op, start, end);
    return end;
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

void kb_pe_math_values(kb_pe_op *op)
{
    kb_memstore *m = kb_fabric_memstore(op->pe->fab);
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
        double *x = kb_pe_view_values(m, v);
        kb_compute_axis(op->mop, x, y, outer, len, inner);
        free(x);
    } else {
        double *x[3] = {NULL, NULL, NULL};
        for (int i = 0; i < op->nin; i++)
            x[i] = operand_values(m, &op->in[i], &op->out);
        kb_compute_ewise(op->mop, (const double *const[]){x[0], x[1], x[2]}, y, n);
        for (int i = 0; i < op->nin; i++)
            free(x[i]);
    }
    kb_tview_write(m, &op->out, y);
    free(y);
}
