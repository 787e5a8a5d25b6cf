/* The PE pipeline: scheduler feed, stage lanes, tile tokens (pipeline.h). */
#include "comp/pe/pipeline.h"

#include "comp/entry.h"
#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const epi_names[KB_EPI_KINDS] = {"dequant", "bias", "relu", "scale", "gelu", "silu", "add"};

const char *kb_epi_name(kb_epi_kind k) { return k < KB_EPI_KINDS ? epi_names[k] : "?"; }

typedef struct token {
    kb_composite *c;
    kb_tile t;
    int idx;            /* current stage */
    uint64_t rf;        /* register-file bytes it holds for its operands */
    float *buf[2];      /* data: operand tiles */
    float *res;         /* data: partial product (GEMM) or result (math) */
    float *acc;         /* data: the accumulator it carries out (last k) */
    struct token *next; /* free list */
} token;

typedef struct lane lane;

/* Something waiting for space in a lane: another lane or the feeder. */
typedef struct producer {
    token *held;
    lane *target;
    void (*resume)(struct producer *p);
    struct producer *next;
} producer;

struct lane {
    struct kb_pipe *pp;
    kb_stage_type type;
    uint32_t node;      /* the component, for the trace */
    int depth;
    token **q;
    int head, n;
    token *cur;         /* in service, or finished and waiting to hand over */
    producer me;        /* when this lane waits for space downstream */
    producer *waiters, *waiters_tail;
    bool rf_wait;       /* FETCH: waiting for register-file space */
    int phase;          /* of the current stage (DMA stages have several) */
    kb_time svc_start;  /* when the current stage's service began */
};

typedef struct kb_pipe {
    kb_pe *pe;
    lane lanes[KB_ST_COUNT];
    kb_composite *feed_head, *feed_tail; /* composites not fully fed */
    producer feeder;
    bool feeder_waiting;                 /* for a ready time or for space */
    token *free_tokens;
    uint64_t rf_cap, rf_used;
    kb_composite **live;                 /* composites not finished (freed with the pipe) */
    size_t nlive, cap_live;
} kb_pipe;

static kb_sim *sim_of(kb_pipe *pp) { return kb_fabric_sim(pp->pe->fab); }
static kb_time now_of(kb_pipe *pp) { return kb_sim_now(sim_of(pp)); }

/* ---- composites ---- */

void kb_composite_unref(kb_composite *c)
{
    if (--c->refs > 0)
        return;
    free(c->error);
    free(c->acc);
    free(c);
}

static void fail_composite(kb_composite *c, char *err)
{
    if (!c->error)
        c->error = err;
    else
        free(err);
}

static void finish_composite(kb_pipe *pp, kb_composite *c)
{
    c->finished = true;
    c->t_done = now_of(pp);
    kb_val *prm = NULL;
    kb_oplog *log = kb_fabric_oplog(pp->pe->fab);
    if (kb_oplog_keeps(log)) {
        prm = kb_val_obj();
        kb_obj_str(prm, "op", c->plan.gemm ? "gemm" : kb_mop_info_of(c->mop)->name);
        kb_obj_int(prm, "out_addr", (int64_t)c->out_va);
        kb_obj_int(prm, "out_nbytes", (int64_t)((uint64_t)(c->plan.M * c->plan.N) * c->plan.out_size));
        kb_obj_int(prm, "m", c->plan.M);
        kb_obj_int(prm, "n", c->plan.N);
        if (c->plan.gemm)
            kb_obj_int(prm, "k", c->plan.K);
        kb_obj_int(prm, "tiles", (int64_t)c->ntiles);
        kb_obj_str(prm, "dtype_out", kb_dtype_name(c->out_dtype));
    }
    kb_oplog_add(log, c->t_submit, c->t_done, kb_topo_node(kb_fabric_topo(pp->pe->fab), pp->pe->sched)->id,
                 c->plan.gemm ? "gemm" : "math", c->plan.gemm ? "composite_gemm" : "composite_math", prm);
    for (size_t i = 0; i < pp->nlive; i++)
        if (pp->live[i] == c) {
            pp->live[i] = pp->live[--pp->nlive];
            break;
        }
    if (c->done)
        c->done(c);
    kb_composite_unref(c);
}

/* ---- tokens ---- */

