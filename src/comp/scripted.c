/* Scripted components (scripted.h): the inbox, the held count that makes
 * the receiving process a daemon or not, forwarding and finishing what
 * was taken, messages of the implementation's own kinds, and the
 * implementation record. */
#include "comp/scripted.h"

#include "comp/comp.h"
#include "core/proc.h"
#include "core/sim.h"
#include "core/store.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a component took last, kept as fields and formatted on demand
 * (only error messages and inspection read it). */
typedef struct note {
    uint64_t id, bytes; /* id 0: nothing */
    const kb_msg_kind *kind;
    uint32_t flit, nflits; /* flit index + 1, 0 for a whole transaction */
} note;

struct kb_scripted {
    kb_comp *c;
    kb_scripted **ref; /* a higher layer's handle, cleared when the component goes */
    kb_store *inbox;   /* kb_txn* or kb_flit* */
    int held;          /* taken and not yet forwarded or finished */
    kb_proc *proc;     /* the process that receives, once known */
    note cur;
    /* a receive blocked on the inbox */
    kb_waiter *waiter;
    bool waiting;
    kb_time deadline; /* of a receive with a timeout (else -1) */
};

/* A scripted implementation: the registry's kb_impl, its attributes and
 * the message kinds it declares. */
typedef struct scripted_impl {
    kb_impl impl; /* first: a scripted kb_impl * is a scripted_impl * */
    kb_attr_def *attrs;
    size_t cap;
    kb_msg_kind *kinds;
    size_t nkinds;
} scripted_impl;

/* The payload of a message a scripted component sends: an integer tag. */
static const char SCRIPTED_LAYOUT;
typedef struct scripted_payload {
    int64_t tag;
} scripted_payload;
KB_PAYLOAD_FITS(scripted_payload);

/* ---- the fabric side ---- */

static void comp_init(kb_comp *c)
{
    kb_scripted *s = kb_xcalloc(1, sizeof *s);
    s->c = c;
    char name[160];
    snprintf(name, sizeof name, "%s inbox", c->n->id);
    s->inbox = kb_store_new(kb_fabric_sim(c->fab), name, 0);
    c->state = s;
}

static void comp_fini(kb_comp *c)
{
    kb_scripted *s = c->state;
    if (s->ref)
        *s->ref = NULL;
    kb_store_close(s->inbox);
    free(s);
}

static void set_holding(kb_scripted *s, int delta)
{
    s->held += delta;
    if (s->proc) /* a daemon only while it holds nothing */
        s->proc->flags = s->held > 0 ? s->proc->flags & ~KB_PROC_DAEMON : s->proc->flags | KB_PROC_DAEMON;
}

static void arrive(kb_comp *c, void *p)
{
    kb_scripted *s = c->state;
    kb_store_put(s->inbox, (kb_item){.p = p}, NULL); /* unbounded: always goes in */
    set_holding(s, 1);
}

static void comp_txn(kb_comp *c, kb_txn *t) { arrive(c, t); }
static kb_time comp_flit(kb_comp *c, kb_flit *f)
{
    arrive(c, kb_fabric_keep_flit(c->fab, f));
    return KB_FLIT_TAKEN;
}

const kb_comp_ops kb_scripted_ops_txn = {
    .flit_aware = false, .init = comp_init, .fini = comp_fini, .on_txn = comp_txn};
const kb_comp_ops kb_scripted_ops_flit = {
    .flit_aware = true, .init = comp_init, .fini = comp_fini, .on_flit = comp_flit};

/* ---- instances ---- */

kb_scripted *kb_scripted_of(const kb_comp *c)
{
    return c->ops == &kb_scripted_ops_txn || c->ops == &kb_scripted_ops_flit ? c->state : NULL;
}

kb_comp *kb_scripted_comp(const kb_scripted *s) { return s->c; }

void kb_scripted_set_ref(kb_scripted *s, kb_scripted **ref) { s->ref = ref; }

void kb_scripted_set_proc(kb_scripted *s, kb_proc *proc)
{
    s->proc = proc;
    set_holding(s, 0);
}

size_t kb_scripted_queued(const kb_scripted *s) { return kb_store_count(s->inbox); }

int kb_scripted_held(const kb_scripted *s) { return s->held; }

static void describe(const note *n, char *buf, size_t len)
{
    if (!n->id)
        buf[0] = '\0';
    else if (n->flit)
        snprintf(buf, len, "flit %u/%u of transaction #%llu (%s, %llu bytes)", n->flit, n->nflits,
                 (unsigned long long)n->id, n->kind->name, (unsigned long long)n->bytes);
    else
        snprintf(buf, len, "transaction #%llu (%s, %llu bytes)", (unsigned long long)n->id, n->kind->name,
                 (unsigned long long)n->bytes);
}

void kb_scripted_describe(const kb_scripted *s, char *buf, size_t n) { describe(&s->cur, buf, n); }

/* ---- taking messages ---- */

kb_txn *kb_scripted_msg_txn(const kb_scripted_msg *m)
{
    return m->flit ? ((kb_flit *)m->ptr)->txn : m->ptr;
}

