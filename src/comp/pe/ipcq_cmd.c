/* The send and recv commands of PE_IPCQ (ipcq.h, docs/ipcq.md), and the
 * tokens and credits they exchange:
 *   send: dispatch -> ring space (credits) -> the comm channel reads the
 *         source from TCM and the token leaves (the command ends here)
 *   recv: dispatch -> the token is in the slot -> slot read (+ bank hop
 *         for sram/hbm) -> the credit reaches the sender
 * Tokens and credits are matched by address, as the hardware would: a
 * token by the slot address it is written to, a credit by the receive ring
 * it frees. A waiting command is parked in its queue pair's list and
 * resumed (kb_pe_op_continue) by the event that satisfies it: at once
 * under `sleep`, at the next poll under `poll` (the spin is PE_CPU busy
 * time). */
#include "comp/pe/ipcq_state.h"

#include "core/sim.h"
#include "core/util.h"
#include "mem/memstore.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kb_sim *sim_of(kb_ipcq *s) { return kb_fabric_sim(s->c->fab); }
static uint64_t ring_bytes(const kb_ipcq *s) { return (uint64_t)s->plan->n_slots * s->plan->slot_size; }

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
    A(op)->next = NULL;
    A(op)->t_wait = now;
    if (*tail)
        A(*tail)->next = op;
    else
        *head = op;
    *tail = op;
}

static kb_pe_op *unpark(kb_pe_op **head, kb_pe_op **tail)
{
    kb_pe_op *op = *head;
    *head = A(op)->next;
    if (!*head)
        *tail = NULL;
    A(op)->next = NULL;
    return op;
}

/* A parked command goes on: now under sleep; under poll at the first poll
 * after now, the spin since it parked being PE_CPU busy time. */
static kb_time wake(kb_ipcq *s, kb_pe_op *op, kb_time now, const char *what, const char *dir)
{
    kb_time at = now;
    if (s->plan->poll && s->poll_ps > 0) {
        kb_time waited = now - A(op)->t_wait;
        at = A(op)->t_wait + (waited + s->poll_ps - 1) / s->poll_ps * s->poll_ps;
        kb_pe_span(s->pe, s->pe->cpu, "ipcq poll", A(op)->t_wait, at, NULL, 0);
    }
    span(s, what, dir, A(op)->t_wait, at, A(op)->seq, kb_tview_nbytes(A(op)->send ? &A(op)->src : &op->out));
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
        A(op)->seq = q->seq++;
        kb_time at = wake(s, op, now, "credit wait", q->cfg->name);
        q->st.credit_wait_ps += at - A(op)->t_wait;
    }
}

/* The message leaves: PE_DMA's comm channel reads the source from TCM in
 * vc_chunk_size chunks and starts sending once the first chunk is read and
 * its setup is paid; the command ends when the whole source has been read
 * and the message has left (docs/ipcq.md, step 3). */
