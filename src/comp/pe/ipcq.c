/* PE_IPCQ (builtin.pe_ipcq): the queues between PEs (ipcq.h, docs/ipcq.md).
 *
 * Per installed direction a queue pair: the send side's sequence number
 * and the peer's consumed count as the last credit told it (peer_tail),
 * and the receive side's ring of n_slots slots with the count that arrived
 * and the count consumed (tail). A sender may have n_slots messages not
 * yet consumed; the credit a receiver returns after each slot read frees
 * one. Tokens and credits are matched by address, as the hardware would:
 * a token by the slot address it is written to, a credit by the receive
 * ring it frees.
 *
 * Commands wait here: a send for ring space, a recv for its message, a
 * recv's credit for its delivery. A waiting command is parked in its queue
 * pair's list and resumed (kb_pe_op_continue) by the event that satisfies
 * it: at once under `sleep`, at the next poll under `poll` (the spin is
 * PE_CPU busy time). Runs that end with commands parked here say so in the
 * quiescence report (the deadlock report). */
#include "comp/pe/engines.h"
#include "comp/pe/ipcq.h"

#include "comp/device/control.h"
#include "comp/entry.h"
#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per-direction figures (s:stats(), --stats-json). */
typedef struct dir_stats {
    const char *name;
    uint32_t peer;
    uint64_t sent, received; /* messages */
    uint64_t bytes_sent, bytes_received;
    kb_time credit_wait_ps;  /* sends blocked on a full ring */
    kb_time recv_wait_ps;    /* recvs waiting for their message */
    uint32_t max_occupancy;  /* most slots full at once */
} dir_stats;

struct qp;
typedef struct slot {
    struct qp *q;
    bool pending, full, consumed; /* written (not yet visible), visible, read */
    uint64_t seq, nbytes;
    uint32_t src_rank;
    kb_time t_arrive, t_vis;
    void *data;                   /* data mode: the bytes until they land */
} slot;

typedef struct qp {
    const kb_ipcq_dir_cfg *cfg;
    struct kb_ipcq *owner;
    int index;
    kb_pe *peer;
    uint64_t peer_rx_pa;        /* the paired ring at the peer: my tokens go there */
    uint32_t rx_node;           /* my ring's memory (memory-store domain) and offset */
    uint64_t rx_off;
    uint32_t bank;              /* sram/hbm: the memory node of my ring (the bank hop) */
    const kb_path *path;        /* my PE_DMA -> the peer's: tokens out, credits back */
    /* send side */
    uint64_t seq, peer_tail;
    kb_pe_op *send_head, *send_tail;
    /* receive side */
    uint64_t claimed, tail;
    kb_time last_vis;
    slot *slots;
    kb_pe_op *recv_head, *recv_tail;
    uint32_t occupancy;
    char counter[KB_IPCQ_NAME + 64];
    dir_stats st;
} qp;

typedef struct kb_ipcq {
    kb_comp *c;
    kb_pe *pe;
    kb_ipcq_plan *plan;
    uint32_t rank;
    int nq;
    qp q[KB_IPCQ_MAX_DIRS];
    kb_pe_op *any_head, *any_tail; /* recvs from any direction */
    kb_reporter rep;
    void (*log)(void *ctx, const char *line); /* --ipcq-trace */
    void *log_ctx;
    /* attributes */
    kb_time poll_ps, tier_ps[3];
    double tier_bw[3];
    uint64_t credit_bytes;
    bool credit_fast; /* credit_fast_path: credit_bytes at the route's narrowest link, off the fabric */
    bool tcm_slot_ports;    /* tcm slots go through PE_TCM's ports (else a tier of their own) */
} kb_ipcq;

/* ---- messages ---- */

/* A message in flight: the payload of its one transaction (copied in and
 * out with memcpy: no type punning of the payload words). */
typedef struct token {
    uint64_t dst_pa, seq, nbytes;
    void *data;        /* data mode: its bytes (owned) */
    uint32_t src_rank;
} token;
KB_PAYLOAD_FITS(token);

typedef struct credit_payload {
    uint64_t consumer_seq; /* the receiver's tail after the read */
    uint64_t dst_rx_pa;    /* the ring it frees */
} credit_payload;
KB_PAYLOAD_FITS(credit_payload);

static token token_of(const void *payload)
{
    token t;
    memcpy(&t, payload, sizeof t);
    return t;
}

