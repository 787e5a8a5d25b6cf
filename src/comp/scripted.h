/* Scripted components: components whose behaviour is a script in a higher
 * layer (components written in Lua, src/lua/lcomponent.c; tests drive them
 * from C).
 *
 * The fabric sees an ordinary component: a transaction (or, if the
 * implementation is flit-aware, a flit) reaching the node goes into the
 * component's inbox, a store. The script takes arrivals from the inbox
 * (kb_scripted_take, or kb_scripted_receive, which may block) and must
 * forward or finish each exactly once; it may also send new messages of
 * the kinds its implementation declares. While a component holds any
 * message, the process that receives counts for quiescence reports (it is
 * a daemon otherwise), so a transaction the script drops shows up with
 * the node's inbox.
 *
 * No scripting language here: the script's process is a kb_proc and its
 * blocking receive follows the core's waiter convention (core/waiter.h). */
#ifndef KB_COMP_SCRIPTED_H
#define KB_COMP_SCRIPTED_H

#include "fabric/fabric.h"
#include "topo/registry.h"

typedef struct kb_scripted kb_scripted;

/* Behaviours of scripted implementations: whole transactions, or flits. */
extern const kb_comp_ops kb_scripted_ops_txn;
extern const kb_comp_ops kb_scripted_ops_flit;

/* ---- implementations ----
 *
 * A scripted implementation is a kb_impl the module allocates and owns
 * with everything in it: the registry entry, the attributes a topology
 * may set and the message kinds the script may send. */

/* A new implementation named `name` serving node kinds `kinds`
 * (comma-separated, NULL: any), with no attributes and no message kinds.
 * Strings are copied. */
kb_impl *kb_scripted_impl_new(const char *name, bool flit_aware, const char *kinds, const char *doc);
void kb_scripted_impl_free(kb_impl *impl);
/* A numeric attribute with its default, kept in name order (so the order
 * never depends on where the names came from); `doc` is copied. */
void kb_scripted_impl_add_attr(kb_impl *impl, const char *name, double dflt, const char *doc);
/* The message kinds the implementation defines, from their names (each a
 * non-empty string of under 64 characters, listed once, no builtin kind's
 * name; NULL is refused). The kinds, their names and span names are owned
 * by the implementation. False with *bad set to the index of the first
 * name refused (those before it are kept) and *why to what the name must
 * be ("must be ...", a static string). Call before the implementation is
 * used: a later call may move the kinds already made. */
bool kb_scripted_impl_set_messages(kb_impl *impl, const char *const *names, size_t n, size_t *bad,
                                   const char **why);
/* The message kind named `name` the implementation declares, or NULL. */
const kb_msg_kind *kb_scripted_impl_kind(const kb_impl *impl, const char *name);

/* ---- instances ---- */

/* The scripted state of c, or NULL if c's implementation is not scripted. */
kb_scripted *kb_scripted_of(const kb_comp *c);
kb_comp *kb_scripted_comp(const kb_scripted *s);
/* A weak reference: *ref is cleared when the component goes with its
 * fabric (a higher layer's handle outliving the simulation). NULL drops it. */
void kb_scripted_set_ref(kb_scripted *s, kb_scripted **ref);
/* The process that receives: a daemon while the component holds nothing. */
void kb_scripted_set_proc(kb_scripted *s, kb_proc *proc);
/* Arrivals waiting in the inbox; messages taken and not yet forwarded or
 * finished. */
size_t kb_scripted_queued(const kb_scripted *s);
int kb_scripted_held(const kb_scripted *s);
/* The message taken last ("flit 1/2 of transaction #1 (PeDmaWrite, 512
 * bytes)"), or "" if none since the last kb_scripted_receive began. */
void kb_scripted_describe(const kb_scripted *s, char *buf, size_t n);

/* ---- messages ---- */

/* A message taken from the inbox: a whole transaction or one flit. */
typedef struct kb_scripted_msg {
    kb_scripted *s;
    void *ptr;  /* kb_txn * or kb_flit * */
    bool flit;
    bool done;  /* forwarded or finished */
} kb_scripted_msg;

typedef enum kb_scripted_status {
    KB_SCRIPTED_OK,
    KB_SCRIPTED_DONE,      /* already forwarded or finished */
    KB_SCRIPTED_ENDS_HERE, /* forward: the message ends at this node */
    KB_SCRIPTED_GOES_ON    /* finish: the message goes on past this node */
} kb_scripted_status;

/* The next arrival, without blocking: true with *m, false if the inbox is
 * empty. It becomes the component's current message. */
bool kb_scripted_take(kb_scripted *s, kb_scripted_msg *m);
/* A receive: clears the current message. Without w or with timeout 0, as
 * kb_scripted_take. Otherwise a get from the inbox with w (core/store.h):
 * true with *m when the receiver may go on at once; else w is woken with
 * the arrival taken for it, or (timeout > 0, in ps) with KB_ITEM_NONE when
 * the timeout passes while it still waits for one; the woken side then
 * calls kb_scripted_received. */
bool kb_scripted_receive(kb_scripted *s, kb_scripted_msg *m, kb_waiter *w, kb_time timeout);
/* Ends a receive that blocked, with what its waiter got: true with *m (the
 * current message), false if the timeout came first. */
bool kb_scripted_received(kb_scripted *s, kb_item item, kb_scripted_msg *m);

kb_txn *kb_scripted_msg_txn(const kb_scripted_msg *m);
/* Whether the message is at the last node of its path. */
bool kb_scripted_msg_at_end(const kb_scripted_msg *m);
/* "transaction #3 (MemoryRead, 0 bytes)", as kb_scripted_describe. */
void kb_scripted_msg_describe(const kb_scripted_msg *m, char *buf, size_t n);
/* Sends m on to the next node of its path, now. */
kb_scripted_status kb_scripted_forward(kb_scripted_msg *m);
/* Ends m here: at a memory target the request is served and answered (a
 * read's data, a write's acknowledgement; kb_target_finish), elsewhere the
 * transaction completes; a flit ends its transaction if it is the last. */
kb_scripted_status kb_scripted_finish(kb_scripted_msg *m);

/* A new message of `kind` (one the implementation declares), nbytes from
 * the component's node to dst over the view's shortest path, leaving now
 * as one the node has already handled; its payload carries `tag`. NULL
 * with *err if the implementation does not declare kind (another's, or a
 * builtin's, whose payload is not a tag), there is no route or dst is the
 * node itself. */
kb_txn *kb_scripted_send(kb_scripted *s, const kb_msg_kind *kind, uint32_t dst, kb_view view, uint64_t nbytes,
                         int64_t tag, char **err);
/* The tag of a message a scripted component sent (any leg); false for
 * other messages. */
bool kb_scripted_tag(const kb_txn *t, int64_t *tag);

#endif