static kb_pe_step send_token(kb_ipcq *s, qp *q, kb_pe_op *op, kb_time now, kb_time *end)
{
    kb_fabric *f = s->c->fab;
    kb_pe *p = s->pe;
    const kb_path *path = q->path;
    uint64_t n = kb_tview_nbytes(&A(op)->src), chunk = kb_pe_dma_chunk(f, p->dma);
    kb_time start, read_end = kb_pe_dma_tcm(p, 0, now, n, true, &start);
    kb_time first = read_end;
    if (chunk && n > chunk && read_end > start) { /* the first chunk read */
        kb_time c1 = start + kb_pe_tcm_ps(p, 0, chunk);
        first = c1 < read_end ? c1 : read_end;
    }
    token tok = {.dst_pa = q->peer_rx_pa + (A(op)->seq % s->plan->n_slots) * s->plan->slot_size,
                 .seq = A(op)->seq, .nbytes = n, .src_rank = s->rank};
    if (op->data) { /* the source's bytes as they are now: data moves with time */
        tok.data = kb_xmalloc(n ? n : 1);
        kb_memstore_read(kb_fabric_memstore(f), A(op)->src.domain, A(op)->src.offset, tok.data, n);
    }
    kb_txn *t = kb_txn_new(f, &kb_msg_ipcq_token, path, n);
    memcpy(t->payload, &tok, sizeof tok);
    kb_time left = kb_pe_dma_comm(f, p->dma, t, first);
    q->st.sent++;
    q->st.bytes_sent += n;
    trace_line(s, "send", q, A(op)->seq, n, left);
    *end = left > read_end ? left : read_end;
    span(s, "send", q->cfg->name, op->t_issue, *end, A(op)->seq, n);
    return *end > now ? KB_PE_AT : KB_PE_NEXT;
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
        if (!present(s, q, A(op)->seq)) {
            prev = op;
            link = &A(op)->next;
            continue;
        }
        *link = A(op)->next;
        if (q->recv_tail == op)
            q->recv_tail = prev;
        A(op)->next = NULL;
        q->st.recv_wait_ps += wake(s, op, now, "token wait", q->cfg->name) - A(op)->t_wait;
    }
    if (s->any_head && present(s, q, q->claimed)) {
        kb_pe_op *op = unpark(&s->any_head, &s->any_tail);
        A(op)->dir = q->index;
        A(op)->seq = q->claimed++;
        q->st.recv_wait_ps += wake(s, op, now, "token wait", q->cfg->name) - A(op)->t_wait;
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

void kb_ipcq_on_token(kb_comp *c, kb_txn *t)
{
    token v = token_of(t->payload), *tok = &v;
    kb_fabric *f = c->fab;
    kb_ipcq *s = c->state;
    qp *q = s ? qp_by_rx(s, tok->dst_pa) : NULL;
    if (!q) {
        kb_comp_fail(c, "an IPCQ message (seq %llu, %llu bytes, from rank %u) arrived for address 0x%llx, "
                          "which is no receive ring of this PE (was the plan reinstalled while it was in flight?)",
                     (unsigned long long)tok->seq, (unsigned long long)tok->nbytes, tok->src_rank,
                     (unsigned long long)tok->dst_pa);
        kb_txn_free(t);
        return;
    }
    uint64_t k = (tok->dst_pa - q->cfg->rx_pa) / s->plan->slot_size;
    slot *sl = &q->slots[k];
    if (k != tok->seq % s->plan->n_slots || sl->pending || (sl->full && !sl->consumed)) {
        kb_comp_fail(c, "IPCQ direction %s: message seq %llu arrived for slot %llu, which %s",
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

static kb_pe_step arrival(kb_ipcq *s, kb_pe_op *op, kb_time now)
{
    if (A(op)->dir < 0) {
        qp *q = any_ready(s);
        if (!q) {
            park(&s->any_head, &s->any_tail, op, now);
            return KB_PE_WAIT;
        }
        A(op)->dir = q->index;
        A(op)->seq = q->claimed++;
        return KB_PE_NEXT;
    }
    qp *q = &s->q[A(op)->dir];
    if (!A(op)->claimed) {
        A(op)->seq = q->claimed++;
        A(op)->claimed = true;
    }
    if (present(s, q, A(op)->seq))
        return KB_PE_NEXT;
    park(&q->recv_head, &q->recv_tail, op, now);
    return KB_PE_WAIT;
}

static kb_pe_step slot_read(kb_ipcq *s, kb_pe_op *op, kb_time now, kb_time *end)
{
    qp *q = &s->q[A(op)->dir];
    uint64_t k = A(op)->seq % s->plan->n_slots;
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
        return KB_PE_FAILED;
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
    A(op)->credit = q->tail != before;
    *end = A(op)->consume ? slot_io(s, q, 0, now, want) : now;
    return *end > now ? KB_PE_AT : KB_PE_NEXT;
}

static void credit_delivered(kb_txn *t, void *arg)
{
    (void)t;
    kb_pe_op *op = arg;
    kb_ipcq *s = kb_ipcq_of(op->pe);
    kb_time now = kb_sim_now(kb_fabric_sim(op->pe->fab));
    span(s, "credit", s->q[A(op)->dir].cfg->name, A(op)->t_wait, now, A(op)->seq, s->credit_bytes);
    kb_pe_op_continue(op, now);
}

/* A credit on the original's fast path (pe_ipcq.credit_fast_path): it
 * lands at the sender's PE_DMA after credit_bytes at its route's narrowest
 * link, without entering the fabric (docs/fidelity.md). */
static void credit_fast_lands(kb_sim *sim, void *arg)
{
    (void)sim;
    kb_pe_op *op = arg;
    kb_txn *t = A(op)->fast_credit;
    A(op)->fast_credit = NULL;
    const qp *q = &kb_ipcq_of(op->pe)->q[A(op)->dir];
    kb_ipcq_on_credit(kb_fabric_comp(t->fab, q->peer->ipcq), t);
}

static kb_pe_step credit(kb_ipcq *s, kb_pe_op *op, kb_time now)
{
    if (!A(op)->credit)
        return KB_PE_NEXT;
    qp *q = &s->q[A(op)->dir];
    kb_fabric *f = s->c->fab;
    kb_txn *t = kb_txn_new(f, &kb_msg_ipcq_credit, q->path, s->credit_bytes);
    *KB_PAYLOAD(t, credit_payload) = (credit_payload){q->tail, q->cfg->rx_pa};
    t->done = credit_delivered;
    t->done_arg = op;
    A(op)->t_wait = now;
    if (s->credit_fast) {
        A(op)->fast_credit = t;
        kb_sim_after(sim_of(s), kb_path_drain_ps(kb_fabric_topo(f), q->path, s->credit_bytes), KB_PRIO_NORMAL,
                     credit_fast_lands, op);
    } else {
        kb_pe_dma_comm(f, s->pe->dma, t, now);
    }
    return KB_PE_WAIT;
}

void kb_ipcq_on_credit(kb_comp *c, kb_txn *t)
{
    kb_fabric *f = c->fab;
    const credit_payload *cp = KB_PAYLOAD(t, credit_payload);
    kb_ipcq *s = c->state;
    qp *q = NULL;
    for (int i = 0; s && s->plan && i < s->nq && !q; i++)
        if (s->q[i].peer_rx_pa == cp->dst_rx_pa)
            q = &s->q[i];
    if (!q) {
        kb_comp_fail(c, "an IPCQ credit arrived for ring 0x%llx, which no direction of this PE sends to",
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

/* The state a stage of op works on, or NULL with op->error set: the
 * direction was checked at the call, but a reinstall may have come since. */
static kb_ipcq *state_for(kb_pe_op *op)
{
    kb_ipcq *s = kb_ipcq_of(op->pe);
    if (!s || !s->plan || A(op)->dir >= s->nq) {
        op->error = kb_pe_error(op->pe, op->what, op->kernel, kb_xstrdup("the IPCQ plan changed under the command"));
        return NULL;
    }
    s->pe = op->pe;
    return s;
}

static kb_pe_step space_stage(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)at;
    kb_ipcq *s = state_for(op);
    if (!s)
        return KB_PE_FAILED;
    qp *q = &s->q[A(op)->dir];
    if (!q->send_head && has_space(s, q)) {
        A(op)->seq = q->seq++;
        return KB_PE_NEXT;
    }
    park(&q->send_head, &q->send_tail, op, now);
    return KB_PE_WAIT;
}

static kb_pe_step send_stage(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_ipcq *s = state_for(op);
    return s ? send_token(s, &s->q[A(op)->dir], op, now, at) : KB_PE_FAILED;
}

static kb_pe_step arrival_stage(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)at;
    kb_ipcq *s = state_for(op);
    return s ? arrival(s, op, now) : KB_PE_FAILED;
}

static kb_pe_step slot_read_stage(kb_pe_op *op, kb_time now, kb_time *at)
{
    kb_ipcq *s = state_for(op);
    return s ? slot_read(s, op, now, at) : KB_PE_FAILED;
}

static kb_pe_step credit_stage(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)at;
    kb_ipcq *s = state_for(op);
    return s ? credit(s, op, now) : KB_PE_FAILED;
}

/* Data mode: the message's bytes, read from the slot, land in the result. */
static void land(kb_pe_op *op)
{
    if (op->buf)
        kb_memstore_write(kb_fabric_memstore(op->pe->fab), op->out.domain, op->out.offset, op->buf,
                          kb_tview_nbytes(&op->out));
}

static const kb_pe_cmd send_cmd = {.name = "send", .stages = {kb_pe_stage_dispatch, space_stage, send_stage}};
static const kb_pe_cmd recv_cmd = {
    .name = "recv", .stages = {kb_pe_stage_dispatch, arrival_stage, slot_read_stage, credit_stage}, .land = land};

/* ---- building the commands ---- */

uint64_t kb_ipcq_claim(kb_pe *p, int dir)
{
    kb_ipcq *s = kb_ipcq_of(p);
    return s->q[dir].claimed++;
}

void kb_pe_op_send(kb_pe_op *op, int dir, const kb_tview *src)
{
    op->cmd = &send_cmd;
    A(op)->send = true;
    A(op)->dir = dir;
    A(op)->src = *src;
}

void kb_pe_op_recv(kb_pe_op *op, int dir, const kb_tview *out, bool consume, const uint64_t *seq)
{
    op->cmd = &recv_cmd;
    A(op)->dir = dir;
    op->out = *out;
    A(op)->consume = consume;
    A(op)->claimed = seq != NULL;
    A(op)->seq = seq ? *seq : 0;
}

int kb_ipcq_op_dir(const kb_pe_op *op) { return A(op)->dir; }
