/* Tile plans (pe.h): pure functions of a composite command's shape, tile
 * sizes, operand staging and epilogue; no simulation. A plan is not
 * materialised: kb_plan_tile gives the stages of tile `id`, so a 4096^3
 * GEMM (a million tiles) costs nothing up front.
 *
 * GEMM, tiles in M -> N -> K order, per (m, n, k):
 *   [DMA_READ A] [DMA_READ B] FETCH GEMM [MATH k_tile epilogue]*
 *   and on the last k: [MATH output_tile epilogue]* STORE DMA_WRITE
 * The accumulator stays in the register file across K: no STORE or
 * DMA_WRITE before the last k (docs/decisions.md, "The PE pipeline"). A
 * pinned operand (already in TCM from tl.load) has no DMA_READ.
 * Math, tiles in M -> N order: [DMA_READ X] [DMA_READ Y] FETCH MATH STORE
 * DMA_WRITE. */
#include "comp/pe/pe.h"

#include <string.h>

static const char *const names[KB_ST_COUNT] = {"DMA_READ", "FETCH", "GEMM", "MATH", "STORE", "DMA_WRITE"};

const char *kb_stage_name(kb_stage_type t) { return t < KB_ST_COUNT ? names[t] : "?"; }

static int64_t tiles_of(int64_t n, int64_t t)
{
    int64_t c = n / t + (n % t != 0); /* ceil, without n + t overflowing */
    return c < 1 ? 1 : c;
}

void kb_plan_grid(const kb_plan_spec *s, int64_t *mt, int64_t *nt, int64_t *kt)
{
    *mt = tiles_of(s->M, s->tm);
    *nt = tiles_of(s->N, s->tn);
    *kt = s->gemm ? tiles_of(s->K, s->tk) : 1;
}

uint64_t kb_plan_tiles(const kb_plan_spec *s)
{
    int64_t mt, nt, kt;
    kb_plan_grid(s, &mt, &nt, &kt);
    return (uint64_t)mt * (uint64_t)nt * (uint64_t)kt;
}

static int64_t extent(int64_t total, int64_t tile, int64_t i)
{
    int64_t left = total - i * tile;
    return left < tile ? (left > 0 ? left : 0) : tile;
}

static void add(kb_tile *t, kb_stage_type type, int arg, uint64_t bytes)
{
    t->stages[t->nstages++] = (kb_stage){(uint8_t)type, (uint8_t)arg, (uint32_t)bytes};
}

static uint64_t epi_bytes(const kb_plan_spec *s, const kb_tile *t, int i)
{
    switch (s->epi_operand[i]) {
    case KB_EPI_COLS: return (uint64_t)t->cols * s->epi_size[i];
    case KB_EPI_ROWS: return (uint64_t)t->rows * s->epi_size[i];
    case KB_EPI_TILE: return (uint64_t)(t->rows * t->cols) * s->epi_size[i];
    default: return 0;
    }
}

/* Whether epilogue i runs on this tile. */
static bool epi_here(const kb_plan_spec *s, const kb_tile *t, int i)
{
    return s->scope[i] == KB_SCOPE_K_TILE || t->last_k;
}