static void release_token(void *payload)
{
    token t = token_of(payload);
    free(t.data);
    t.data = NULL;
    memcpy(payload, &t, sizeof t);
}

static const char token_layout, credit_layout;
const kb_msg_kind kb_msg_ipcq_token = KB_MSG_KIND("IpcqToken", &token_layout, release_token);
const kb_msg_kind kb_msg_ipcq_credit = KB_MSG_KIND("IpcqCredit", &credit_layout, NULL);

/* ---- state ---- */

static kb_ipcq *ipcq_of(const kb_pe *p)
{
    kb_comp *c = kb_fabric_comp(p->fab, p->ipcq);
    return c->ops == &kb_pe_ipcq_ops ? c->state : NULL;
}

/* The PE_IPCQ beside PE_DMA `dma` (a token or credit ends there), once a
 * plan has reached it. */
static kb_ipcq *ipcq_at_dma(kb_comp *dma) { return kb_pe_dma_ipcq(dma); }

static kb_time ns_ps(double ns) { return (kb_time)llround(ns * 1000.0); }

static kb_sim *sim_of(kb_ipcq *s) { return kb_fabric_sim(s->c->fab); }
static uint64_t ring_bytes(const kb_ipcq *s) { return (uint64_t)s->plan->n_slots * s->plan->slot_size; }

static void drop_plan(kb_ipcq *s)
{
    for (int i = 0; i < s->nq; i++) {
        for (uint32_t k = 0; s->q[i].slots && k < s->plan->n_slots; k++)
            free(s->q[i].slots[k].data);
        free(s->q[i].slots);
    }
    memset(s->q, 0, sizeof s->q);
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
    if (!kb_link_linked(&s->rep.link))
        kb_sim_add_reporter(sim_of(s), &s->rep);
    kb_pe_dma_set_ipcq(f, s->pe->dma, s);
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
    kb_ipcq *s = ipcq_of(p);
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
    kb_ipcq *s = ipcq_of(p);
    return s && s->plan ? s->plan->slot_size : 0;
}

bool kb_ipcq_rank(const kb_pe *p, uint32_t *rank, uint32_t *world)
{
    kb_ipcq *s = ipcq_of(p);
    if (!s || !s->plan)
        return false;
    *rank = s->rank;
    *world = s->plan->npes;
    return true;
}

int kb_ipcq_neighbors(const kb_pe *p, const char **dirs, uint32_t *peers)
{
    kb_ipcq *s = ipcq_of(p);
    if (!s || !s->plan)
        return 0;
    for (int i = 0; i < s->nq; i++) {
        dirs[i] = s->q[i].cfg->name;
        peers[i] = s->q[i].cfg->peer;
    }
    return s->nq;
}

uint64_t kb_ipcq_claim(kb_pe *p, int dir)
{
    kb_ipcq *s = ipcq_of(p);
    return s->q[dir].claimed++;
}

void kb_pe_op_send(kb_pe_op *op, int dir, const kb_tview *src)
{
    op->kind = KB_PE_SEND;
    op->dir = dir;
    op->tcm = *src;
}

void kb_pe_op_recv(kb_pe_op *op, int dir, const kb_tview *out, bool consume)
{
    op->kind = KB_PE_RECV;
    op->dir = dir;
    op->out = *out;
    op->consume = consume;
}

/* ---- trace ---- */

static void span(kb_ipcq *s, const char *name, const char *dir, kb_time a, kb_time b, uint64_t seq, uint64_t n)
{
    kb_tracer *tr = kb_fabric_tracer(s->c->fab);
    if (!tr)
        return;
    char label[KB_IPCQ_NAME + 24];
    snprintf(label, sizeof label, "%s %s", name, dir);
    kb_targ args[2] = {{"seq", NULL, (int64_t)seq}, {"bytes", NULL, (int64_t)n}};
    kb_trace_span(tr, kb_fabric_track(s->c->fab, s->c->node), label, a, b, args, 2, 0, KB_FLOW_NONE);
}

static void occupancy(qp *q, int delta, kb_time at)
{
    q->occupancy = (uint32_t)((int)q->occupancy + delta);
    if (q->occupancy > q->st.max_occupancy)
        q->st.max_occupancy = q->occupancy;
    kb_ipcq *s = q->owner;
    kb_tracer *tr = kb_fabric_tracer(s->c->fab);
    if (tr && kb_fabric_track(s->c->fab, s->c->node))
        kb_trace_value(tr, kb_fabric_process(s->c->fab, s->c->node), q->counter, at, "slots", q->occupancy);
}