static token *token_new(kb_pipe *pp, kb_composite *c, uint64_t id)
{
    token *t = pp->free_tokens;
    if (t)
        pp->free_tokens = t->next;
    else
        t = kb_xmalloc(sizeof *t);
    memset(t, 0, offsetof(token, t));
    t->c = c;
    kb_plan_tile(&c->plan, id, &t->t);
    t->idx = 0;
    t->rf = 0;
    t->buf[0] = t->buf[1] = t->res = t->acc = NULL;
    return t;
}

static void token_free(kb_pipe *pp, token *t)
{
    free(t->buf[0]);
    free(t->buf[1]);
    free(t->res);
    free(t->acc);
    t->next = pp->free_tokens;
    pp->free_tokens = t;
}

static const kb_stage *stage_of(const token *t) { return &t->t.stages[t->idx]; }

/* ---- lanes and hand-over ---- */

static void lane_kick(lane *L);

static void add_waiter(lane *L, producer *p)
{
    p->next = NULL;
    if (L->waiters_tail)
        L->waiters_tail->next = p;
    else
        L->waiters = p;
    L->waiters_tail = p;
}

/* Puts t in L's queue if there is room and starts L if it is idle. */
static bool offer(lane *L, token *t)
{
    if (L->n == L->depth)
        return false;
    L->q[(L->head + L->n) % L->depth] = t;
    L->n++;
    if (!L->cur)
        lane_kick(L);
    return true;
}

/* A slot of L freed: the first waiting producer's token moves in. */
static void slot_freed(lane *L)
{
    producer *p = L->waiters;
    if (!p)
        return;
    L->waiters = p->next;
    if (!L->waiters)
        L->waiters_tail = NULL;
    token *t = p->held;
    p->held = NULL;
    L->q[(L->head + L->n) % L->depth] = t;
    L->n++;
    p->resume(p);
}

static void stage_start(lane *L);

/* Starts the next queued token if L is idle. */
static void lane_kick(lane *L)
{
    if (L->cur || L->n == 0)
        return;
    L->cur = L->q[L->head];
    L->head = (L->head + 1) % L->depth;
    L->n--;
    stage_start(L);
    slot_freed(L);
}

static void lane_resume(producer *p)
{
    lane *L = (lane *)((char *)p - offsetof(lane, me));
    L->cur = NULL;
    lane_kick(L);
}

static void rf_release(kb_pipe *pp, uint64_t n);

/* L's current token finished its stage: on to the next one. */
static void advance(lane *L)
{
    kb_pipe *pp = L->pp;
    token *t = L->cur;
    kb_composite *c = t->c;
    t->idx++;
    if (t->idx == t->t.nstages) {
        L->cur = NULL;
        token_free(pp, t);
        if (++c->completed == c->ntiles)
            finish_composite(pp, c);
        lane_kick(L);
        return;
    }
    lane *next = &pp->lanes[stage_of(t)->type];
    if (next == L) { /* the same component: in place */
        stage_start(L);
        return;
    }
    if (offer(next, t)) {
        L->cur = NULL;
        lane_kick(L);
        return;
    }
    L->me.held = t; /* backpressure: hold the token until next has room */
    L->me.target = next;
    add_waiter(next, &L->me);
}

/* ---- the feeder (PE_SCHEDULER) ---- */

static void feed(kb_pipe *pp);

static void feeder_resume(producer *p)
{
    kb_pipe *pp = (kb_pipe *)((char *)p - offsetof(kb_pipe, feeder));
    pp->feeder_waiting = false;
    feed(pp);
}

static void feeder_wake(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_pipe *pp = arg;
    pp->feeder_waiting = false;
    feed(pp);
}

/* Feeds tiles of the head composite until a queue is full or it waits for
 * its ready time; then the next composite. */
static void feed(kb_pipe *pp)
{
    while (!pp->feeder_waiting && pp->feed_head) {
        kb_composite *c = pp->feed_head;
        if (c->ready_at > now_of(pp)) {
            pp->feeder_waiting = true;
            kb_sim_at(sim_of(pp), c->ready_at, KB_PRIO_NORMAL, feeder_wake, pp);
            return;
        }
        if (c->fed == 0)
            c->t_first = now_of(pp);
        while (c->fed < c->ntiles) {
            token *t = token_new(pp, c, c->fed);
            c->fed++;
            lane *first = &pp->lanes[t->t.stages[0].type];
            if (!offer(first, t)) {
                pp->feeder.held = t;
                pp->feeder.target = first;
                pp->feeder_waiting = true;
                add_waiter(first, &pp->feeder);
                return;
            }
        }
        pp->feed_head = c->next;
        if (!pp->feed_head)
            pp->feed_tail = NULL;
    }
}

