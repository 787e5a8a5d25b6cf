/* Building composites (pe.h): the rules of tl.composite (and tl.trans) on
 * plain C values, so that a binding only converts its language's values
 * and a C driver gets the same checks and messages. Each simple command's
 * rules are its kind's file's (load_store.c, gemm.c, math.c ...). Nothing
 * is allocated or formatted unless there is an error to report. */
#include "comp/pe/pe.h"

#include "comp/pe/engines.h"
#include "core/sim.h"
#include "core/util.h"

#include <string.h>

bool kb_pe_trans(const kb_tview *x, kb_tview *out, char **err)
{
    if (x->ndim < 2)
        return kb_pe_fail(err, "tl.trans: needs at least 2 dimensions (got %d)", x->ndim);
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
        return kb_pe_fail(err, "tl.composite: %s must be 2-D", name);
    uint64_t n;
    if (!kb_shape_nbytes(2, a->v.shape, kb_dtype_size(a->v.dtype), &n))
        return kb_pe_fail(err, "tl.composite: %s of shape [%lld, %lld] %s is larger than any memory (more than 2^46 bytes)",
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
    return kb_pe_fail(err, "tl.composite: %s: shapes [%lld, %lld] and [%lld, %lld]", what, (long long)a->rows,
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
        return kb_pe_fail(err, "tl.composite: unknown epilogue op '%s'", a->op ? a->op : "?");
    kb_epilogue *e = &c->epi[i];
    e->kind = (kb_epi_kind)k;
    if (!a->scope || strcmp(a->scope, "output_tile") == 0)
        c->plan.scope[i] = KB_SCOPE_OUTPUT_TILE;
    else if (strcmp(a->scope, "k_tile") == 0)
        c->plan.scope[i] = KB_SCOPE_K_TILE;
    else
        return kb_pe_fail(err, "tl.composite: epilogue[%d]: scope must be k_tile or output_tile, got %s", i + 1,
                    a->scope);
    if (a->has_view) {
        int64_t out[2] = {c->plan.M, c->plan.N};
        kb_tview b;
        if (!kb_tview_broadcast(&a->v, 2, out, &b)) {
            char s[96];
            return kb_pe_fail(err, "tl.composite: the %s operand of shape %s does not broadcast to the output [%lld, %lld]",
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
            return kb_pe_fail(err, "tl.composite: a gemm needs b");
        if (x->cols != y->rows)
            return shape_error("cannot be multiplied", x, y, err);
        if (x->dtype != y->dtype)
            return kb_pe_fail(err, "tl.composite: operand dtypes differ (%s and %s)", kb_dtype_name(x->dtype),
                        kb_dtype_name(y->dtype));
        c->plan.M = x->rows, c->plan.K = x->cols, c->plan.N = y->cols;
        return true;
    }
    if (has_b && (x->rows != y->rows || x->cols != y->cols))
        return shape_error("must be the same", x, y, err);
    c->plan.M = x->rows, c->plan.N = x->cols;
    if (!a->math_op)
        return kb_pe_fail(err, "tl.composite: a math composite needs math_op (\"exp\", \"add\" ...)");
    const kb_mop_info *info = kb_mop_parse(a->math_op, &c->mop) ? kb_mop_info_of(c->mop) : NULL;
    if (!info || info->axis || info->arity != (has_b ? 2 : 1))
        return kb_pe_fail(err, "tl.composite: math_op '%s' is not an element-wise op taking %d operand(s)", a->math_op,
                    has_b ? 2 : 1);
    if (a->nepi > 0)
        return kb_pe_fail(err, "tl.composite: epilogues belong to gemm composites");
    return true;
}

bool kb_composite_plan(const kb_composite_args *a, kb_composite *c, char **err)
{
    memset(c, 0, sizeof *c);
    kb_plan_spec *s = &c->plan;
    if (!a->op || (strcmp(a->op, "gemm") != 0 && strcmp(a->op, "math") != 0))
        return kb_pe_fail(err, "tl.composite: op must be \"gemm\" or \"math\", got %s", a->op ? a->op : "nil");
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
        return kb_pe_fail(err, "tl.composite: the output [%lld, %lld] %s is larger than any memory (more than 2^46 bytes)",
                    (long long)s->M, (long long)s->N, kb_dtype_name(c->out_dtype));
    int64_t *tile[3] = {&s->tm, &s->tk, &s->tn};
    for (int i = 0; i < 3; i++) {
        if (a->has_tile[i] && a->tile[i] < 1)
            return kb_pe_fail(err, "tl.composite: tile sizes must be >= 1");
        *tile[i] = a->has_tile[i] ? a->tile[i] : 0; /* 0: PE_SCHEDULER's, at submission */
    }
    if (a->nepi > KB_MAX_EPILOGUE)
        return kb_pe_fail(err, "tl.composite: at most %d epilogue ops (got %d)", KB_MAX_EPILOGUE, a->nepi);
    for (int i = 0; i < a->nepi; i++)
        if (!epilogue(&a->epi[i], i, c, err))
            return false;
    s->nepi = a->nepi;
    c->out_va = a->out_va;
    return true;
}