void kb_ipcq_set_log(kb_comp *c, void (*log)(void *ctx, const char *line), void *ctx)
{
    kb_ipcq *s = c->state;
    s->log = log;
    s->log_ctx = ctx;
}

/* One --ipcq-trace line: (rank, t, dir, nbytes) and the peer. */
static void trace_line(kb_ipcq *s, const char *what, const qp *q, uint64_t seq, uint64_t n, kb_time at)
{
    if (!s->log)
        return;
    char t[KB_TIME_STRLEN], line[256];
    snprintf(line, sizeof line, "ipcq: rank %u t=%s %s %s seq %llu %llu bytes %s rank %u", s->rank,
             kb_time_format(at, t), what, q->cfg->name, (unsigned long long)seq, (unsigned long long)n,
             what[0] == 's' ? "to" : "from", q->cfg->peer);
    s->log(s->log_ctx, line);
}

/* ---- waiting ---- */

static void park(kb_pe_op **head, kb_pe_op **tail, kb_pe_op *op, kb_time now)
{
    op->ipcq_next = NULL;
    op->t_wait = now;
    if (*tail)
        (*tail)->ipcq_next = op;
    else
        *head = op;
    *tail = op;
}

static kb_pe_op *unpark(kb_pe_op **head, kb_pe_op **tail)
{
    kb_pe_op *op = *head;
    *head = op->ipcq_next;
    if (!*head)
        *tail = NULL;
    op->ipcq_next = NULL;
    return op;
}

/* A parked command goes on: now under sleep; under poll at the first poll
 * after now, the spin since it parked being PE_CPU busy time. */
static kb_time wake(kb_ipcq *s, kb_pe_op *op, kb_time now, const char *what, const char *dir)
{
    kb_time at = now;
    if (s->plan->poll && s->poll_ps > 0) {
        kb_time waited = now - op->t_wait;
        at = op->t_wait + (waited + s->poll_ps - 1) / s->poll_ps * s->poll_ps;
        kb_pe_span(s->pe, s->pe->cpu, "ipcq poll", op->t_wait, at, NULL, 0);
    }
    span(s, what, dir, op->t_wait, at, op->seq, kb_tview_nbytes(op->kind == KB_PE_SEND ? &op->tcm : &op->out));
    kb_pe_op_continue(op, at);
    return at;
}

/* ---- send ---- */

static bool has_space(const kb_ipcq *s, const qp *q) { return q->seq - q->peer_tail < s->plan->n_slots; }

static void serve_senders(qp *q, kb_time now)
{
    kb_ipcq *s = q->owner;
    while (q->send_head && has_space(s, q)) {
        kb_pe_op *op = unpark(&q->send_head, &q->send_tail);
        op->seq = q->seq++;
        kb_time at = wake(s, op, now, "credit wait", q->cfg->name);
        q->st.credit_wait_ps += at - op->t_wait;
    }
}

/* The message leaves: PE_DMA's comm channel reads the source from TCM in
 * vc_chunk_size chunks and starts sending once the first chunk is read and
 * its setup is paid; the command ends when the whole source has been read
 * and the message has left (docs/ipcq.md, step 3). */
static kb_ipcq_step send_token(kb_ipcq *s, qp *q, kb_pe_op *op, kb_time now, kb_time *end)
{
    kb_fabric *f = s->c->fab;
    kb_pe *p = s->pe;
    const kb_path *path = q->path;
    uint64_t n = kb_tview_nbytes(&op->tcm), chunk = kb_pe_dma_chunk(f, p->dma);
    kb_time start, read_end = kb_pe_dma_tcm(p, 0, now, n, true, &start);
    kb_time first = read_end;
    if (chunk && n > chunk && read_end > start) { /* the first chunk read */
        kb_time c1 = start + kb_pe_tcm_ps(p, 0, chunk);
        first = c1 < read_end ? c1 : read_end;
    }
    token tok = {.dst_pa = q->peer_rx_pa + (op->seq % s->plan->n_slots) * s->plan->slot_size,
                 .seq = op->seq, .nbytes = n, .src_rank = s->rank};
    if (op->data) { /* the source's bytes as they are now: data moves with time */
        tok.data = kb_xmalloc(n ? n : 1);
        kb_memstore_read(kb_fabric_memstore(f), op->tcm.domain, op->tcm.offset, tok.data, n);
    }
    kb_txn *t = kb_txn_new(f, &kb_msg_ipcq_token, path, n);
    memcpy(t->payload, &tok, sizeof tok);
    kb_time left = kb_pe_dma_comm(f, p->dma, t, first);
    q->st.sent++;
    q->st.bytes_sent += n;
    trace_line(s, "send", q, op->seq, n, left);
    *end = left > read_end ? left : read_end;
    span(s, "send", q->cfg->name, op->t_issue, *end, op->seq, n);
    return *end > now ? KB_IPCQ_AT : KB_IPCQ_GO;
}