/* ---- register file ---- */

static void rf_release(kb_pipe *pp, uint64_t n)
{
    pp->rf_used -= n;
    lane *f = &pp->lanes[KB_ST_FETCH];
    if (f->rf_wait) {
        f->rf_wait = false;
        stage_start(f); /* retries the fetch */
    }
}

/* ---- data mode ---- */

static float *tile_alloc(int64_t rows, int64_t cols)
{
    return kb_xcalloc((size_t)(rows * cols + 1), sizeof(float)); /* +1: never a 0-byte allocation */
}

/* The memory node and offset of virtual address va, through the PE's page
 * table (or as a PA with pa_fallback). */
static bool resolve_va(kb_pipe *pp, const kb_composite *c, uint64_t va, kb_target *tg, char **err)
{
    uint64_t pa = va;
    kb_pagetable *pt = kb_pe_pagetable(pp->pe);
    if (!((pt && kb_pt_translate(pt, va, &pa)) || c->pa_fallback)) {
        *err = kb_asprintf("tl.composite: virtual address 0x%llx is not mapped on sip%d.cube%d.pe%d",
                           (unsigned long long)va, pp->pe->sip, pp->pe->cube, pp->pe->pe);
        return false;
    }
    return kb_resolve_data_target(kb_fabric_topo(pp->pe->fab), (kb_pa)pa, tg, "tl.composite", err);
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
        kb_target tg;
        ok = resolve_va(pp, c, va + (uint64_t)(r * ld) * sz, &tg, err);
        if (!ok)
            break;
        if (write) {
            for (int64_t j = 0; j < cols; j++)
                row[j] = buf[r * cols + j];
            kb_memstore_write_elems(m, tg.node, tg.offset, dt, row, (size_t)cols);
        } else {
            kb_memstore_read_elems(m, tg.node, tg.offset, dt, row, (size_t)cols);
            for (int64_t j = 0; j < cols; j++)
                buf[r * cols + j] = (float)row[j];
        }
    }
    free(row);
    return ok;
}

/* The operand tile of token t: [rows, depth] of A or [depth, cols] of B
 * (GEMM), [rows, cols] (math). */
static void operand_tile(const token *t, int i, int64_t *r0, int64_t *c0, int64_t *rows, int64_t *cols)
{
    const kb_plan_spec *s = &t->c->plan;
    if (!s->gemm) {
        *r0 = t->t.m * s->tm, *c0 = t->t.n * s->tn, *rows = t->t.rows, *cols = t->t.cols;
    } else if (i == 0) {
        *r0 = t->t.m * s->tm, *c0 = t->t.k * s->tk, *rows = t->t.rows, *cols = t->t.depth;
    } else {
        *r0 = t->t.k * s->tk, *c0 = t->t.n * s->tn, *rows = t->t.depth, *cols = t->t.cols;
    }
}

static void load_operand(kb_pipe *pp, token *t, int i)
{
    kb_composite *c = t->c;
    const kb_operand *o = &c->in[i];
    int64_t r0, c0, rows, cols;
    operand_tile(t, i, &r0, &c0, &rows, &cols);
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
    } else if (!move_rows(pp, c, o->va + (uint64_t)(r0 * o->cols + c0) * kb_dtype_size(o->dtype), o->cols,
                          o->dtype, rows, cols, t->buf[i], false, &err)) {
        fail_composite(c, err);
    }
}

/* Epilogue operand value for output element (r, c) of the whole output. */
static double epi_at(kb_memstore *m, const kb_epilogue *e, int64_t M, int64_t N, int64_t r, int64_t col)
{
    if (!e->has_view)
        return e->value;
    kb_tview b;
    int64_t shape[2] = {M, N};
    kb_tview_broadcast(&e->v, 2, shape, &b);
    int64_t idx[2] = {r, col};
    double x;
    kb_memstore_read_elems(m, b.domain, kb_tview_elem_offset(&b, idx), b.dtype, &x, 1);
    return x;
}

