/* PE_SCHEDULER (pe.h): composite commands, from submission to completion.
 * Submission checks what would make a composite fail for sure (its base
 * addresses must translate, every tile must fit the register file) and
 * queues it; one feeder then turns the head composite into tile tokens,
 * all of one composite before the next, and offers each to its first
 * stage's lane, waiting for the composite's ready time (the PE_CPU's
 * dispatch) and for room (backpressure). Completion is one op-log record
 * and the done callback. */
#include "comp/pe/pipe.h"

#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kb_sim *sim_of(kb_pipe *pp) { return kb_fabric_sim(pp->pe->fab); }
static kb_time now_of(kb_pipe *pp) { return kb_sim_now(sim_of(pp)); }

/* ---- composites ---- */

void kb_composite_unref(kb_composite *c)
{
    if (--c->refs > 0)
        return;
    if (c->release)
        c->release(c);
    free(c->error);
    free(c->acc);
    free(c);
}

void kb_composite_fail(kb_composite *c, char *err)
{
    if (!c->error)
        c->error = err;
    else
        free(err);
}

void kb_composite_finish(kb_pipe *pp, kb_composite *c)
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

/* ---- the feeder ---- */

static void feed(kb_pipe *pp);

static void feeder_resume(kb_producer *p)
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
            kb_token *t = kb_token_new(pp, c, c->fed);
            c->fed++;
            kb_lane *first = kb_pipe_lane(pp, (kb_stage_type)t->t.stages[0].type);
            if (!kb_lane_offer(first, t)) {
                pp->feeder.held = t;
                pp->feeder_waiting = true;
                kb_lane_wait(first, &pp->feeder);
                return;
            }
        }
        pp->feed_head = c->next;
        if (!pp->feed_head)
            pp->feed_tail = NULL;
    }
}

/* ---- the PE's pipeline ---- */

static kb_pipe *pipe_of(kb_pe *p)
{
    if (p->pipe)
        return p->pipe;
    kb_pipe *pp = kb_xcalloc(1, sizeof *pp);
    pp->pe = p;
    kb_pipe_lanes_init(pp);
    pp->feeder.resume = feeder_resume;
    /* register_file_kb 0: no capacity model (rf_cap 0); any other value is at least a byte */
    double kb = kb_spec_attr(kb_topo_node(kb_fabric_topo(p->fab), p->fetch_store)->spec, "register_file_kb");
    pp->rf_cap = kb > 0 && llround(kb * 1024.0) < 1 ? 1 : (uint64_t)llround(kb * 1024.0);
    p->pipe = pp;
    return pp;
}

void kb_pipe_free(kb_pe *p)
{
    kb_pipe *pp = p->pipe;
    if (!pp)
        return;
    kb_pipe_lanes_free(pp);
    for (size_t i = 0; i < pp->nlive; i++)
        kb_composite_unref(pp->live[i]);
    free(pp->live);
    free(pp);
    p->pipe = NULL;
}

/* A streamed operand or the output, a row-major [rows, cols] matrix of
 * elem-byte elements at va, must translate and each of its rows stay in
 * the mapping it starts in: an error now, in timing-only runs too, rather
 * than at a tile's DMA (which translates only the tile's first row). */
static bool matrix_maps(kb_pe *p, const kb_composite *c, uint64_t va, int64_t rows, int64_t cols, uint64_t elem,
                        char **err)
{
    return kb_mmu_check_rows(p, va, (uint64_t)rows, (uint64_t)cols * elem, c->pa_fallback, "tl.composite",
                             c->kernel_name, err);
}

/* Tile sizes left 0: PE_SCHEDULER's tile_m, tile_k, tile_n (32, 64, 32
 * when it is not the builtin). */
static void default_tiles(kb_pe *p, kb_plan_spec *s)
{
    static const char *const names[3] = {"tile_m", "tile_k", "tile_n"};
    static const int64_t fallback[3] = {32, 64, 32};
    int64_t *size[3] = {&s->tm, &s->tk, &s->tn};
    const kb_comp_spec *sched = kb_topo_node(kb_fabric_topo(p->fab), p->sched)->spec;
    for (int i = 0; i < 3; i++)
        if (*size[i] < 1) {
            int64_t v = (int64_t)kb_spec_attr(sched, names[i]);
            *size[i] = v > 0 ? v : fallback[i];
        }
}

