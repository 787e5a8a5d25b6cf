/* PE_DMA (builtin.pe_dma), a part of the PE wing (pe.h): a read and a
 * write channel (rd_engines / wr_engines transfers in flight each). A
 * transfer holds its channel for the whole round trip, from setup until its
 * acknowledgement or data is back, so the engine counts bound transfers in
 * flight, not transfers started (docs/pe-model.md, Resources); queued
 * transfers start in submission order. The setup overhead (overhead_ns) is
 * paid before the first flit leaves.
 *
 * A third channel, comm (the spec's vc_comm), carries the messages PEs
 * send one another (queues between PEs): separate from the two above, it is
 * taken in request order for the setup overhead of each message and lets
 * it go (no round trip: the wires pace the bytes). Its sender reads a
 * message's source from TCM in vc_chunk_size chunks.
 *
 * PE_DMA is its PE's port onto the fabric: messages for another part of
 * the PE end here, and go to the part that serves their kind
 * (kb_pe_dma_serve). */
#include "comp/pe/engines.h"

#include "core/sim.h"
#include "core/util.h"

#include <stdlib.h>

#define PORT_PARTS 8 /* the PE's other parts, each at most once */

typedef struct channel {
    int cap, busy;
    kb_txn *head, *tail;
} channel;

typedef struct dma {
    channel ch[2];       /* 0 read, 1 write */
    kb_time comm_free;   /* the comm channel: free from */
    uint64_t chunk;      /* vc_chunk_size: bytes the comm channel reads at a time */
    bool read_response; /* read_response_data: a read's response carries its bytes */
    kb_comp *served[PORT_PARTS]; /* parts of the PE whose messages end here */
    int nserved;
} dma;

static void dma_init(kb_comp *c)
{
    dma *d = kb_xcalloc(1, sizeof *d);
    d->ch[0].cap = (int)kb_spec_attr(c->n->spec, "rd_engines");
    d->ch[1].cap = (int)kb_spec_attr(c->n->spec, "wr_engines");
    d->read_response = kb_spec_attr(c->n->spec, "read_response_data") != 0;
    d->chunk = (uint64_t)kb_spec_attr(c->n->spec, "vc_chunk_size");
    c->state = d;
}

static void dma_fini(kb_comp *c) { free(c->state); }

static channel *channel_of(dma *d, const kb_msg_kind *request)
{
    return &d->ch[request == &kb_msg_dma_write ? 1 : 0];
}

static void start(kb_comp *c, channel *ch, kb_txn *t)
{
    ch->busy++;
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab)), setup = c->overhead_ps;
    if (c->latency) {
        kb_lat_query q = {.op = "setup", .builtin_ps = c->overhead_ps};
        kb_lat_param(&q, "bytes", (double)KB_PAYLOAD(t, kb_mem_req)->nbytes);
        kb_lat_param(&q, "write", t->kind == &kb_msg_dma_write);
        setup = kb_comp_latency(c, &q);
    }
    kb_comp_busy(c, now, now + setup);
    KB_PAYLOAD(t, kb_mem_req)->t_chan = now;
    kb_fabric_forward(t, now + setup);
}

/* The op-log record of a finished transfer (the response t is back): from
 * channel acquisition to completion (execution-pe-tl.md §4.3). */
static void log_transfer(kb_comp *c, kb_txn *t, const kb_mem_req *r)
{
    bool write = t->request == &kb_msg_dma_write;
    kb_oplog *log = kb_fabric_oplog(c->fab);
    if (!kb_oplog_keeps(log)) {
        kb_oplog_add(log, 0, 0, c->n->id, "memory", write ? "dma_write" : "dma_read", NULL);
        return;
    }
    const kb_topo *topo = kb_fabric_topo(c->fab);
    const kb_node *target = kb_topo_node(topo, t->path->nodes[0]);
    kb_val *p = kb_val_obj();
    kb_obj_str(p, write ? "dst_space" : "src_space", kb_target_space(target));
    kb_obj_int(p, write ? "dst_addr" : "src_addr", (int64_t)r->addr);
    kb_obj_str(p, write ? "dst" : "src", target->id);
    kb_obj_int(p, "nbytes", (int64_t)r->nbytes);
    kb_oplog_add(kb_fabric_oplog(c->fab), r->t_chan, kb_sim_now(kb_fabric_sim(c->fab)), c->n->id,
                 "memory", write ? "dma_write" : "dma_read", p);
}

/* The handler of the part that serves t's kind here, or false. */
static bool to_served(kb_comp *c, kb_txn *t)
{
    const dma *d = c->state;
    for (int i = 0; i < d->nserved; i++)
        for (const kb_msg_handler *h = d->served[i]->ops->handlers; h && h->kind; h++)
            if (h->kind == t->kind) {
                h->fn(d->served[i], t);
                return true;
            }
    return false;
}

/* A transaction ending at a PE DMA: the response to one of its transfers,
 * or a message for a part it serves. */
