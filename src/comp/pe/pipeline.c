/* The stage lanes of composite commands (pe.h): six serial workers, one
 * per stage type, each with a bounded input queue. A tile token routes
 * itself: a lane that finishes a stage hands the token to the next stage's
 * lane, keeps it when the next stage is its own (consecutive DMA_READs,
 * chained epilogues), or holds it while the next queue is full; producers
 * waiting for a slot (lanes, the feeder) are served in order as slots free.
 * FETCH takes register-file space for its operands (and the accumulator
 * or result), GEMM / the math op give the operands back, STORE the rest; a
 * FETCH that does not fit waits. Each stage is a slice on its part's track
 * and a TileToken op-log record. A queue_depth of 0 makes a lane's queue
 * unbounded (an offer never fails); serial_worker gives a part's two
 * directions one lane (PE_DMA: DMA_WRITE joins DMA_READ's; PE_FETCH_STORE:
 * STORE joins FETCH's), served in arrival order. */
#include "comp/pe/pipe.h"

#include "comp/entry.h"
#include "core/sim.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const epi_names[KB_EPI_KINDS] = {"dequant", "bias", "relu", "scale", "gelu", "silu", "add"};

const char *kb_epi_name(kb_epi_kind k) { return k < KB_EPI_KINDS ? epi_names[k] : "?"; }

static kb_sim *sim_of(kb_pipe *pp) { return kb_fabric_sim(pp->pe->fab); }
static kb_time now_of(kb_pipe *pp) { return kb_sim_now(sim_of(pp)); }

/* ---- tokens ---- */

kb_token *kb_token_new(kb_pipe *pp, kb_composite *c, uint64_t id)
{
    kb_token *t = pp->free_tokens;
    if (t)
        pp->free_tokens = t->next;
    else
        t = kb_xmalloc(sizeof *t);
    memset(t, 0, offsetof(kb_token, t));
    t->c = c;
    kb_plan_tile(&c->plan, id, &t->t);
    t->idx = 0;
    t->rf = 0;
    t->buf[0] = t->buf[1] = t->res = t->acc = NULL;
    return t;
}

static void token_free(kb_pipe *pp, kb_token *t)
{
    free(t->buf[0]);
    free(t->buf[1]);
    free(t->res);
    free(t->acc);
    t->next = pp->free_tokens;
    pp->free_tokens = t;
}

static const kb_stage *stage_of(const kb_token *t) { return &t->t.stages[t->idx]; }

/* ---- lanes and hand-over ---- */

static void lane_kick(kb_lane *L);

void kb_lane_wait(kb_lane *L, kb_producer *p)
{
    p->target = L;
    p->next = NULL;
    if (L->waiters_tail)
        L->waiters_tail->next = p;
    else
        L->waiters = p;
    L->waiters_tail = p;
}

kb_lane *kb_pipe_lane(kb_pipe *pp, kb_stage_type st) { return &pp->lanes[pp->lane_of[st]]; }

/* An unbounded lane's queue is full: twice the slots, in order from 0. */
static void lane_grow(kb_lane *L)
{
    kb_token **q = kb_xcalloc((size_t)L->cap * 2, sizeof *q);
    for (int k = 0; k < L->n; k++)
        q[k] = L->q[(L->head + k) % L->cap];
    free(L->q);
    L->q = q;
    L->head = 0;
    L->cap *= 2;
}

/* Puts t in L's queue if there is room (always, when unbounded) and starts
 * L if it is idle. */
bool kb_lane_offer(kb_lane *L, kb_token *t)
{
    if (L->n == L->cap) {
        if (!L->unbounded)
            return false;
        lane_grow(L);
    }
    L->q[(L->head + L->n) % L->cap] = t;
    L->n++;
    if (!L->cur)
        lane_kick(L);
    return true;
}

/* A slot of L freed: the first waiting producer's token moves in. */
static void slot_freed(kb_lane *L)
{
    kb_producer *p = L->waiters;
    if (!p)
        return;
    L->waiters = p->next;
    if (!L->waiters)
        L->waiters_tail = NULL;
    kb_token *t = p->held;
    p->held = NULL;
    L->q[(L->head + L->n) % L->cap] = t;
    L->n++;
    p->resume(p);
}

static void stage_start(kb_lane *L);

/* Starts the next queued token if L is idle. */
static void lane_kick(kb_lane *L)
{
    if (L->cur || L->n == 0)
        return;
    L->cur = L->q[L->head];
    L->head = (L->head + 1) % L->cap;
    L->n--;
    stage_start(L);
    slot_freed(L);
}

static void lane_resume(kb_producer *p)
{
    kb_lane *L = (kb_lane *)((char *)p - offsetof(kb_lane, me));
    L->cur = NULL;
    lane_kick(L);
}