/* Why the serial workers cannot run deadlock-free, or NULL. */
static const char *serial_conflict(kb_pipe *pp)
{
    if (pp->lane_of[KB_ST_DMA_WRITE] == KB_ST_DMA_READ && !pp->lanes[KB_ST_DMA_READ].unbounded)
        return "pe_dma.attrs.serial_worker needs pe_dma.attrs.queue_depth = 0 (unbounded): a write queued "
               "behind reads waiting for room downstream could wait forever";
    if (pp->lane_of[KB_ST_STORE] == KB_ST_FETCH && (!pp->lanes[KB_ST_FETCH].unbounded || pp->rf_cap))
        return "pe_fetch_store.attrs.serial_worker needs pe_fetch_store.attrs.queue_depth = 0 (unbounded) and "
               "register_file_kb = 0 (no capacity model): a store queued behind a fetch waiting for the register "
               "file it frees could wait forever";
    return NULL;
}

bool kb_composite_submit(kb_pe *p, kb_composite *c, char **err)
{
    default_tiles(p, &c->plan);
    /* Tile sizes larger than a dimension are clipped to it; what is left
     * must tile: a stage's bytes fit 32 bits and the tiles can be counted. */
    int64_t mt, nt, kt;
    uint64_t ntiles;
    kb_plan_grid(&c->plan, &mt, &nt, &kt);
    if (kb_plan_max_stage(&c->plan) > UINT32_MAX ||
        !kb_mul_u64((uint64_t)mt, (uint64_t)nt, &ntiles) || !kb_mul_u64(ntiles, (uint64_t)kt, &ntiles)) {
        char *why = kb_asprintf("a %lldx%lldx%lld tile of a %lldx%lldx%lld %s cannot be planned: %s (tile_shape)",
                                (long long)c->plan.tm, (long long)c->plan.tk, (long long)c->plan.tn,
                                (long long)c->plan.M, (long long)c->plan.K, (long long)c->plan.N,
                                c->plan.gemm ? "gemm" : "math",
                                kb_plan_max_stage(&c->plan) > UINT32_MAX
                                    ? "one of its stages would move more than 4 GiB; use smaller tiles"
                                    : "more than 2^64 tiles; use larger tiles");
        *err = kb_pe_error(p, "tl.composite", c->kernel_name, why);
        return false;
    }
    kb_pipe *pp = pipe_of(p);
    c->ntiles = ntiles;
    /* every tile must fit the register file on its own, or the pipeline
     * could never fetch it: check the largest (the first, a full tile with
     * the accumulator) and the last (with the output-tile epilogues) */
    kb_tile t;
    uint64_t worst = 0;
    for (int i = 0; i < 2; i++) {
        kb_plan_tile(&c->plan, i == 0 ? 0 : (uint64_t)kt - 1, &t);
        uint64_t need = kb_plan_rf_bytes(&c->plan, &t);
        worst = need > worst ? need : worst;
    }
    if (pp->rf_cap && worst > pp->rf_cap) {
        char *why = kb_asprintf("a %lldx%lldx%lld tile needs %llu bytes of register file, the PE has %llu "
                                "(pe_fetch_store.attrs.register_file_kb): use smaller tiles (tile_shape)",
                                (long long)c->plan.tm, (long long)c->plan.tk, (long long)c->plan.tn,
                                (unsigned long long)worst, (unsigned long long)pp->rf_cap);
        *err = kb_pe_error(p, "tl.composite", c->kernel_name, why);
        return false;
    }
    /* a serial worker must never wait for room: its token's next stage may
     * come back to it (a store behind a fetch waiting for the register file
     * the store frees; a write behind a read waiting for room downstream) */
    const char *why = serial_conflict(pp);
    if (why) {
        *err = kb_pe_error(p, "tl.composite", c->kernel_name, kb_xstrdup(why));
        return false;
    }
    /* the plan is sound: now the memory it reads and writes */
    for (int i = 0; i < 2; i++)
        if (c->plan.has[i] && !c->in[i].pinned &&
            !matrix_maps(p, c, c->in[i].va, c->in[i].rows, c->in[i].cols, kb_dtype_size(c->in[i].dtype), err))
            return false;
    if (!matrix_maps(p, c, c->out_va, c->plan.M, c->plan.N, c->plan.out_size, err))
        return false;
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
