/* HBM controller of one PE partition (builtin.hbm_ctrl):
 * num_pcs pseudo-channels, each committing one burst per chunk_time;
 * the channel of a burst is (address >> log2(burst_bytes)) & (num_pcs-1).
 * Reads and writes share a channel; a direction change costs
 * switch_penalty_ns. The worker is flit-aware and serial, pays the
 * overhead on a transaction's first flit, and never waits for a commit:
 * the transaction is finalised when its last burst is committed. */
#include "comp/comp.h"

#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdlib.h>

typedef struct hbm {
    kb_time *pc_avail;
    kb_time *pc_busy;       /* committed burst time per channel (statistics) */
    kb_tcounter **pc_ctr;   /* per channel, when trace counters are on */
    bool ctr_ready;
    signed char *pc_dir; /* -1 none, 0 read, 1 write */
    unsigned pc_mask;
    int pc_shift;
    uint64_t burst;
    kb_time chunk_ps, switch_ps;
} hbm;

static void hbm_init(kb_comp *c)
{
    const kb_topo_params *p = kb_topo_params_of(kb_fabric_topo(c->fab));
    const kb_comp_spec *s = c->n->spec;
    hbm *h = kb_xcalloc(1, sizeof *h);
    unsigned pcs = (unsigned)(p->hbm_channels_per_pe > 0 ? p->hbm_channels_per_pe : 1);
    h->pc_avail = kb_xcalloc(pcs, sizeof *h->pc_avail);
    h->pc_busy = kb_xcalloc(pcs, sizeof *h->pc_busy);
    h->pc_dir = kb_xmalloc(pcs);
    for (unsigned i = 0; i < pcs; i++)
        h->pc_dir[i] = -1;
    h->pc_mask = pcs - 1;
    h->burst = (uint64_t)kb_spec_attr(s, "burst_bytes");
    while ((UINT64_C(1) << h->pc_shift) < h->burst)
        h->pc_shift++;
    /* Per-channel bandwidth: the effective controller bandwidth over its
     * channels, so efficiency scales the channels too. */
    double pc_bw = p->hbm_channel_bw_gbs * kb_spec_attr(s, "efficiency");
    h->chunk_ps = llround((double)h->burst * 1000.0 / pc_bw);
    h->switch_ps = llround(kb_spec_attr(s, "switch_penalty_ns") * 1000.0);
    c->state = h;
}

/* Trace counters, one per channel, made when the first burst commits (the
 * tracer is attached after the components are created). */
static void init_counters(kb_comp *c, hbm *h)
{
    h->ctr_ready = true;
    kb_tracer *tr = kb_fabric_tracer(c->fab);
    if (!tr || !kb_tracer_counters(tr) || !kb_tracer_wants(tr, c->n->id))
        return;
    unsigned pcs = h->pc_mask + 1;
    h->pc_ctr = kb_xcalloc(pcs, sizeof *h->pc_ctr);
    int pid = kb_fabric_process(c->fab, c->node);
    for (unsigned i = 0; i < pcs; i++) {
        char *name = kb_asprintf("%s.pc%u", c->n->id, i);
        h->pc_ctr[i] = kb_tracer_counter(tr, pid, name);
        free(name);
    }
}

static void hbm_fini(kb_comp *c)
{
    hbm *h = c->state;
    if (!h)
        return;
    free(h->pc_avail);
    free(h->pc_busy);
    free(h->pc_ctr);
    free(h->pc_dir);
    free(h);
}

/* Commits one burst at `addr` no earlier than `at`; returns its finish. */
static kb_time commit(kb_comp *c, hbm *h, uint64_t addr, int dir, kb_time at)
{
    unsigned pc = (unsigned)(addr >> h->pc_shift) & h->pc_mask;
    kb_time start = at > h->pc_avail[pc] ? at : h->pc_avail[pc];
    if (h->pc_dir[pc] >= 0 && h->pc_dir[pc] != dir)
        start += h->switch_ps;
    kb_time chunk = h->chunk_ps;
    if (c->latency) {
        kb_lat_query q = {.op = "commit", .builtin_ps = h->chunk_ps};
        kb_lat_param(&q, "bytes", (double)h->burst);
        kb_lat_param(&q, "channel", pc);
        kb_lat_param(&q, "write", dir);
        chunk = kb_comp_latency(c, &q);
    }
    kb_time finish = start + chunk;
    h->pc_avail[pc] = finish;
    h->pc_dir[pc] = (signed char)dir;
    h->pc_busy[pc] += chunk;
    if (!h->ctr_ready)
        init_counters(c, h);
    if (h->pc_ctr)
        kb_trace_busy(kb_fabric_tracer(c->fab), h->pc_ctr[pc], finish - chunk, finish);
    return finish;
}

