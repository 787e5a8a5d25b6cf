/* Data mode of composite tiles (pe.h): what each stage does to a tile's
 * values when it completes. DMA_READ (a pinned operand: FETCH) reads the
 * operand's part of the tile, row by row through PE_MMU (a tile's rows may
 * lie on different HBM slices); GEMM computes the partial product in f32,
 * which joins the (m, n) accumulator once its k_tile epilogues are done;
 * MATH applies the head op or an epilogue; DMA_WRITE writes the output
 * tile's rows to memory. Timing never depends on it. */
#include "comp/pe/pipe.h"

#include "core/util.h"
#include "mem/memstore.h"

#include <math.h>
#include <stdlib.h>

static float *tile_alloc(int64_t rows, int64_t cols)
{
    return kb_xcalloc((size_t)(rows * cols + 1), sizeof(float)); /* +1: never a 0-byte allocation */
}

/* Moves rows x cols of a row-major matrix at virtual address va (ld
 * elements per row) between memory and buf, row by row (each row
 * translated on its own: a tile's rows may lie on different slices). */
static bool move_rows(kb_pipe *pp, const kb_composite *c, uint64_t va, int64_t ld, kb_dtype dt, int64_t rows,
                      int64_t cols, float *buf, bool write, char **err)
{
    kb_memstore *m = kb_fabric_memstore(pp->pe->fab);
    size_t sz = kb_dtype_size(dt);
    double *row = kb_xmalloc((size_t)cols * sizeof *row);
    bool ok = true;
    for (int64_t r = 0; r < rows && ok; r++) {
        uint32_t node;
        uint64_t off;
        ok = kb_mmu_resolve(pp->pe, va + (uint64_t)(r * ld) * sz, (uint64_t)cols * sz, c->pa_fallback,
                            "tl.composite", c->kernel_name, &node, &off, err);
        if (!ok)
            break;
        if (write) {
            for (int64_t j = 0; j < cols; j++)
                row[j] = buf[r * cols + j];
            kb_memstore_write_elems(m, node, off, dt, row, (size_t)cols);
        } else {
            kb_memstore_read_elems(m, node, off, dt, row, (size_t)cols);
            for (int64_t j = 0; j < cols; j++)
                buf[r * cols + j] = (float)row[j];
        }
    }
    free(row);
    return ok;
}

static void load_operand(kb_pipe *pp, kb_token *t, int i)
{
    kb_composite *c = t->c;
    const kb_composite_operand *o = &c->in[i];
    int64_t r0, c0, rows, cols;
    kb_plan_operand(&c->plan, &t->t, i, &r0, &c0, &rows, &cols);
    free(t->buf[i]);
    t->buf[i] = tile_alloc(rows, cols);
    char *err = NULL;
    if (o->pinned) {
        kb_tview v = o->v; /* the tile's window of the pinned view */
        v.offset += (uint64_t)(r0 * v.stride[0] + c0 * v.stride[1]) * kb_dtype_size(v.dtype);
        v.shape[0] = rows, v.shape[1] = cols;
        double *x = kb_xmalloc((size_t)(rows * cols + 1) * sizeof *x);
        kb_tview_read(kb_fabric_memstore(pp->pe->fab), &v, x);
        for (int64_t k = 0; k < rows * cols; k++)
            t->buf[i][k] = (float)x[k];
        free(x);
    } else if (!move_rows(pp, c, kb_tile_va(&c->plan, &t->t, i, o->va, o->cols, kb_dtype_size(o->dtype)), o->cols,
                          o->dtype, rows, cols, t->buf[i], false, &err)) {
        kb_composite_fail(c, err);
    }
}

/* y = op(x[, other]) on n f32 values of a tile: computed by the arithmetic
 * engine in double, rounded once to f32. other: doubles, for a binary op. */
static void tile_op(kb_mop op, const float *x, const double *other, float *y, int64_t n)
{
    double *v = kb_xmalloc((size_t)(n + 1) * sizeof *v);
    kb_compute_load_run(KB_F32, x, 1, v, n);
    kb_compute_ewise(op, (const double *const[]){v, other, NULL}, v, n);
    kb_compute_store_run(KB_F32, y, 1, v, n);
    free(v);
}