void kb_plan_tile(const kb_plan_spec *s, uint64_t id, kb_tile *t)
{
    int64_t mt, nt, kt;
    kb_plan_grid(s, &mt, &nt, &kt);
    memset(t, 0, sizeof *t); /* padding too: a tile is the same bytes every time */
    t->id = id;
    t->k = (int64_t)(id % (uint64_t)kt); /* M -> N -> K: k varies fastest */
    t->n = (int64_t)(id / (uint64_t)kt % (uint64_t)nt);
    t->m = (int64_t)(id / (uint64_t)kt / (uint64_t)nt);
    t->rows = extent(s->M, s->tm, t->m);
    t->cols = extent(s->N, s->tn, t->n);
    t->depth = s->gemm ? extent(s->K, s->tk, t->k) : 0;
    t->first_k = t->k == 0;
    t->last_k = t->k == kt - 1;
    t->nstages = 0;
    uint64_t in0 = (uint64_t)t->rows * (uint64_t)(s->gemm ? t->depth : t->cols) * s->in_size[0];
    uint64_t in1 = s->gemm ? (uint64_t)(t->depth * t->cols) * s->in_size[1]
                           : (uint64_t)(t->rows * t->cols) * s->in_size[1];
    uint64_t out = (uint64_t)(t->rows * t->cols) * s->out_size;
    if (!s->pinned[0])
        add(t, KB_ST_DMA_READ, 0, in0);
    if (s->has[1] && !s->pinned[1])
        add(t, KB_ST_DMA_READ, 1, in1);
    uint64_t fetch = in0 + (s->has[1] ? in1 : 0);
    for (int i = 0; i < s->nepi; i++)
        if (epi_here(s, t, i))
            fetch += epi_bytes(s, t, i);
    add(t, KB_ST_FETCH, 0, fetch);
    if (s->gemm) {
        add(t, KB_ST_GEMM, 0, (uint64_t)(t->rows * t->cols));
        for (int i = 0; i < s->nepi; i++)
            if (s->scope[i] == KB_SCOPE_K_TILE)
                add(t, KB_ST_MATH, i, (uint64_t)(t->rows * t->cols));
        if (!t->last_k)
            return;
        for (int i = 0; i < s->nepi; i++)
            if (s->scope[i] == KB_SCOPE_OUTPUT_TILE)
                add(t, KB_ST_MATH, i, (uint64_t)(t->rows * t->cols));
    } else {
        add(t, KB_ST_MATH, KB_STAGE_HEAD, (uint64_t)(t->rows * t->cols));
    }
    add(t, KB_ST_STORE, 0, out);
    add(t, KB_ST_DMA_WRITE, 0, out);
}

static uint64_t min_u64(int64_t a, int64_t b) { return (uint64_t)(a < b ? a : b); }

uint64_t kb_plan_max_stage(const kb_plan_spec *s)
{
    uint64_t rows = min_u64(s->tm, s->M), cols = min_u64(s->tn, s->N);
    uint64_t depth = s->gemm ? min_u64(s->tk, s->K) : cols;
    uint64_t in0 = rows * depth * s->in_size[0];
    uint64_t in1 = s->gemm ? depth * cols * s->in_size[1] : rows * cols * s->in_size[1];
    uint64_t out = rows * cols * (s->out_size > s->acc_size ? s->out_size : s->acc_size);
    uint64_t fetch = in0 + in1;
    for (int i = 0; i < s->nepi; i++)
        fetch += rows * cols * s->epi_size[i]; /* at most a whole tile each */
    uint64_t m = in0 > in1 ? in0 : in1;
    m = out > m ? out : m;
    return fetch > m ? fetch : m;
}

uint64_t kb_plan_rf_bytes(const kb_plan_spec *s, const kb_tile *t)
{
    uint64_t n = 0;
    for (int i = 0; i < t->nstages; i++)
        if (t->stages[i].type == KB_ST_FETCH)
            n += t->stages[i].bytes;
    if (s->gemm)
        n += (uint64_t)(t->rows * t->cols) * s->acc_size; /* the accumulator, resident across K */
    else
        n += (uint64_t)(t->rows * t->cols) * s->out_size; /* the result */
    return n;
}

uint64_t kb_tile_va(const kb_plan_spec *s, const kb_tile *t, int i, uint64_t base, int64_t ld, uint64_t elem)
{
    int64_t r0 = t->m * s->tm, c0 = t->n * s->tn, rows, cols;
    if (i != KB_TILE_OUT)
        kb_plan_operand(s, t, i, &r0, &c0, &rows, &cols);
    return base + (uint64_t)(r0 * ld + c0) * elem;
}

void kb_plan_operand(const kb_plan_spec *s, const kb_tile *t, int i, int64_t *r0, int64_t *c0, int64_t *rows,
                     int64_t *cols)
{
    if (!s->gemm) {
        *r0 = t->m * s->tm, *c0 = t->n * s->tn, *rows = t->rows, *cols = t->cols;
    } else if (i == 0) {
        *r0 = t->m * s->tm, *c0 = t->k * s->tk, *rows = t->rows, *cols = t->depth;
    } else {
        *r0 = t->k * s->tk, *c0 = t->n * s->tn, *rows = t->depth, *cols = t->cols;
    }
}