static void finalize(kb_txn *t) { kb_target_finish(t); }

static kb_time hbm_flit(kb_comp *c, kb_flit *f)
{
    hbm *h = c->state;
    kb_txn *t = f->txn;
    kb_mem_req *r = kb_mem_req_of(t);
    if (__builtin_expect(!r, 0)) {
        kb_target_refuse(c, t);
        kb_fabric_free_flit(c->fab, f);
        return KB_FLIT_TAKEN;
    }
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab));
    kb_time start = c->busy_until > now ? c->busy_until : now;
    if (f->idx == 0) {
        kb_comp_busy(c, start, start + c->overhead_ps);
        start += c->overhead_ps;
        t->t_mark = start;
        r->t_serve = now;
    }
    c->busy_until = start;
    if (!kb_flit_at_end(f)) /* passing through */
        return start;
    bool last = f->idx + 1 == t->nflits;
    if (t->nbytes == 0) {
        /* A command (a read): commit every burst of the requested bytes. */
        for (uint64_t off = 0; off < r->nbytes; off += h->burst) {
            kb_time fin = commit(c, h, r->addr + off, 0, start);
            if (fin > t->t_mark)
                t->t_mark = fin;
        }
    } else {
        uint64_t base = r->addr + (uint64_t)f->idx * (uint64_t)kb_topo_params_of(kb_fabric_topo(c->fab))->flit_bytes;
        uint64_t n = f->bytes ? f->bytes : 1;
        for (uint64_t off = 0; off < n; off += h->burst) {
            kb_time fin = commit(c, h, base + off, kb_mem_writes(t) ? 1 : 0, start);
            if (fin > t->t_mark)
                t->t_mark = fin;
        }
    }
    kb_fabric_free_flit(c->fab, f);
    if (!last)
        return KB_FLIT_TAKEN;
    /* Finalise without blocking the worker: the next transaction's flits
     * may be served while this one's bursts commit. */
    if (t->t_mark > now)
        kb_fabric_at(t, t->t_mark, finalize);
    else
        kb_target_finish(t);
    return KB_FLIT_TAKEN;
}

/* Per-channel utilisation; the controller's utilisation is their mean. */
static void hbm_stats(kb_comp *c, kb_val *entry, kb_time now)
{
    hbm *h = c->state;
    kb_val *pcs = kb_obj_put(entry, "pcs", kb_val_arr());
    kb_time sum = 0;
    for (unsigned i = 0; i <= h->pc_mask; i++) {
        kb_val *pc = kb_arr_push(pcs, kb_val_obj());
        kb_obj_int(pc, "pc", i);
        kb_obj_num(pc, "busy_ns", (double)h->pc_busy[i] / 1000.0);
        kb_obj_num(pc, "util", now > 0 ? (double)h->pc_busy[i] / (double)now : 0.0);
        sum += h->pc_busy[i];
    }
    double util = now > 0 ? (double)sum / ((double)now * (h->pc_mask + 1)) : 0.0;
    kb_obj_num(entry, "pc_util", util);
    /* The channels do the controller's work: its utilisation is theirs. */
    kb_val *u = (kb_val *)kb_obj_get(entry, "util");
    if (u && u->type == KB_V_NUM)
        u->u.d = util;
}

const kb_comp_ops kb_hbm_ctrl_ops = {.flit_aware = true,
                                     .init = hbm_init,
                                     .fini = hbm_fini,
                                     .on_flit = hbm_flit,
                                     .stats = hbm_stats};
