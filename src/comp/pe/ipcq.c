/* PE_IPCQ (builtin.pe_ipcq): the queues between PEs (ipcq.h, docs/ipcq.md).
 *
 * Per installed direction a queue pair: the send side's sequence number
 * and the peer's consumed count as the last credit told it (peer_tail),
 * and the receive side's ring of n_slots slots with the count that arrived
 * and the count consumed (tail). This file is the component: its state,
 * the plan's install, the lookups the bindings make, the quiescence report
 * (who waits on what when a run ends with commands parked here) and the
 * statistics. The send and recv commands, and the tokens and credits they
 * exchange, are ipcq_cmd.c's. */
#include "comp/pe/ipcq_state.h"

#include "comp/device/control.h"
#include "comp/entry.h"
#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- state ---- */

kb_ipcq *kb_ipcq_of(const kb_pe *p)
{
    kb_comp *c = kb_fabric_comp(p->fab, p->ipcq);
    return c->ops == &kb_pe_ipcq_ops ? c->state : NULL;
}

static kb_time ns_ps(double ns) { return (kb_time)llround(ns * 1000.0); }


static void drop_plan(kb_ipcq *s)
{
    for (int i = 0; i < s->nq; i++) {
        for (uint32_t k = 0; s->q[i].slots && k < s->plan->n_slots; k++)
            free(s->q[i].slots[k].data);
        free(s->q[i].slots);
    }
    free(s->q);
    s->q = NULL;
    s->nq = 0;
    kb_ipcq_plan_unref(s->plan);
    s->plan = NULL;
}

static size_t report(kb_reporter *r, kb_buf *b);

static void ipcq_init(kb_comp *c)
{
    kb_ipcq *s = kb_xcalloc(1, sizeof *s);
    s->c = c;
    const kb_comp_spec *sp = c->n->spec;
    s->poll_ps = ns_ps(kb_spec_attr(sp, "poll_interval_ns"));
    s->tier_ps[KB_IPCQ_TCM] = ns_ps(kb_spec_attr(sp, "tcm_slot_overhead_ns"));
    s->tier_ps[KB_IPCQ_SRAM] = ns_ps(kb_spec_attr(sp, "sram_slot_overhead_ns"));
    s->tier_ps[KB_IPCQ_HBM] = ns_ps(kb_spec_attr(sp, "hbm_slot_overhead_ns"));
    s->tier_bw[KB_IPCQ_TCM] = kb_spec_attr(sp, "tcm_slot_bw_gbs");
    s->tcm_slot_ports = kb_spec_attr(sp, "tcm_slot_ports") != 0;
    s->tier_bw[KB_IPCQ_SRAM] = kb_spec_attr(sp, "sram_slot_bw_gbs");
    s->tier_bw[KB_IPCQ_HBM] = kb_spec_attr(sp, "hbm_slot_bw_gbs");
    s->credit_bytes = (uint64_t)kb_spec_attr(sp, "credit_bytes");
    s->credit_fast = kb_spec_attr(sp, "credit_fast_path") != 0;
    s->rep.report = report;
    c->state = s;
}

static void ipcq_fini(kb_comp *c)
{
    kb_ipcq *s = c->state;
    kb_sim_remove_reporter(&s->rep);
    drop_plan(s);
    free(s);
}

/* ---- install ---- */

/* Whether the PE's queues are idle (nothing sent unread, nobody waiting),
 * so that its plan may be replaced or removed. */
static bool idle(const kb_ipcq *s, char **err)
{
    for (int i = 0; i < s->nq; i++)
        if (s->q[i].send_head || s->q[i].recv_head || s->q[i].tail != s->q[i].claimed ||
            s->q[i].occupancy || s->q[i].seq != s->q[i].peer_tail) {
            *err = kb_asprintf("a new IPCQ plan arrived while direction %s still has messages or waiting "
                               "commands: install between launches",
                               s->q[i].cfg->name);
            return false;
        }
    if (s->any_head) {
        *err = kb_xstrdup("a new IPCQ plan arrived while a recv from any direction waits");
        return false;
    }
    return true;
}