static void dma_txn(kb_comp *c, kb_txn *t)
{
    if (t->step + 1 < t->path->n) {
        kb_fabric_forward(t, kb_sim_now(kb_fabric_sim(c->fab)));
        return;
    }
    if (t->kind != &kb_msg_response && to_served(c, t))
        return;
    kb_mem_req *r = kb_mem_req_of(t);
    if (t->kind != &kb_msg_response || !r || r->owner != c) {
        kb_comp_fail(c, "received a %s it did not ask for", t->kind->name);
        kb_txn_free(t);
        return;
    }
    channel *ch = channel_of(c->state, t->request);
    ch->busy--;
    log_transfer(c, t, r);
    kb_txn_complete(t);
    if (ch->head && ch->busy < ch->cap) {
        kb_txn *next = ch->head;
        ch->head = next->next;
        if (!ch->head)
            ch->tail = NULL;
        next->next = NULL;
        start(c, ch, next);
    }
}

static bool refuse(kb_data *data)
{
    if (data && data->release)
        data->release(data);
    return false;
}

bool kb_pe_dma_submit(kb_fabric *f, uint32_t pe_dma, const kb_msg_kind *kind, uint32_t dst, uint64_t addr,
                      uint64_t nbytes, kb_data *data, kb_txn_done_fn done, void *arg, kb_hoplog *log,
                      char **err)
{
    kb_comp *c = kb_fabric_comp(f, pe_dma);
    if (c->ops != &kb_pe_dma_ops) {
        *err = kb_asprintf("%s is not a PE DMA engine (%s)", c->n->id, c->n->spec->impl->name);
        return refuse(data);
    }
    const kb_path *path = kb_route_pe(kb_fabric_topo(f), pe_dma, dst, err);
    if (!path)
        return refuse(data);
    kb_txn *t = kb_mem_txn_new(f, kind, path, addr, nbytes, data);
    t->done = done;
    t->done_arg = arg;
    dma *d = c->state;
    KB_PAYLOAD(t, kb_mem_req)->owner = c;
    KB_PAYLOAD(t, kb_mem_req)->ack_only = kind == &kb_msg_dma_read && !d->read_response;
    kb_txn_set_log(t, log);
    kb_comp_count(c, 1, 0);
    c->bytes += t->nbytes;
    channel *ch = channel_of(d, kind);
    if (ch->busy < ch->cap) {
        start(c, ch, t);
    } else {
        if (ch->tail)
            ch->tail->next = t;
        else
            ch->head = t;
        ch->tail = t;
    }
    return true;
}

kb_time kb_pe_dma_comm(kb_fabric *f, uint32_t pe_dma, kb_txn *t, kb_time ready)
{
    kb_comp *c = kb_fabric_comp(f, pe_dma);
    dma *d = c->state;
    kb_time start;
    kb_time left = kb_pe_take(&d->comm_free, ready, c->overhead_ps, &start);
    kb_comp_busy(c, start, left);
    kb_comp_count(c, 1, 0);
    c->bytes += t->nbytes;
    kb_fabric_forward(t, left);
    return left;
}

bool kb_pe_dma_serve(kb_fabric *f, uint32_t pe_dma, kb_comp *part, char **err)
{
    kb_comp *c = kb_fabric_comp(f, pe_dma);
    if (c->ops != &kb_pe_dma_ops) {
        *err = kb_asprintf("%s is not a PE DMA engine (%s)", c->n->id, c->n->spec->impl->name);
        return false;
    }
    dma *d = c->state;
    for (int i = 0; i < d->nserved; i++)
        if (d->served[i] == part)
            return true;
    if (d->nserved == PORT_PARTS) {
        *err = kb_asprintf("%s serves %d parts already", c->n->id, PORT_PARTS);
        return false;
    }
    d->served[d->nserved++] = part;
    return true;
}

uint64_t kb_pe_dma_chunk(kb_fabric *f, uint32_t pe_dma)
{
    kb_comp *c = kb_fabric_comp(f, pe_dma);
    return c->ops == &kb_pe_dma_ops ? ((dma *)c->state)->chunk : 0;
}

/* The channels: transfers in flight and waiting. */
static void dma_stats(kb_comp *c, kb_val *entry, kb_time now)
{
    (void)now;
    dma *d = c->state;
    static const char *const names[2] = {"read", "write"};
    for (int i = 0; i < 2; i++) {
        int queued = 0;
        for (const kb_txn *t = d->ch[i].head; t; t = t->next)
            queued++;
        kb_val *ch = kb_obj_put(entry, names[i], kb_val_obj());
        kb_obj_int(ch, "in_flight", d->ch[i].busy);
        kb_obj_int(ch, "queued", queued);
    }
}

/* No handler table: what ends here is a response or a served part's. */
const kb_comp_ops kb_pe_dma_ops = {.flit_aware = false,
                                   .init = dma_init,
                                   .fini = dma_fini,
                                   .on_txn = dma_txn,
                                   .stats = dma_stats};