/* ---- arrival ---- */

static qp *qp_by_rx(kb_ipcq *s, uint64_t pa)
{
    for (int i = 0; s->plan && i < s->nq; i++)
        if (pa >= s->q[i].cfg->rx_pa && pa - s->q[i].cfg->rx_pa < ring_bytes(s))
            return &s->q[i];
    return NULL;
}

static bool present(const kb_ipcq *s, const qp *q, uint64_t seq)
{
    const slot *sl = &q->slots[seq % s->plan->n_slots];
    return sl->full && sl->seq == seq && !sl->consumed;
}

static void serve_receivers(qp *q, kb_time now)
{
    kb_ipcq *s = q->owner;
    /* every waiter whose message is now visible (two kernels on one PE may
     * wait on one direction, a future's older message behind a newer one) */
    for (kb_pe_op **link = &q->recv_head, *prev = NULL; *link;) {
        kb_pe_op *op = *link;
        if (!present(s, q, op->seq)) {
            prev = op;
            link = &op->ipcq_next;
            continue;
        }
        *link = op->ipcq_next;
        if (q->recv_tail == op)
            q->recv_tail = prev;
        op->ipcq_next = NULL;
        q->st.recv_wait_ps += wake(s, op, now, "token wait", q->cfg->name) - op->t_wait;
    }
    if (s->any_head && present(s, q, q->claimed)) {
        kb_pe_op *op = unpark(&s->any_head, &s->any_tail);
        op->dir = q->index;
        op->seq = q->claimed++;
        q->st.recv_wait_ps += wake(s, op, now, "token wait", q->cfg->name) - op->t_wait;
    }
}

/* The op-log record of a message written into its slot (ipcq_copy). */
static void log_copy(kb_ipcq *s, const qp *q, const slot *sl, uint64_t slot_pa)
{
    kb_oplog *log = kb_fabric_oplog(s->c->fab);
    if (!kb_oplog_keeps(log)) {
        kb_oplog_add(log, 0, 0, s->c->n->id, "memory", "ipcq_copy", NULL);
        return;
    }
    const kb_ipcq_pe_cfg *src = &s->plan->pes[sl->src_rank];
    char from[64];
    snprintf(from, sizeof from, "sip%d.cube%d.pe%d", src->sip, src->cube, src->pe);
    kb_val *v = kb_val_obj();
    kb_obj_str(v, "src", from);
    kb_obj_str(v, "src_space", "tcm");
    kb_obj_str(v, "dst_space", kb_ipcq_kind_name(s->plan->kind));
    kb_obj_int(v, "dst_addr", (int64_t)slot_pa);
    kb_obj_str(v, "direction", q->cfg->name);
    kb_obj_int(v, "seq", (int64_t)sl->seq);
    kb_obj_int(v, "nbytes", (int64_t)sl->nbytes);
    kb_oplog_add(log, sl->t_arrive, sl->t_vis, s->c->n->id, "memory", "ipcq_copy", v);
}

/* The slot's write is done: data and metadata become visible at once (I6). */
static void slot_visible(kb_sim *sim, void *arg)
{
    slot *sl = arg;
    qp *q = sl->q;
    kb_ipcq *s = q->owner;
    uint64_t k = (uint64_t)(sl - q->slots);
    if (sl->data) {
        kb_memstore_write(kb_fabric_memstore(s->c->fab), q->rx_node, q->rx_off + k * s->plan->slot_size, sl->data,
                          sl->nbytes);
        free(sl->data);
        sl->data = NULL;
    }
    sl->pending = false;
    sl->full = true;
    kb_time now = kb_sim_now(sim);
    q->st.received++;
    q->st.bytes_received += sl->nbytes;
    occupancy(q, 1, now);
    log_copy(s, q, sl, q->cfg->rx_pa + k * s->plan->slot_size);
    serve_receivers(q, now);
}