static void rf_release(kb_pipe *pp, uint64_t n);

/* L's current token finished its stage: on to the next one. */
static void advance(kb_lane *L)
{
    kb_pipe *pp = L->pp;
    kb_token *t = L->cur;
    kb_composite *c = t->c;
    t->idx++;
    if (t->idx == t->t.nstages) {
        L->cur = NULL;
        token_free(pp, t);
        if (++c->completed == c->ntiles)
            kb_composite_finish(pp, c);
        lane_kick(L);
        return;
    }
    kb_lane *next = kb_pipe_lane(pp, (kb_stage_type)stage_of(t)->type);
    if (next == L) { /* the same component: in place */
        stage_start(L);
        return;
    }
    if (kb_lane_offer(next, t)) {
        L->cur = NULL;
        lane_kick(L);
        return;
    }
    L->me.held = t; /* backpressure: hold the token until next has room */
    kb_lane_wait(next, &L->me);
}

/* ---- register file ---- */

static void rf_release(kb_pipe *pp, uint64_t n)
{
    pp->rf_used -= n;
    kb_lane *f = &pp->lanes[KB_ST_FETCH];
    if (f->rf_wait) {
        f->rf_wait = false;
        stage_start(f); /* retries the fetch */
    }
}

/* ---- stages ---- */

kb_mop kb_epi_mop(kb_epi_kind k)
{
    switch (k) {
    case KB_EPI_BIAS:
    case KB_EPI_ADD: return KB_OP_ADD;
    case KB_EPI_RELU: return KB_OP_RELU;
    case KB_EPI_GELU: return KB_OP_GELU;
    case KB_EPI_SILU: return KB_OP_SILU;
    default: return KB_OP_MUL; /* dequant, scale */
    }
}

static void log_stage(kb_pipe *pp, kb_lane *L, kb_token *t, const kb_stage *st, kb_time start, kb_time end)
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
    kb_pe_busy(pp->pe, L->node, start, end);
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

/* The memory side of a streamed tile: where its first element lives (a
 * tile is moved as one transfer of its bytes from there); its first row is
 * the access checked (the whole matrix was at submission). */
static bool tile_target(kb_pipe *pp, kb_token *t, const kb_stage *st, kb_target *tg, char **err)
{
    kb_composite *c = t->c;
    const kb_plan_spec *s = &c->plan;
    uint64_t va, row;
    int64_t r0, c0, rows, cols;
    if (st->type == KB_ST_DMA_WRITE) {
        va = kb_tile_va(s, &t->t, KB_TILE_OUT, c->out_va, s->N, s->out_size);
        row = (uint64_t)t->t.cols * s->out_size;
    } else {
        const kb_composite_operand *o = &c->in[st->arg];
        va = kb_tile_va(s, &t->t, st->arg, o->va, o->cols, kb_dtype_size(o->dtype));
        kb_plan_operand(s, &t->t, st->arg, &r0, &c0, &rows, &cols);
        row = (uint64_t)cols * kb_dtype_size(o->dtype);
    }
    return kb_mmu_resolve(pp->pe, va, row, c->pa_fallback, "tl.composite", c->kernel_name, &tg->node,
                          &tg->offset, err);
}

static void step(kb_lane *L);

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

static void next_phase_at(kb_lane *L, kb_time at)
{
    L->phase++;
    kb_sim_at(sim_of(L->pp), at, KB_PRIO_NORMAL, step_event, L);
}

/* Releases what a finished stage held and hands the token on. */
static void stage_end(kb_lane *L)
{
    kb_pipe *pp = L->pp;
    kb_token *t = L->cur;
    kb_composite *c = t->c;
    const kb_stage *st = stage_of(t);
    log_stage(pp, L, t, st, L->svc_start, now_of(pp));
    if (c->data && !c->error)
        kb_tile_data(pp, t, st);
    uint64_t tile = (uint64_t)(t->t.rows * t->t.cols);
    if (st->type == KB_ST_GEMM || (st->type == KB_ST_MATH && st->arg == KB_STAGE_HEAD)) {
        uint64_t n = t->rf; /* the operands are consumed */
        t->rf = 0;
        rf_release(pp, n);
    } else if (st->type == KB_ST_STORE) { /* the accumulator (or result) leaves the register file */
        rf_release(pp, tile * (c->plan.gemm ? c->plan.acc_size : c->plan.out_size));
    }
    advance(L);
}

/* One step of L's current stage; stages with several phases (DMA with its
 * TLB and TCM parts) come back here as each phase ends. */