static note note_of(const kb_scripted_msg *m)
{
    const kb_txn *t = kb_scripted_msg_txn(m);
    return (note){.id = t->id,
                  .bytes = t->nbytes,
                  .kind = t->kind,
                  .flit = m->flit ? ((kb_flit *)m->ptr)->idx + 1 : 0,
                  .nflits = t->nflits};
}

void kb_scripted_msg_describe(const kb_scripted_msg *m, char *buf, size_t n)
{
    note k = note_of(m);
    describe(&k, buf, n);
}

/* The message an item of the inbox is; it becomes the current one. */
static void take(kb_scripted *s, kb_item item, kb_scripted_msg *m)
{
    *m = (kb_scripted_msg){.s = s, .ptr = item.p, .flit = s->c->ops->flit_aware, .done = false};
    s->cur = note_of(m);
}

bool kb_scripted_take(kb_scripted *s, kb_scripted_msg *m)
{
    kb_item item;
    if (!kb_store_get(s->inbox, &item, NULL))
        return false;
    take(s, item, m);
    return true;
}

/* The deadline of a receive with a timeout: if it is still waiting, it
 * stops waiting and gets nothing. (Callbacks of earlier receives find a
 * different deadline, or none.) */
static void receive_timeout(kb_sim *sim, void *arg)
{
    kb_scripted *s = arg;
    if (!s->waiting || s->deadline != kb_sim_now(sim) || !kb_waiter_queued(s->waiter))
        return;
    kb_waiter_cancel(s->waiter);
    s->waiter->item = KB_ITEM_NONE;
    kb_sim_resuming_last(sim, s->waiter->proc);
    s->waiter->wake(sim, s->waiter);
}

bool kb_scripted_receive(kb_scripted *s, kb_scripted_msg *m, kb_waiter *w, kb_time timeout)
{
    s->cur.id = 0;
    if (!w || timeout == 0)
        return kb_scripted_take(s, m);
    kb_item item;
    if (kb_store_get(s->inbox, &item, w)) {
        take(s, item, m);
        return true;
    }
    s->waiter = w;
    s->waiting = true;
    s->deadline = -1;
    if (timeout > 0 && kb_waiter_queued(w)) { /* still waiting for an arrival */
        kb_sim *sim = kb_fabric_sim(s->c->fab);
        s->deadline = kb_sim_now(sim) + timeout;
        kb_sim_at(sim, s->deadline, KB_PRIO_NORMAL, receive_timeout, s);
    }
    return false;
}

bool kb_scripted_received(kb_scripted *s, kb_item item, kb_scripted_msg *m)
{
    s->waiting = false;
    if (!item.p) /* the timeout came first */
        return false;
    take(s, item, m);
    return true;
}

/* ---- forwarding and finishing ---- */

bool kb_scripted_msg_at_end(const kb_scripted_msg *m)
{
    const kb_txn *t = kb_scripted_msg_txn(m);
    return m->flit ? kb_flit_at_end(m->ptr) : t->step + 1 >= t->path->n;
}

static void done(kb_scripted_msg *m)
{
    m->done = true;
    set_holding(m->s, -1);
}

kb_scripted_status kb_scripted_forward(kb_scripted_msg *m)
{
    if (m->done)
        return KB_SCRIPTED_DONE;
    if (kb_scripted_msg_at_end(m))
        return KB_SCRIPTED_ENDS_HERE;
    kb_time now = kb_sim_now(kb_fabric_sim(m->s->c->fab));
    if (m->flit)
        kb_fabric_send_flit(m->ptr, now);
    else
        kb_fabric_forward(m->ptr, now);
    done(m);
    return KB_SCRIPTED_OK;
}

kb_scripted_status kb_scripted_finish(kb_scripted_msg *m)
{
    if (m->done)
        return KB_SCRIPTED_DONE;
    if (!kb_scripted_msg_at_end(m))
        return KB_SCRIPTED_GOES_ON;
    kb_txn *t = kb_scripted_msg_txn(m);
    kb_fabric *fab = m->s->c->fab;
    bool last = !m->flit || ((kb_flit *)m->ptr)->idx + 1 == t->nflits;
    if (m->flit)
        kb_fabric_free_flit(fab, m->ptr);
    done(m);
    if (!last)
        return KB_SCRIPTED_OK;
    kb_mem_req *r = kb_mem_req_of(t);
    if (r) { /* a memory access: the data moves and it is answered */
        if (!r->t_serve)
            r->t_serve = kb_sim_now(kb_fabric_sim(fab));
        kb_target_finish(t);
    } else {
        kb_txn_complete(t);
    }
    return KB_SCRIPTED_OK;
}

/* ---- messages of the implementation's own kinds ---- */

/* Whether the implementation declares kind (the very descriptor, not a
 * namesake): only its kinds carry a scripted payload. */
static bool declares(const kb_impl *impl, const kb_msg_kind *kind)
{
    const scripted_impl *si = (const scripted_impl *)impl;
    for (size_t i = 0; i < si->nkinds; i++)
        if (&si->kinds[i] == kind)
            return true;
    return false;
}

