/* Building commands and composites (pe.h): the rules of each tl call on
 * plain C values, so that a binding only converts its language's values
 * and a C driver gets the same checks and messages. Results get their
 * dtype and shape here, their place in the kernel's scratch. These run on
 * every tl call: nothing is allocated or formatted unless there is an
 * error to report. */
#include "comp/pe/pe.h"

#include "comp/pe/engines.h"
#include "core/sim.h"
#include "core/util.h"

#include <stdarg.h>
#include <string.h>

static bool fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool fail(char **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    *err = kb_vasprintf(fmt, ap);
    va_end(ap);
    return false;
}

/* A result's dtype and shape; its place and strides come with its scratch. */
static void result(kb_tview *v, kb_dtype dt, int ndim, const int64_t *shape)
{
    v->dtype = dt;
    v->ndim = ndim;
    memcpy(v->shape, shape, (size_t)ndim * sizeof *shape);
}

/* ---- simple commands ---- */

void kb_pe_op_load(kb_pe_op *op, uint64_t va, kb_dtype dt, int ndim, const int64_t *shape)
{
    op->kind = KB_PE_LOAD;
    op->va = va;
    result(&op->tcm, dt, ndim, shape);
}

bool kb_pe_op_store(kb_pe_op *op, uint64_t va, const kb_tview *v, char **err)
{
    if (!kb_tview_contiguous(v))
        return fail(err, "tl.store: the handle is a transposed view (tl.trans); a store moves contiguous bytes: "
                         "compute a contiguous result first");
    op->kind = KB_PE_STORE;
    op->va = va;
    op->tcm = *v;
    return true;
}

bool kb_pe_op_cycles(kb_pe_op *op, int64_t n, char **err)
{
    if (n < 0)
        return fail(err, "tl.cycles: the count must be >= 0 (got %lld)", (long long)n);
    const kb_pe *p = op->pe;
    if (p && p->cpu_clock_ghz > 0) {
        /* the busy time, in ps, must end within int64 picoseconds */
        kb_time from = kb_pe_dispatched_at(p, kb_sim_now(kb_fabric_sim(p->fab)));
        double room = (double)(KB_TIME_MAX - from), ps = (double)n * 1000.0 / p->cpu_clock_ghz;
        if (!(ps < room)) {
            char t[KB_TIME_STRLEN];
            return fail(err, "tl.cycles: %lld cycles at %g GHz last %.6g ns, beyond the simulated range (int64 "
                             "picoseconds, up to t=9223372036854775.807 ns): from t=%s, about %.6g cycles at most",
                        (long long)n, p->cpu_clock_ghz, ps / 1000.0, kb_time_format(from, t),
                        room * p->cpu_clock_ghz / 1000.0);
        }
    }
    op->kind = KB_PE_CYCLES;
    op->cycles = n;
    return true;
}

bool kb_pe_op_dot(kb_pe_op *op, const kb_tview *a, const kb_tview *b, const kb_dtype *out_dtype, char **err)
{
    if (a->ndim != 2 || b->ndim != 2 || a->shape[1] != b->shape[0]) {
        char sa[96], sb[96];
        kb_shape_str(a->ndim, a->shape, sa, sizeof sa);
        kb_shape_str(b->ndim, b->shape, sb, sizeof sb);
        if (a->ndim != 2 || b->ndim != 2)
            return fail(err, "tl.dot: operands must be 2-D (got shapes %s and %s)", sa, sb);
        return fail(err, "tl.dot: shapes %s and %s cannot be multiplied (%d != %d)", sa, sb, (int)a->shape[1],
                    (int)b->shape[0]);
    }
    if (a->dtype != b->dtype)
        return fail(err, "tl.dot: operand dtypes differ (%s and %s)", kb_dtype_name(a->dtype),
                    kb_dtype_name(b->dtype));
    op->kind = KB_PE_GEMM;
    op->nin = 2;
    op->in[0].v = *a;
    op->in[1].v = *b;
    int64_t shape[2] = {a->shape[0], b->shape[1]};
    result(&op->out, out_dtype ? *out_dtype : a->dtype, 2, shape);
    return true;
}

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
    return fail(err, "tl.%s: shapes %s cannot be broadcast together", name, seen);
}

/* The axis of op's tensor operand: no axis, every element of a contiguous
 * view as 1-D (reductions); else *axis, softmax's default the last. Sets
 * the result's shape (nd, shape: the operand's so far). */
static bool math_axis(kb_pe_op *op, const char *name, const int64_t *axis, int *nd, int64_t *shape, char **err)
{
    kb_tview *x = &op->in[0].v;
    if (!axis && op->mop != KB_OP_SOFTMAX) {
        if (!kb_tview_contiguous(x))
            return fail(err, "tl.%s: reducing every element of a transposed view: give an axis", name);
        int64_t n = kb_tview_numel(x);
        kb_tview_init(x, x->domain, x->offset, x->dtype, 1, &n);
        op->axis = 0;
        *nd = 1;
        shape[0] = 1;
        return true;
    }
    int64_t ax = axis ? *axis : -1;
    if (ax < -x->ndim || ax >= x->ndim)
        return fail(err, "tl.%s: axis %lld is out of range for %d dimension(s)", name, (long long)ax, x->ndim);
    op->axis = (int)(ax < 0 ? ax + x->ndim : ax);
    if (op->mop != KB_OP_SOFTMAX)
        shape[op->axis] = 1;
    return true;
}