static void step(kb_lane *L)
{
    kb_pipe *pp = L->pp;
    kb_pe *p = pp->pe;
    kb_token *t = L->cur;
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
            end = kb_pe_dma_tcm(p, 0, now, st->bytes, false, &start);
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
            if (!tile_target(pp, t, st, &tg, &err)) {
                kb_composite_fail(c, err);
                return stage_end(L);
            }
            if (!kb_pe_dma_submit(p->fab, p->dma, write ? &kb_msg_dma_write : &kb_msg_dma_read, tg.node, tg.offset,
                                  st->bytes, NULL, dma_done, L, NULL, &err)) {
                kb_composite_fail(c, kb_pe_error(p, "tl.composite", c->kernel_name, err));
                return stage_end(L);
            }
            return;
        }
        if (!write && ph == 2) {
            end = kb_pe_dma_tcm(p, 1, now, st->bytes, false, &start);
            return next_phase_at(L, end);
        }
        return stage_end(L);
    }
    case KB_ST_FETCH:
        if (L->phase == 0) {
            uint64_t need = st->bytes + (c->plan.gemm ? (t->t.first_k ? (uint64_t)(t->t.rows * t->t.cols) *
                                                                             c->plan.acc_size : 0)
                                                      : (uint64_t)(t->t.rows * t->t.cols) * c->plan.out_size);
            if (pp->rf_cap && pp->rf_used + need > pp->rf_cap) { /* stall until space frees */
                L->rf_wait = true;
                return;
            }
            pp->rf_used += need;
            t->rf = st->bytes;
            L->svc_start = now;
            return next_phase_at(L, kb_pe_fetch_store(p, 0, now, st->bytes, false));
        }
        return stage_end(L);
    case KB_ST_STORE:
        if (L->phase == 0) {
            L->svc_start = now;
            return next_phase_at(L, kb_pe_fetch_store(p, 1, now, st->bytes, false));
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
                dur = kb_pe_math_ps(p, kb_epi_mop(c->epi[st->arg].kind), st->bytes, st->bytes, KB_F32);
            end = kb_pe_take(&p->accel_free, now, dur, &start);
            L->svc_start = start; /* service starts when the slot is free */
            return next_phase_at(L, end);
        }
        return stage_end(L);
    default:
        return;
    }
}

static void stage_start(kb_lane *L)
{
    L->phase = 0;
    step(L);
}

/* ---- the lanes of a PE's pipeline ---- */

/* A builtin part's attribute; false for a part that has no such attribute
 * (one that is not builtin). */
static bool part_attr(kb_pe *p, uint32_t node, const char *name, double *v)
{
    const kb_comp_spec *s = kb_topo_node(kb_fabric_topo(p->fab), node)->spec;
    if (kb_impl_attr_index(s->impl, name) < 0)
        return false;
    *v = kb_spec_attr(s, name);
    return true;
}

void kb_pipe_lanes_init(kb_pipe *pp)
{
    kb_pe *p = pp->pe;
    const uint32_t nodes[KB_ST_COUNT] = {p->dma, p->fetch_store, p->gemm, p->math, p->fetch_store, p->dma};
    for (int i = 0; i < KB_ST_COUNT; i++) {
        kb_lane *L = &pp->lanes[i];
        L->pp = pp;
        L->type = (kb_stage_type)i;
        L->node = nodes[i];
        double v;
        int depth = part_attr(p, nodes[i], "queue_depth", &v) ? (int)v : 2;
        L->unbounded = depth == 0;
        L->cap = L->unbounded ? 16 : depth;
        L->q = kb_xcalloc((size_t)L->cap, sizeof *L->q);
        L->me.resume = lane_resume;
        pp->lane_of[i] = (uint8_t)i;
    }
    double v;
    if (part_attr(p, p->dma, "serial_worker", &v) && v != 0)
        pp->lane_of[KB_ST_DMA_WRITE] = KB_ST_DMA_READ;
    if (part_attr(p, p->fetch_store, "serial_worker", &v) && v != 0)
        pp->lane_of[KB_ST_STORE] = KB_ST_FETCH;
}

void kb_pipe_lanes_free(kb_pipe *pp)
{
    for (int i = 0; i < KB_ST_COUNT; i++) { /* tokens still in flight when the simulation ends */
        kb_lane *L = &pp->lanes[i];
        if (L->cur)
            token_free(pp, L->cur);
        if (L->me.held && L->me.held != L->cur)
            token_free(pp, L->me.held);
        for (int k = 0; k < L->n; k++)
            token_free(pp, L->q[(L->head + k) % L->cap]);
        free(L->q);
    }
    if (pp->feeder.held)
        token_free(pp, pp->feeder.held);
    while (pp->free_tokens) {
        kb_token *t = pp->free_tokens;
        pp->free_tokens = t->next;
        free(t);
    }
}