/* rank UINT32_MAX: the PE leaves the queues (a new plan without it). */
static bool apply_plan(kb_ipcq *s, kb_ipcq_plan *plan, uint32_t rank, char **err)
{
    kb_fabric *f = s->c->fab;
    const kb_topo *t = kb_fabric_topo(f);
    if (!idle(s, err))
        return false;
    drop_plan(s);
    if (rank == UINT32_MAX)
        return true;
    plan->refs++;
    s->plan = plan;
    s->rank = rank;
    const kb_ipcq_pe_cfg *me = &plan->pes[rank];
    s->nq = me->ndirs;
    s->q = kb_xcalloc(me->ndirs ? (size_t)me->ndirs : 1, sizeof *s->q);
    for (int i = 0; i < me->ndirs; i++) {
        qp *q = &s->q[i];
        q->cfg = &me->dir[i];
        q->owner = s;
        q->index = i;
        const kb_ipcq_pe_cfg *peer = &plan->pes[q->cfg->peer];
        q->peer = kb_pe_find(f, peer->sip, peer->cube, peer->pe, err);
        if (!q->peer)
            goto fail;
        q->peer_rx_pa = peer->dir[q->cfg->peer_dir].rx_pa;
        q->path = kb_route_pe(t, s->pe->dma, q->peer->dma, err);
        kb_target tg;
        if (!q->path || !kb_resolve_pa(t, q->cfg->rx_pa, &tg, err))
            goto fail;
        q->bank = tg.node;
        q->rx_node = plan->kind == KB_IPCQ_TCM ? s->c->node : tg.node; /* the IPCQ window is PE_IPCQ's */
        q->rx_off = tg.offset;
        q->slots = kb_xcalloc(plan->n_slots, sizeof *q->slots);
        for (uint32_t k = 0; k < plan->n_slots; k++)
            q->slots[k].q = q;
        snprintf(q->counter, sizeof q->counter, "%s %s slots", s->c->n->id, q->cfg->name);
        q->st.name = q->cfg->name;
        q->st.peer = q->cfg->peer;
    }
    if (!kb_pe_dma_serve(f, s->pe->dma, s->c, err)) /* tokens and credits end at PE_DMA */
        goto fail;
    if (!kb_link_linked(&s->rep.link))
        kb_sim_add_reporter(kb_fabric_sim(f), &s->rep);
    return true;
fail: /* the plan was checked against the topology: this is a model error */
    drop_plan(s);
    return false;
}

static uint32_t rank_of(const kb_ipcq_plan *p, const kb_node *n)
{
    for (uint32_t r = 0; r < p->npes; r++)
        if (p->pes[r].sip == n->sip && p->pes[r].cube == n->cube && p->pes[r].pe == n->pe)
            return r;
    return UINT32_MAX;
}

/* The plan's message at this PE_IPCQ, its overhead paid. */
static void install_now(kb_txn *t)
{
    kb_comp *c = kb_txn_comp(t);
    kb_ipcq *s = c->state;
    kb_ipcq_plan *plan = kb_ctrl_object(kb_ctrl_of(t, NULL));
    s->pe = kb_pe_of(c->fab, (uint32_t)kb_topo_pe_node(kb_fabric_topo(c->fab), c->n->sip, c->n->cube, c->n->pe,
                                                       "pe_cpu"));
    uint32_t rank = rank_of(plan, c->n);
    char *err = NULL; /* a PE the plan has no rank for leaves the queues */
    if (!s->pe)
        err = kb_xstrdup("its PE_CPU is not builtin.pe_cpu");
    if (err || !apply_plan(s, plan, rank, &err)) {
        kb_comp_fail(c, "IPCQ install: %s", err);
        free(err);
    }
    kb_txn_complete(t);
}

static void install(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, install_now); }

/* ---- lookups for the commands ---- */

int kb_ipcq_dir(kb_pe *p, const char *name, const char *call, char **err)
{
    kb_ipcq *s = kb_ipcq_of(p);
    if (s && s->plan)
        for (int i = 0; i < s->nq; i++)
            if (strcmp(s->q[i].cfg->name, name) == 0)
                return i;
    if (!err)
        return -1;
    if (!s || !s->plan) {
        *err = kb_asprintf("%s: no IPCQ is installed on sip%d.cube%d.pe%d (torch.install_ipcq{...} first)", call,
                           p->sip, p->cube, p->pe);
        return -1;
    }
    kb_buf b = {0};
    for (int i = 0; i < s->nq; i++)
        kb_buf_printf(&b, "%s%s", i ? ", " : "", s->q[i].cfg->name);
    char *dirs = kb_buf_take(&b);
    *err = kb_asprintf("%s: direction '%s' is not installed on sip%d.cube%d.pe%d (rank %u has: %s)", call, name,
                       p->sip, p->cube, p->pe, s->rank, dirs[0] ? dirs : "no directions");
    free(dirs);
    return -1;
}

uint64_t kb_ipcq_slot_size(const kb_pe *p)
{
    kb_ipcq *s = kb_ipcq_of(p);
    return s && s->plan ? s->plan->slot_size : 0;
}

bool kb_ipcq_rank(const kb_pe *p, uint32_t *rank, uint32_t *world)
{
    kb_ipcq *s = kb_ipcq_of(p);
    if (!s || !s->plan)
        return false;
    *rank = s->rank;
    *world = s->plan->npes;
    return true;
}