bool kb_pe_op_math(kb_pe_op *op, kb_mop mop, int nin, const kb_pe_operand *in, const int64_t *axis, char **err)
{
    const kb_mop_info *info = kb_mop_info_of(mop);
    if (nin != info->arity)
        return fail(err, "tl.%s: takes %d operand(s), got %d", info->name, info->arity, nin);
    op->kind = KB_PE_MATH;
    op->mop = mop;
    op->nin = nin;
    int nd = 0;
    int64_t shape[KB_VIEW_MAXDIM];
    bool have_dtype = false;
    kb_dtype dt = KB_F32;
    for (int i = 0; i < nin; i++) {
        op->in[i] = in[i];
        if (in[i].is_imm) {
            if (info->axis)
                return fail(err, "tl.%s: the operand must be a tensor handle", info->name);
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
        return fail(err, "tl.%s: at least one operand must be a tensor handle", info->name);
    if (!have_dtype) /* where(cond, x, y) with two immediates: cond's float dtype, else f32 */
        dt = kb_dtype_is_float(in[0].v.dtype) ? in[0].v.dtype : KB_F32;
    if (info->axis && !math_axis(op, info->name, axis, &nd, shape, err))
        return false;
    result(&op->out, dt, nd, shape);
    return true;
}

bool kb_pe_trans(const kb_tview *x, kb_tview *out, char **err)
{
    if (x->ndim < 2)
        return fail(err, "tl.trans: needs at least 2 dimensions (got %d)", x->ndim);
    *out = *x;
    int d = x->ndim;
    out->shape[d - 1] = x->shape[d - 2], out->stride[d - 1] = x->stride[d - 2];
    out->shape[d - 2] = x->shape[d - 1], out->stride[d - 2] = x->stride[d - 1];
    return true;
}

/* ---- composites ---- */

static bool operand(const kb_composite_arg *a, const char *name, kb_composite_operand *o, char **err)
{
    if (a->v.ndim != 2)
        return fail(err, "tl.composite: %s must be 2-D", name);
    uint64_t n;
    if (!kb_shape_nbytes(2, a->v.shape, kb_dtype_size(a->v.dtype), &n))
        return fail(err, "tl.composite: %s of shape [%lld, %lld] %s is larger than any memory (more than 2^46 bytes)",
                    name, (long long)a->v.shape[0], (long long)a->v.shape[1], kb_dtype_name(a->v.dtype));
    *o = (kb_composite_operand){.pinned = a->pinned, .rows = a->v.shape[0], .cols = a->v.shape[1], .dtype = a->v.dtype};
    if (a->pinned)
        o->v = a->v;
    else
        o->va = a->va;
    return true;
}

static bool shape_error(const char *what, const kb_composite_operand *a, const kb_composite_operand *b, char **err)
{
    return fail(err, "tl.composite: %s: shapes [%lld, %lld] and [%lld, %lld]", what, (long long)a->rows,
                (long long)a->cols, (long long)b->rows, (long long)b->cols);
}

/* What an epilogue's operand is to a tile of the [M, N] output: the whole
 * tile, a row of N per column, a column of M per row, or one value. */
static kb_epi_operand epi_operand_of(const kb_tview *v, int64_t M, int64_t N)
{
    int64_t r = v->ndim >= 2 ? v->shape[v->ndim - 2] : 1, c = v->shape[v->ndim - 1];
    if (r == M && c == N && M * N > 1)
        return KB_EPI_TILE;
    if (c == N && N > 1)
        return KB_EPI_COLS;
    if (r == M && M > 1)
        return KB_EPI_ROWS;
    return KB_EPI_NONE;
}

static bool epilogue(const kb_epilogue_arg *a, int i, kb_composite *c, char **err)
{
    int k = 0;
    while (k < KB_EPI_KINDS && (!a->op || strcmp(a->op, kb_epi_name((kb_epi_kind)k)) != 0))
        k++;
    if (k == KB_EPI_KINDS)
        return fail(err, "tl.composite: unknown epilogue op '%s'", a->op ? a->op : "?");
    kb_epilogue *e = &c->epi[i];
    e->kind = (kb_epi_kind)k;
    if (!a->scope || strcmp(a->scope, "output_tile") == 0)
        c->plan.scope[i] = KB_SCOPE_OUTPUT_TILE;
    else if (strcmp(a->scope, "k_tile") == 0)
        c->plan.scope[i] = KB_SCOPE_K_TILE;
    else
        return fail(err, "tl.composite: epilogue[%d]: scope must be k_tile or output_tile, got %s", i + 1,
                    a->scope);
    if (a->has_view) {
        int64_t out[2] = {c->plan.M, c->plan.N};
        kb_tview b;
        if (!kb_tview_broadcast(&a->v, 2, out, &b)) {
            char s[96];
            return fail(err, "tl.composite: the %s operand of shape %s does not broadcast to the output [%lld, %lld]",
                        a->op, kb_shape_str(a->v.ndim, a->v.shape, s, sizeof s), (long long)out[0],
                        (long long)out[1]);
        }
        e->has_view = true;
        e->v = a->v;
        c->plan.epi_operand[i] = epi_operand_of(&a->v, out[0], out[1]);
        c->plan.epi_size[i] = (uint32_t)kb_dtype_size(a->v.dtype);
    }
    e->value = a->value;
    return true;
}

/* M, K, N and the op: a GEMM's A [M, K] x B [K, N] of one dtype; a math
 * composite's element-wise op over A [M, N] (and B of the same shape). */
static bool shapes(const kb_composite_args *a, kb_composite *c, char **err)
{
    const kb_composite_operand *x = &c->in[0], *y = &c->in[1];
    bool has_b = a->nin > 1;
    if (c->plan.gemm) {
        if (!has_b)
            return fail(err, "tl.composite: a gemm needs b");
        if (x->cols != y->rows)
            return shape_error("cannot be multiplied", x, y, err);
        if (x->dtype != y->dtype)
            return fail(err, "tl.composite: operand dtypes differ (%s and %s)", kb_dtype_name(x->dtype),
                        kb_dtype_name(y->dtype));
        c->plan.M = x->rows, c->plan.K = x->cols, c->plan.N = y->cols;
        return true;
    }
    if (has_b && (x->rows != y->rows || x->cols != y->cols))
        return shape_error("must be the same", x, y, err);
    c->plan.M = x->rows, c->plan.N = x->cols;
    if (!a->math_op)
        return fail(err, "tl.composite: a math composite needs math_op (\"exp\", \"add\" ...)");
    const kb_mop_info *info = kb_mop_parse(a->math_op, &c->mop) ? kb_mop_info_of(c->mop) : NULL;
    if (!info || info->axis || info->arity != (has_b ? 2 : 1))
        return fail(err, "tl.composite: math_op '%s' is not an element-wise op taking %d operand(s)", a->math_op,
                    has_b ? 2 : 1);
    if (a->nepi > 0)
        return fail(err, "tl.composite: epilogues belong to gemm composites");
    return true;
}

bool kb_composite_plan(const kb_composite_args *a, kb_composite *c, char **err)
{
    memset(c, 0, sizeof *c);
    kb_plan_spec *s = &c->plan;
    if (!a->op || (strcmp(a->op, "gemm") != 0 && strcmp(a->op, "math") != 0))
        return fail(err, "tl.composite: op must be \"gemm\" or \"math\", got %s", a->op ? a->op : "nil");
    s->gemm = strcmp(a->op, "gemm") == 0;
    bool has_b = a->nin > 1;
    if (!operand(&a->in[0], "a", &c->in[0], err) || (has_b && !operand(&a->in[1], "b", &c->in[1], err)) ||
        !shapes(a, c, err))
        return false;
    s->has[0] = true;
    s->has[1] = has_b;
    s->pinned[0] = c->in[0].pinned, s->pinned[1] = c->in[1].pinned;
    s->in_size[0] = (uint32_t)kb_dtype_size(c->in[0].dtype);
    s->in_size[1] = has_b ? (uint32_t)kb_dtype_size(c->in[1].dtype) : 0;
    s->acc_size = 4; /* f32 accumulation, the only one modelled */
    c->out_dtype = a->out_dtype ? *a->out_dtype : c->in[0].dtype;
    s->out_size = (uint32_t)kb_dtype_size(c->out_dtype);
    int64_t out_shape[2] = {s->M, s->N};
    uint64_t out_bytes;
    if (!kb_shape_nbytes(2, out_shape, s->out_size, &out_bytes))
        return fail(err, "tl.composite: the output [%lld, %lld] %s is larger than any memory (more than 2^46 bytes)",
                    (long long)s->M, (long long)s->N, kb_dtype_name(c->out_dtype));
    int64_t *tile[3] = {&s->tm, &s->tk, &s->tn};
    for (int i = 0; i < 3; i++) {
        if (a->has_tile[i] && a->tile[i] < 1)
            return fail(err, "tl.composite: tile sizes must be >= 1");
        *tile[i] = a->has_tile[i] ? a->tile[i] : 0; /* 0: PE_SCHEDULER's, at submission */
    }
    if (a->nepi > KB_MAX_EPILOGUE)
        return fail(err, "tl.composite: at most %d epilogue ops (got %d)", KB_MAX_EPILOGUE, a->nepi);
    for (int i = 0; i < a->nepi; i++)
        if (!epilogue(&a->epi[i], i, c, err))
            return false;
    s->nepi = a->nepi;
    c->out_va = a->out_va;
    return true;
}