/* Time to write or read n bytes of a slot: tcm through PE_TCM's port (the
 * IPCQ window is TCM; with tcm_slot_ports false, the original's tier of its
 * own), sram and hbm at their tier's bandwidth plus the hop between the PE
 * and the bank (the path's narrowest link, closed form). */
static kb_time slot_io(kb_ipcq *s, qp *q, int write, kb_time now, uint64_t n)
{
    kb_pe *p = s->pe;
    kb_ipcq_kind k = s->plan->kind;
    kb_time start;
    if (k == KB_IPCQ_TCM && s->tcm_slot_ports)
        return kb_pe_tcm(p, write, now + s->tier_ps[k], n, true, &start);
    kb_time t = now + s->tier_ps[k] + kb_bw_ps(n, s->tier_bw[k]);
    if (k == KB_IPCQ_TCM)
        return t; /* the ring is the PE's own: no hop */
    char *err = NULL;
    const kb_topo *topo = kb_fabric_topo(s->c->fab);
    const kb_path *path = write ? kb_route_pe(topo, p->dma, q->bank, &err) : kb_route(topo, KB_VIEW_DATA, q->bank, p->dma, &err);
    if (path)
        t += kb_path_drain_ps(topo, path, n);
    free(err); /* checked at install: the bank is on the PE's own cube */
    return t;
}

void kb_ipcq_on_token(kb_comp *dma, kb_txn *t)
{
    token v = token_of(t->payload), *tok = &v;
    kb_fabric *f = dma->fab;
    kb_ipcq *s = ipcq_at_dma(dma);
    qp *q = s ? qp_by_rx(s, tok->dst_pa) : NULL;
    if (!q) {
        kb_comp_fail(dma, "an IPCQ message (seq %llu, %llu bytes, from rank %u) arrived for address 0x%llx, "
                          "which is no receive ring of this PE (was the plan reinstalled while it was in flight?)",
                     (unsigned long long)tok->seq, (unsigned long long)tok->nbytes, tok->src_rank,
                     (unsigned long long)tok->dst_pa);
        kb_txn_free(t);
        return;
    }
    uint64_t k = (tok->dst_pa - q->cfg->rx_pa) / s->plan->slot_size;
    slot *sl = &q->slots[k];
    if (k != tok->seq % s->plan->n_slots || sl->pending || (sl->full && !sl->consumed)) {
        kb_comp_fail(dma, "IPCQ direction %s: message seq %llu arrived for slot %llu, which %s",
                     q->cfg->name, (unsigned long long)tok->seq, (unsigned long long)k,
                     k != tok->seq % s->plan->n_slots ? "is not its slot" : "still holds an unread message");
        kb_txn_free(t);
        return;
    }
    kb_time now = kb_sim_now(kb_fabric_sim(f));
    *sl = (slot){.q = q, .pending = true, .seq = tok->seq, .nbytes = tok->nbytes, .src_rank = tok->src_rank,
                 .t_arrive = now, .data = tok->data};
    tok->data = NULL; /* the slot owns the bytes now */
    memcpy(t->payload, tok, sizeof *tok);
    kb_time vis = slot_io(s, q, 1, now, tok->nbytes); /* after the last flit: I6 */
    if (vis < q->last_vis) /* one direction's messages become visible in order */
        vis = q->last_vis;
    q->last_vis = sl->t_vis = vis;
    kb_sim_at(kb_fabric_sim(f), vis, KB_PRIO_NORMAL, slot_visible, sl);
    kb_txn_complete(t);
}

/* ---- recv ---- */

/* The direction whose next message is visible, earliest first. */
static qp *any_ready(kb_ipcq *s)
{
    qp *best = NULL;
    for (int i = 0; i < s->nq; i++) {
        qp *q = &s->q[i];
        if (present(s, q, q->claimed) &&
            (!best || q->slots[q->claimed % s->plan->n_slots].t_vis <
                          best->slots[best->claimed % s->plan->n_slots].t_vis))
            best = q;
    }
    return best;
}