int kb_ipcq_neighbors(const kb_pe *p, const char **dirs, uint32_t *peers)
{
    kb_ipcq *s = kb_ipcq_of(p);
    if (!s || !s->plan)
        return 0;
    for (int i = 0; i < s->nq; i++) {
        dirs[i] = s->q[i].cfg->name;
        peers[i] = s->q[i].cfg->peer;
    }
    return s->nq;
}

/* ---- trace ---- */

void kb_ipcq_set_log(kb_comp *c, void (*log)(void *ctx, const char *line), void *ctx)
{
    kb_ipcq *s = c->state;
    s->log = log;
    s->log_ctx = ctx;
}

/* ---- the deadlock report and statistics ---- */

static size_t report_list(kb_ipcq *s, kb_buf *b, const kb_pe_op *op, const qp *q)
{
    size_t n = 0;
    char t[KB_TIME_STRLEN];
    for (; op; op = A(op)->next, n++) {
        const kb_ipcq_pe_cfg *me = &s->plan->pes[s->rank];
        kb_buf_printf(b, "\n  sip%d.cube%d.pe%d (rank %u, kernel '%s') blocked in %s since t=%s: ", me->sip,
                      me->cube, me->pe, s->rank, op->kernel ? op->kernel : "?", op->what,
                      kb_time_format(A(op)->t_wait, t));
        if (!q) {
            kb_buf_printf(b, "waiting for a message from any direction (none has arrived)");
            continue;
        }
        const kb_ipcq_pe_cfg *peer = &s->plan->pes[q->cfg->peer];
        if (A(op)->send)
            kb_buf_printf(b, "direction %s ring full: messages 0..%llu sent, rank %u (sip%d.cube%d.pe%d) has "
                             "returned credits for %llu of them (n_slots %u)",
                          q->cfg->name, (unsigned long long)q->seq, q->cfg->peer, peer->sip, peer->cube,
                          peer->pe, (unsigned long long)q->peer_tail, s->plan->n_slots);
        else
            kb_buf_printf(b, "waiting for message seq %llu in direction %s from rank %u (sip%d.cube%d.pe%d); "
                             "%llu received so far",
                          (unsigned long long)A(op)->seq, q->cfg->name, q->cfg->peer, peer->sip, peer->cube, peer->pe,
                          (unsigned long long)q->st.received);
    }
    return n;
}

static size_t report(kb_reporter *r, kb_buf *b)
{
    kb_ipcq *s = KB_CONTAINER_OF(r, kb_ipcq, rep);
    if (!s->plan)
        return 0;
    size_t n = 0;
    for (int i = 0; i < s->nq; i++) {
        n += report_list(s, b, s->q[i].send_head, &s->q[i]);
        n += report_list(s, b, s->q[i].recv_head, &s->q[i]);
    }
    return n + report_list(s, b, s->any_head, NULL);
}

static void ipcq_stats(kb_comp *c, kb_val *entry, kb_time now)
{
    (void)now;
    kb_ipcq *s = c->state;
    if (!s->plan)
        return;
    kb_obj_int(entry, "rank", s->rank);
    kb_val *dirs = kb_obj_put(entry, "directions", kb_val_arr());
    for (int i = 0; i < s->nq; i++) {
        const dir_stats *st = &s->q[i].st;
        kb_val *d = kb_arr_push(dirs, kb_val_obj());
        kb_obj_str(d, "direction", st->name);
        kb_obj_int(d, "peer", st->peer);
        kb_obj_int(d, "sent", (int64_t)st->sent);
        kb_obj_int(d, "received", (int64_t)st->received);
        kb_obj_int(d, "bytes_sent", (int64_t)st->bytes_sent);
        kb_obj_int(d, "bytes_received", (int64_t)st->bytes_received);
        kb_obj_num(d, "credit_wait_ns", (double)st->credit_wait_ps / 1000.0);
        kb_obj_num(d, "recv_wait_ns", (double)st->recv_wait_ps / 1000.0);
        kb_obj_int(d, "max_occupancy", st->max_occupancy);
    }
}

/* Tokens and credits end at PE_DMA, which hands them here (apply_plan). */
static const kb_msg_handler handlers[] = {{&kb_msg_ipcq_install, install},
                                          {&kb_msg_ipcq_token, kb_ipcq_on_token},
                                          {&kb_msg_ipcq_credit, kb_ipcq_on_credit},
                                          {NULL, NULL}};

const kb_comp_ops kb_pe_ipcq_ops = {.flit_aware = false,
                                    .handlers = handlers,
                                    .init = ipcq_init,
                                    .fini = ipcq_fini,
                                    .on_txn = kb_store_forward_txn,
                                    .stats = ipcq_stats};