static void apply_epilogue(kb_pipe *pp, const token *t, const kb_epilogue *e, float *x)
{
    kb_memstore *m = kb_fabric_memstore(pp->pe->fab);
    const kb_plan_spec *s = &t->c->plan;
    int64_t rows = t->t.rows, cols = t->t.cols, r0 = t->t.m * s->tm, c0 = t->t.n * s->tn;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) {
            double v = x[r * cols + j], o = 0;
            if (e->kind == KB_EPI_DEQUANT || e->kind == KB_EPI_BIAS || e->kind == KB_EPI_SCALE ||
                e->kind == KB_EPI_ADD)
                o = epi_at(m, e, s->M, s->N, r0 + r, c0 + j);
            switch (e->kind) {
            case KB_EPI_DEQUANT:
            case KB_EPI_SCALE: v *= o; break;
            case KB_EPI_BIAS:
            case KB_EPI_ADD: v += o; break;
            case KB_EPI_RELU: v = v > 0 ? v : 0; break;
            case KB_EPI_GELU: v = 0.5 * v * (1 + erf(v / sqrt(2.0))); break;
            case KB_EPI_SILU: v = v / (1 + exp(-v)); break;
            default: break;
            }
            x[r * cols + j] = (float)v;
        }
}

/* The data effect of t's stage, at its completion. */
static void stage_data(kb_pipe *pp, token *t, const kb_stage *st)
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
            int n = (int)(rows * cols);
            double *x = kb_xmalloc((size_t)n * sizeof *x), *y = kb_xmalloc((size_t)n * sizeof *y), *z = NULL;
            for (int k = 0; k < n; k++)
                x[k] = t->buf[0][k];
            if (s->has[1]) {
                z = kb_xmalloc((size_t)n * sizeof *z);
                for (int k = 0; k < n; k++)
                    z[k] = t->buf[1][k];
                kb_compute_binary(c->mop, x, z, y, n);
            } else {
                kb_compute_unary(c->mop, x, y, n);
            }
            free(t->res);
            t->res = tile_alloc(rows, cols);
            for (int k = 0; k < n; k++)
                t->res[k] = (float)y[k];
            free(x);
            free(y);
            free(z);
        } else {
            apply_epilogue(pp, t, &c->epi[st->arg], s->scope[st->arg] == KB_SCOPE_K_TILE ? t->res : t->acc);
        }
        break;
    case KB_ST_DMA_WRITE: {
        float *out = s->gemm ? t->acc : t->res;
        char *err = NULL;
        uint64_t va = c->out_va + (uint64_t)(t->t.m * s->tm * s->N + t->t.n * s->tn) * kb_dtype_size(c->out_dtype);
        if (out && !move_rows(pp, c, va, s->N, c->out_dtype, rows, cols, out, true, &err))
            fail_composite(c, err);
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

/* ---- stages ---- */

/* The math op whose cost an epilogue has (docs/pe-model.md). */
static kb_mop epi_mop(kb_epi_kind k)
{
    switch (k) {
    case KB_EPI_BIAS:
    case KB_EPI_ADD: return KB_OP_ADD;
    case KB_EPI_RELU: return KB_OP_RELU;
    case KB_EPI_GELU:
    case KB_EPI_SILU: return KB_OP_SIGMOID; /* transcendental */
    default: return KB_OP_MUL;               /* dequant, scale */
    }
}

static void log_stage(kb_pipe *pp, lane *L, token *t, const kb_stage *st, kb_time start, kb_time end)
{
    static const char *const names[KB_ST_COUNT] = {"TileToken/DMA_READ", "TileToken/FETCH", "TileToken/GEMM",
                                                   "TileToken/MATH", "TileToken/STORE", "TileToken/DMA_WRITE"};
    static const char *const kinds[KB_ST_COUNT] = {"memory", "memory", "gemm", "math", "memory", "memory"};
    kb_composite *c = t->c;
    c->stage_ps[st->type] += end - start;
    c->stage_n[st->type]++;
    kb_tracer *tr = kb_fabric_tracer(pp->pe->fab);
    if (tr) {
        kb_targ a[2] = {{"tile", NULL, (int64_t)t->t.id}, {st->type == KB_ST_GEMM || st->type == KB_ST_MATH
                                                               ? "elements" : "bytes", NULL, st->bytes}};
        kb_trace_span(tr, kb_fabric_track(pp->pe->fab, L->node), kb_stage_name(st->type), start, end, a, 2, 0,
                      KB_FLOW_NONE);
    }
    kb_comp_busy(kb_fabric_comp(pp->pe->fab, L->node), start, end);
    kb_oplog *log = kb_fabric_oplog(pp->pe->fab);
    kb_val *prm = NULL;
    if (kb_oplog_keeps(log)) {
        prm = kb_val_obj();
        kb_obj_str(prm, "stage_type", kb_stage_name(st->type));
        kb_obj_int(prm, "tile_id", (int64_t)t->t.id);
        kb_obj_int(prm, "m", t->t.m);
        kb_obj_int(prm, "n", t->t.n);
        kb_obj_int(prm, "k", t->t.k);
        if (st->type == KB_ST_MATH)
            kb_obj_str(prm, "op_kind", st->arg == KB_STAGE_HEAD ? kb_mop_info_of(c->mop)->name
                                                                : kb_epi_name(c->epi[st->arg].kind));
        kb_obj_int(prm, st->type == KB_ST_GEMM || st->type == KB_ST_MATH ? "elements" : "bytes", st->bytes);
        if (st->type == KB_ST_DMA_READ)
            kb_obj_int(prm, "operand", st->arg);
    }
    kb_oplog_add(log, start, end, kb_topo_node(kb_fabric_topo(pp->pe->fab), L->node)->id, kinds[st->type],
                 names[st->type], prm);
}

/* The memory side of a streamed tile: its first element's physical address
 * (a tile is moved as one transfer of its bytes from there). */
static bool tile_target(kb_pipe *pp, token *t, const kb_stage *st, kb_target *tg, char **err)
{
    kb_composite *c = t->c;
    const kb_plan_spec *s = &c->plan;
    uint64_t va;
    if (st->type == KB_ST_DMA_WRITE) {
        va = c->out_va + (uint64_t)(t->t.m * s->tm * s->N + t->t.n * s->tn) * s->out_size;
    } else {
        int64_t r0, c0, rows, cols;
        operand_tile(t, st->arg, &r0, &c0, &rows, &cols);
        const kb_operand *o = &c->in[st->arg];
        va = o->va + (uint64_t)(r0 * o->cols + c0) * kb_dtype_size(o->dtype);
    }
    return resolve_va(pp, c, va, tg, err);
}

static void step(lane *L);

static void step_event(kb_sim *sim, void *arg)
{
    (void)sim;
    step(arg);
}

static void dma_done(kb_txn *tx, void *arg)
{
    (void)tx;
    step(arg);
}

static void next_phase_at(lane *L, kb_time at)
{
    L->phase++;
    kb_sim_at(sim_of(L->pp), at, KB_PRIO_NORMAL, step_event, L);
}

/* Releases what a finished stage held and hands the token on. */
static void stage_end(lane *L)
{
    kb_pipe *pp = L->pp;
    token *t = L->cur;
    kb_composite *c = t->c;
    const kb_stage *st = stage_of(t);
    log_stage(pp, L, t, st, L->svc_start, now_of(pp));
    if (c->data && !c->error)
        stage_data(pp, t, st);
    uint64_t tile = (uint64_t)(t->t.rows * t->t.cols);
    if (st->type == KB_ST_GEMM || (st->type == KB_ST_MATH && st->arg == KB_STAGE_HEAD)) {
        uint64_t n = t->rf; /* the operands are consumed */
        t->rf = 0;
        rf_release(pp, n);
    } else if (st->type == KB_ST_STORE) { /* the accumulator (or result) leaves the register file */
        uint64_t n = tile * (c->plan.gemm ? c->plan.acc_size : c->plan.out_size);
        if (c->plan.gemm)
            c->acc_rf -= n;
        rf_release(pp, n);
    }
    advance(L);
}

/* One step of L's current stage; stages with several phases (DMA with its
 * TLB and TCM parts) come back here as each phase ends. */
static void step(lane *L)
{
    kb_pipe *pp = L->pp;
    kb_pe *p = pp->pe;
    token *t = L->cur;
    kb_composite *c = t->c;
    const kb_stage *st = stage_of(t);
    kb_time now = now_of(pp), start, end;
    char *err = NULL;
    kb_target tg;
    switch ((kb_stage_type)st->type) {
    case KB_ST_DMA_READ: /* TLB, DMA read, TCM write (the tile lands) */
    case KB_ST_DMA_WRITE: /* TCM read, TLB, DMA write */ {
        bool write = st->type == KB_ST_DMA_WRITE;
        int ph = write ? L->phase - 1 : L->phase; /* 0 TLB, 1 DMA, 2 landing */
        if (L->phase == 0)
            L->svc_start = now;
        if (write && L->phase == 0) {
            end = kb_pe_take(&p->tcm_free[0], now, kb_pe_tcm_ps(p, 0, st->bytes), &start);
            return next_phase_at(L, end);
        }
        if (ph == 0) {
            L->phase++;
            if (p->tlb_ps)
                return (void)kb_sim_at(sim_of(pp), now + p->tlb_ps, KB_PRIO_NORMAL, step_event, L);
            ph = 1;
        }
        if (ph == 1) {
            L->phase++;
            if (!tile_target(pp, t, st, &tg, &err) ||
                !kb_pe_dma_submit(p->fab, p->dma, write ? KB_MSG_DMA_WRITE : KB_MSG_DMA_READ, tg.node, tg.offset,
                                  st->bytes, NULL, dma_done, L, NULL, &err)) {
                fail_composite(c, err);
                return stage_end(L);
            }
            return;
        }
        if (!write && ph == 2) {
            end = kb_pe_take(&p->tcm_free[1], now, kb_pe_tcm_ps(p, 1, st->bytes), &start);
            return next_phase_at(L, end);
        }
        return stage_end(L);
    }
    case KB_ST_FETCH:
        if (L->phase == 0) {
            uint64_t need = st->bytes + (c->plan.gemm ? (t->t.first_k ? (uint64_t)(t->t.rows * t->t.cols) *
                                                                             c->plan.acc_size : 0)
                                                      : (uint64_t)(t->t.rows * t->t.cols) * c->plan.out_size);
            if (pp->rf_used + need > pp->rf_cap) { /* stall until compute or a store frees space */
                L->rf_wait = true;
                return;
            }
            pp->rf_used += need;
            t->rf = st->bytes;
            if (c->plan.gemm)
                c->acc_rf += need - st->bytes;
            L->svc_start = now;
            end = kb_pe_take(&p->tcm_free[0], now + p->fs_ps, kb_pe_tcm_ps(p, 0, st->bytes), &start);
            return next_phase_at(L, end);
        }
        return stage_end(L);
    case KB_ST_STORE:
        if (L->phase == 0) {
            L->svc_start = now;
            end = kb_pe_take(&p->tcm_free[1], now + p->fs_ps, kb_pe_tcm_ps(p, 1, st->bytes), &start);
            return next_phase_at(L, end);
        }
        return stage_end(L);
    case KB_ST_GEMM:
    case KB_ST_MATH:
        if (L->phase == 0) {
            kb_time dur;
            if (st->type == KB_ST_GEMM)
                dur = kb_pe_gemm_ps(p, t->t.rows, t->t.depth, t->t.cols, c->in[0].dtype);
            else if (st->arg == KB_STAGE_HEAD)
                dur = kb_pe_math_ps(p, c->mop, st->bytes, st->bytes, c->in[0].dtype);
            else /* epilogues work on the f32 accumulator */
                dur = kb_pe_math_ps(p, epi_mop(c->epi[st->arg].kind), st->bytes, st->bytes, KB_F32);
            end = kb_pe_take(&p->accel_free, now, dur, &start);
            L->svc_start = start; /* service starts when the slot is free */
            return next_phase_at(L, end);
        }
        return stage_end(L);
    default:
        return;
    }
}

static void stage_start(lane *L)
{
    L->phase = 0;
    step(L);
}

/* ---- the PE's pipeline and submission ---- */

static int attr_int(kb_pe *p, uint32_t node, const char *name, int dflt)
{
    double v = kb_spec_attr(kb_topo_node(kb_fabric_topo(p->fab), node)->spec, name);
    return v >= 1 ? (int)v : dflt; /* a part that is not builtin has no such attribute */
}

static kb_pipe *pipe_of(kb_pe *p)
{
    if (p->pipe)
        return p->pipe;
    kb_pipe *pp = kb_xcalloc(1, sizeof *pp);
    pp->pe = p;
    const uint32_t nodes[KB_ST_COUNT] = {p->dma, p->fetch_store, p->gemm, p->math, p->fetch_store, p->dma};
    for (int i = 0; i < KB_ST_COUNT; i++) {
        lane *L = &pp->lanes[i];
        L->pp = pp;
        L->type = (kb_stage_type)i;
        L->node = nodes[i];
        L->depth = attr_int(p, nodes[i], "queue_depth", 2);
        L->q = kb_xcalloc((size_t)L->depth, sizeof *L->q);
        L->me.resume = lane_resume;
    }
    pp->feeder.resume = feeder_resume;
    pp->rf_cap = (uint64_t)llround(kb_spec_attr(kb_topo_node(kb_fabric_topo(p->fab), p->fetch_store)->spec,
                                                "register_file_kb") * 1024.0);
    p->pipe = pp;
    return pp;
}

void kb_pipe_free(kb_pe *p)
{
    kb_pipe *pp = p->pipe;
    if (!pp)
        return;
    for (int i = 0; i < KB_ST_COUNT; i++) { /* tokens still in flight when the simulation ends */
        lane *L = &pp->lanes[i];
        if (L->cur)
            token_free(pp, L->cur);
        if (L->me.held && L->me.held != L->cur)
            token_free(pp, L->me.held);
        for (int k = 0; k < L->n; k++)
            token_free(pp, L->q[(L->head + k) % L->depth]);
        free(L->q);
    }
    if (pp->feeder.held)
        token_free(pp, pp->feeder.held);
    while (pp->free_tokens) {
        token *t = pp->free_tokens;
        pp->free_tokens = t->next;
        free(t);
    }
    for (size_t i = 0; i < pp->nlive; i++)
        kb_composite_unref(pp->live[i]);
    free(pp->live);
    free(pp);
    p->pipe = NULL;
}

bool kb_composite_submit(kb_pe *p, kb_composite *c, char **err)
{
    kb_pipe *pp = pipe_of(p);
    c->pe = p;
    c->ntiles = kb_plan_tiles(&c->plan);
    /* every tile must fit the register file on its own, or the pipeline
     * could never fetch it: check the largest (the first, a full tile with
     * the accumulator) and the last (with the output-tile epilogues) */
    kb_tile t;
    uint64_t worst = 0;
    for (int i = 0; i < 2; i++) {
        int64_t mt, nt, kt;
        kb_plan_grid(&c->plan, &mt, &nt, &kt);
        kb_plan_tile(&c->plan, i == 0 ? 0 : (uint64_t)kt - 1, &t);
        uint64_t need = kb_plan_rf_bytes(&c->plan, &t);
        worst = need > worst ? need : worst;
    }
    if (worst > pp->rf_cap) {
        *err = kb_asprintf("tl.composite: a %lldx%lldx%lld tile needs %llu bytes of register file, "
                           "sip%d.cube%d.pe%d has %llu (pe_fetch_store.attrs.register_file_kb): use smaller "
                           "tiles (tile_shape)",
                           (long long)c->plan.tm, (long long)c->plan.tk, (long long)c->plan.tn,
                           (unsigned long long)worst, p->sip, p->cube, p->pe, (unsigned long long)pp->rf_cap);
        return false;
    }
    c->refs = 2;
    c->t_submit = now_of(pp);
    c->next = NULL;
    if (pp->nlive == pp->cap_live) {
        pp->cap_live = pp->cap_live ? 2 * pp->cap_live : 8;
        pp->live = kb_xrealloc(pp->live, pp->cap_live * sizeof *pp->live);
    }
    pp->live[pp->nlive++] = c;
    if (pp->feed_tail)
        pp->feed_tail->next = c;
    else
        pp->feed_head = c;
    pp->feed_tail = c;
    feed(pp);
    return true;
}

void kb_pipe_state_of(kb_pe *p, kb_pipe_state *out)
{
    memset(out, 0, sizeof *out);
    kb_pipe *pp = p->pipe;
    if (!pp)
        return;
    for (int i = 0; i < KB_ST_COUNT; i++) {
        out->queued[i] = pp->lanes[i].n;
        out->busy[i] = pp->lanes[i].cur != NULL;
    }
    out->rf_used = pp->rf_used;
    out->rf_cap = pp->rf_cap;
    out->composites = pp->nlive;
    for (size_t i = 0; i < pp->nlive; i++)
        out->tiles_left += pp->live[i]->ntiles - pp->live[i]->completed;
}