static kb_ipcq_step arrival(kb_ipcq *s, kb_pe_op *op, kb_time now)
{
    if (op->dir < 0) {
        qp *q = any_ready(s);
        if (!q) {
            park(&s->any_head, &s->any_tail, op, now);
            return KB_IPCQ_WAIT;
        }
        op->dir = q->index;
        op->seq = q->claimed++;
        return KB_IPCQ_GO;
    }
    qp *q = &s->q[op->dir];
    if (!op->claimed) {
        op->seq = q->claimed++;
        op->claimed = true;
    }
    if (present(s, q, op->seq))
        return KB_IPCQ_GO;
    park(&q->recv_head, &q->recv_tail, op, now);
    return KB_IPCQ_WAIT;
}

static kb_ipcq_step slot_read(kb_ipcq *s, kb_pe_op *op, kb_time now, kb_time *end)
{
    qp *q = &s->q[op->dir];
    uint64_t k = op->seq % s->plan->n_slots;
    slot *sl = &q->slots[k];
    uint64_t want = kb_tview_nbytes(&op->out);
    if (sl->nbytes != want) {
        char shp[8 * 24 + 8];
        op->error = kb_pe_error(s->pe, op->what, op->kernel,
                                kb_asprintf("the message in direction %s (seq %llu, from rank %u) has %llu bytes; "
                                            "the recv asks for %s %s (%llu bytes)",
                                            q->cfg->name, (unsigned long long)sl->seq, sl->src_rank,
                                            (unsigned long long)sl->nbytes,
                                            kb_shape_str(op->out.ndim, op->out.shape, shp, sizeof shp),
                                            kb_dtype_name(op->out.dtype), (unsigned long long)want));
        return KB_IPCQ_FAILED;
    }
    if (op->data) { /* the slot's bytes now: the credit that frees the slot comes after */
        op->buf = kb_xmalloc(want ? want : 1);
        kb_memstore_read(kb_fabric_memstore(s->c->fab), q->rx_node, q->rx_off + k * s->plan->slot_size, op->buf,
                         want);
    }
    sl->consumed = true;
    trace_line(s, "recv", q, sl->seq, want, now);
    /* the tail passes every read slot from it on (futures may be read out of order) */
    uint64_t before = q->tail;
    while (q->tail < q->claimed && q->slots[q->tail % s->plan->n_slots].consumed &&
           q->slots[q->tail % s->plan->n_slots].seq == q->tail) {
        slot *done = &q->slots[q->tail % s->plan->n_slots];
        done->full = done->consumed = false;
        q->tail++;
        occupancy(q, -1, now);
    }
    op->credit = q->tail != before;
    *end = op->consume ? slot_io(s, q, 0, now, want) : now;
    return *end > now ? KB_IPCQ_AT : KB_IPCQ_GO;
}

static void credit_delivered(kb_txn *t, void *arg)
{
    (void)t;
    kb_pe_op *op = arg;
    kb_ipcq *s = ipcq_of(op->pe);
    kb_time now = kb_sim_now(kb_fabric_sim(op->pe->fab));
    span(s, "credit", s->q[op->dir].cfg->name, op->t_wait, now, op->seq, s->credit_bytes);
    kb_pe_op_continue(op, now);
}

/* A credit on the original's fast path (pe_ipcq.credit_fast_path): it
 * lands at the sender's PE_DMA after credit_bytes at its route's narrowest
 * link, without entering the fabric (docs/fidelity.md). */
static void credit_fast_lands(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_txn *t = arg;
    kb_ipcq_on_credit(kb_fabric_comp(t->fab, t->path->nodes[t->path->n - 1]), t);
}

static kb_ipcq_step credit(kb_ipcq *s, kb_pe_op *op, kb_time now)
{
    if (!op->credit)
        return KB_IPCQ_GO;
    qp *q = &s->q[op->dir];
    kb_fabric *f = s->c->fab;
    kb_txn *t = kb_txn_new(f, &kb_msg_ipcq_credit, q->path, s->credit_bytes);
    *KB_PAYLOAD(t, credit_payload) = (credit_payload){q->tail, q->cfg->rx_pa};
    t->done = credit_delivered;
    t->done_arg = op;
    op->t_wait = now;
    if (s->credit_fast)
        kb_sim_after(sim_of(s), kb_path_drain_ps(kb_fabric_topo(f), q->path, s->credit_bytes), KB_PRIO_NORMAL,
                     credit_fast_lands, t);
    else
        kb_pe_dma_comm(f, s->pe->dma, t, now);
    return KB_IPCQ_WAIT;
}