kb_txn *kb_scripted_send(kb_scripted *s, const kb_msg_kind *kind, uint32_t dst, kb_view view, uint64_t nbytes,
                         int64_t tag, char **err)
{
    const kb_impl *impl = s->c->n->spec->impl;
    if (!declares(impl, kind)) {
        *err = kb_asprintf("%s (%s) declares no message kind %s: it sends only its own", s->c->n->id, impl->name,
                           kind->name);
        return NULL;
    }
    if (dst == s->c->node) {
        *err = kb_asprintf("%s sends to itself", s->c->n->id);
        return NULL;
    }
    const kb_path *path = kb_route(kb_fabric_topo(s->c->fab), view, s->c->node, dst, err);
    if (!path)
        return NULL;
    kb_txn *x = kb_txn_new(s->c->fab, kind, path, nbytes);
    KB_PAYLOAD(x, scripted_payload)->tag = tag;
    kb_fabric_send(s->c->fab, x);
    return x;
}

bool kb_scripted_tag(const kb_txn *t, int64_t *tag)
{
    if (t->request->layout != &SCRIPTED_LAYOUT)
        return false;
    *tag = KB_PAYLOAD((kb_txn *)t, scripted_payload)->tag;
    return true;
}

/* ---- implementations ---- */

kb_impl *kb_scripted_impl_new(const char *name, bool flit_aware, const char *kinds, const char *doc)
{
    scripted_impl *si = kb_xcalloc(1, sizeof *si);
    si->impl.name = kb_xstrdup(name);
    si->impl.kinds = kinds ? kb_xstrdup(kinds) : NULL;
    si->impl.ops = flit_aware ? &kb_scripted_ops_flit : &kb_scripted_ops_txn;
    si->impl.doc = kb_xstrdup(doc);
    si->cap = 4;
    si->impl.attrs = si->attrs = kb_xcalloc(si->cap, sizeof *si->attrs);
    return &si->impl;
}

void kb_scripted_impl_add_attr(kb_impl *impl, const char *name, double dflt, const char *doc)
{
    scripted_impl *si = (scripted_impl *)impl;
    if (impl->nattrs == si->cap) {
        si->cap *= 2;
        si->attrs = kb_xrealloc(si->attrs, si->cap * sizeof *si->attrs);
        impl->attrs = si->attrs;
    }
    size_t at = impl->nattrs;
    while (at > 0 && strcmp(si->attrs[at - 1].name, name) > 0)
        at--;
    memmove(&si->attrs[at + 1], &si->attrs[at], (impl->nattrs - at) * sizeof *si->attrs);
    si->attrs[at] = (kb_attr_def){kb_xstrdup(name), KB_ATTR_NUMBER, dflt, -HUGE_VAL, HUGE_VAL, false, false, NULL,
                                  kb_xstrdup(doc)};
    impl->nattrs++;
}

bool kb_scripted_impl_set_messages(kb_impl *impl, const char *const *names, size_t n, size_t *bad,
                                   const char **why)
{
    scripted_impl *si = (scripted_impl *)impl;
    si->kinds = kb_xrealloc(si->kinds, (si->nkinds + n ? si->nkinds + n : 1) * sizeof *si->kinds);
    for (size_t i = 0; i < n; i++) {
        const char *k = names[i];
        bool fresh = k && *k && strlen(k) < 64;
        for (size_t j = 0; fresh && j < si->nkinds; j++)
            fresh = strcmp(si->kinds[j].name, k) != 0;
        *why = NULL;
        if (!fresh)
            *why = "must be a new message kind name (a non-empty string of under 64 characters, each listed once)";
        else if (kb_comp_builtin_kind(k))
            *why = "must not be a builtin message kind's name (MemoryWrite, Transfer, KernelLaunch ...): traces "
                   "and errors could not tell the two apart";
        if (*why) {
            *bad = i;
            return false;
        }
        si->kinds[si->nkinds++] = (kb_msg_kind){.name = kb_xstrdup(k),
                                                .data_span = kb_asprintf("%s data", k),
                                                .ack_span = kb_asprintf("%s ack", k),
                                                .layout = &SCRIPTED_LAYOUT};
    }
    return true;
}

const kb_msg_kind *kb_scripted_impl_kind(const kb_impl *impl, const char *name)
{
    const scripted_impl *si = (const scripted_impl *)impl;
    for (size_t i = 0; i < si->nkinds; i++)
        if (strcmp(si->kinds[i].name, name) == 0)
            return &si->kinds[i];
    return NULL;
}

void kb_scripted_impl_free(kb_impl *impl)
{
    scripted_impl *si = (scripted_impl *)impl;
    for (size_t i = 0; i < impl->nattrs; i++) {
        free((char *)si->attrs[i].name);
        free((char *)si->attrs[i].doc);
    }
    for (size_t i = 0; i < si->nkinds; i++) {
        free((char *)si->kinds[i].name);
        free((char *)si->kinds[i].data_span);
        free((char *)si->kinds[i].ack_span);
    }
    free(si->kinds);
    free(si->attrs);
    free((char *)impl->name);
    free((char *)impl->kinds);
    free((char *)impl->doc);
    free(si);
}