/* An epilogue on tile x of token t (rows x cols of the output, f32): its
 * operand is a scalar or the tile's window of a TCM tensor broadcast over
 * the whole output, read in row-major order. */
static void apply_epilogue(kb_pipe *pp, const kb_token *t, const kb_epilogue *e, float *x)
{
    const kb_plan_spec *s = &t->c->plan;
    int64_t rows = t->t.rows, cols = t->t.cols, n = rows * cols;
    kb_mop op = kb_epi_mop(e->kind);
    double *o = NULL;
    if (kb_mop_info_of(op)->arity == 2) {
        o = kb_xmalloc((size_t)(n + 1) * sizeof *o);
        if (e->has_view) {
            kb_tview b;
            int64_t whole[2] = {s->M, s->N}, at[2] = {t->t.m * s->tm, t->t.n * s->tn};
            kb_tview_broadcast(&e->v, 2, whole, &b); /* checked when the composite was made */
            b.offset = kb_tview_elem_offset(&b, at);
            b.shape[0] = rows, b.shape[1] = cols;
            kb_tview_read(kb_fabric_memstore(pp->pe->fab), &b, o);
        } else {
            for (int64_t i = 0; i < n; i++)
                o[i] = e->value;
        }
    }
    tile_op(op, x, o, x, n);
    free(o);
}

void kb_tile_data(kb_pipe *pp, kb_token *t, const kb_stage *st)
{
    kb_composite *c = t->c;
    const kb_plan_spec *s = &c->plan;
    int64_t rows = t->t.rows, cols = t->t.cols;
    switch (st->type) {
    case KB_ST_DMA_READ:
        load_operand(pp, t, st->arg);
        break;
    case KB_ST_FETCH:
        for (int i = 0; i < 2; i++)
            if (s->has[i] && c->in[i].pinned)
                load_operand(pp, t, i);
        break;
    case KB_ST_GEMM:
        free(t->res);
        t->res = tile_alloc(rows, cols);
        kb_compute_matmul_f32(t->buf[0], t->buf[1], t->res, rows, t->t.depth, cols);
        break;
    case KB_ST_MATH:
        if (st->arg == KB_STAGE_HEAD) { /* element-wise math composite */
            int64_t n = rows * cols;
            double *other = NULL;
            if (s->has[1]) {
                other = kb_xmalloc((size_t)(n + 1) * sizeof *other);
                kb_compute_load_run(KB_F32, t->buf[1], 1, other, n);
            }
            free(t->res);
            t->res = tile_alloc(rows, cols);
            tile_op(c->mop, t->buf[0], other, t->res, n);
            free(other);
        } else {
            apply_epilogue(pp, t, &c->epi[st->arg], s->scope[st->arg] == KB_SCOPE_K_TILE ? t->res : t->acc);
        }
        break;
    case KB_ST_DMA_WRITE: {
        float *out = s->gemm ? t->acc : t->res;
        char *err = NULL;
        uint64_t va = kb_tile_va(s, &t->t, KB_TILE_OUT, c->out_va, s->N, s->out_size);
        if (out && !move_rows(pp, c, va, s->N, c->out_dtype, rows, cols, out, true, &err))
            kb_composite_fail(c, err);
        break;
    }
    default:
        break;
    }
    /* GEMM: the partial product joins the accumulator once its k_tile
     * epilogues are done; the last k tile takes the accumulator out. */
    if (s->gemm && (st->type == KB_ST_GEMM || (st->type == KB_ST_MATH && s->scope[st->arg] == KB_SCOPE_K_TILE))) {
        bool more_k_epi = t->idx + 1 < t->t.nstages && t->t.stages[t->idx + 1].type == KB_ST_MATH &&
                          s->scope[t->t.stages[t->idx + 1].arg] == KB_SCOPE_K_TILE;
        if (!more_k_epi) {
            if (t->t.first_k || !c->acc) {
                free(c->acc);
                c->acc = tile_alloc(rows, cols);
            }
            for (int64_t k = 0; k < rows * cols; k++)
                c->acc[k] += t->res[k];
            if (t->t.last_k) {
                t->acc = c->acc;
                c->acc = NULL;
            }
        }
    }
}