void kb_ipcq_on_credit(kb_comp *dma, kb_txn *t)
{
    kb_fabric *f = dma->fab;
    const credit_payload *cp = KB_PAYLOAD(t, credit_payload);
    kb_ipcq *s = ipcq_at_dma(dma);
    qp *q = NULL;
    for (int i = 0; s && s->plan && i < s->nq && !q; i++)
        if (s->q[i].peer_rx_pa == cp->dst_rx_pa)
            q = &s->q[i];
    if (!q) {
        kb_comp_fail(dma, "an IPCQ credit arrived for ring 0x%llx, which no direction of this PE sends to",
                     (unsigned long long)cp->dst_rx_pa);
        kb_txn_free(t);
        return;
    }
    if (cp->consumer_seq > q->peer_tail)
        q->peer_tail = cp->consumer_seq;
    serve_senders(q, kb_sim_now(kb_fabric_sim(f)));
    kb_txn_complete(t);
}

/* ---- the stages ---- */

kb_ipcq_step kb_ipcq_run(kb_pe_op *op, kb_ipcq_stage st, kb_time now, kb_time *end)
{
    kb_ipcq *s = ipcq_of(op->pe);
    if (!s || !s->plan || op->dir >= s->nq) { /* checked at the call; a reinstall may have come since */
        op->error = kb_pe_error(op->pe, op->what, op->kernel, kb_xstrdup("the IPCQ plan changed under the command"));
        return KB_IPCQ_FAILED;
    }
    s->pe = op->pe;
    qp *q = op->dir >= 0 ? &s->q[op->dir] : NULL;
    switch (st) {
    case KB_IPCQ_SPACE:
        if (!q->send_head && has_space(s, q)) {
            op->seq = q->seq++;
            return KB_IPCQ_GO;
        }
        park(&q->send_head, &q->send_tail, op, now);
        return KB_IPCQ_WAIT;
    case KB_IPCQ_SEND:
        return send_token(s, q, op, now, end);
    case KB_IPCQ_ARRIVAL:
        return arrival(s, op, now);
    case KB_IPCQ_SLOT_READ:
        return slot_read(s, op, now, end);
    case KB_IPCQ_CREDIT:
        return credit(s, op, now);
    }
    return KB_IPCQ_GO;
}

/* ---- the deadlock report and statistics ---- */

static size_t report_list(kb_ipcq *s, kb_buf *b, const kb_pe_op *op, const qp *q)
{
    size_t n = 0;
    char t[KB_TIME_STRLEN];
    for (; op; op = op->ipcq_next, n++) {
        const kb_ipcq_pe_cfg *me = &s->plan->pes[s->rank];
        kb_buf_printf(b, "\n  sip%d.cube%d.pe%d (rank %u, kernel '%s') blocked in %s since t=%s: ", me->sip,
                      me->cube, me->pe, s->rank, op->kernel ? op->kernel : "?", op->what,
                      kb_time_format(op->t_wait, t));
        if (!q) {
            kb_buf_printf(b, "waiting for a message from any direction (none has arrived)");
            continue;
        }
        const kb_ipcq_pe_cfg *peer = &s->plan->pes[q->cfg->peer];
        if (op->kind == KB_PE_SEND)
            kb_buf_printf(b, "direction %s ring full: messages 0..%llu sent, rank %u (sip%d.cube%d.pe%d) has "
                             "returned credits for %llu of them (n_slots %u)",
                          q->cfg->name, (unsigned long long)q->seq, q->cfg->peer, peer->sip, peer->cube,
                          peer->pe, (unsigned long long)q->peer_tail, s->plan->n_slots);
        else
            kb_buf_printf(b, "waiting for message seq %llu in direction %s from rank %u (sip%d.cube%d.pe%d); "
                             "%llu received so far",
                          (unsigned long long)op->seq, q->cfg->name, q->cfg->peer, peer->sip, peer->cube, peer->pe,
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

static const kb_msg_handler handlers[] = {{&kb_msg_ipcq_install, install}, {NULL, NULL}};

const kb_comp_ops kb_pe_ipcq_ops = {.flit_aware = false,
                                    .handlers = handlers,
                                    .init = ipcq_init,
                                    .fini = ipcq_fini,
                                    .on_txn = kb_store_forward_txn,
                                    .stats = ipcq_stats};
