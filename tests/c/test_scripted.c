/* Scripted components (src/comp/scripted.c) driven from C alone, with no
 * Lua: the test is the script. Over ~500 lines as one suite: its cases
 * read as the specification of src/comp/scripted.h. It takes arrivals
 * from a component's inbox, forwards, finishes and sends, and checks the held count and its
 * effect on the receiving process.
 *
 * Topology: a builtin transit node `a` and three scripted nodes, `s`
 * between `a` and the others, `mem` (a memory target) and `peer`:
 *
 *   a -- s -- mem
 *        |
 *        peer
 *
 * Links of 256 GB/s and 2 mm at 0.5 ns/mm, 256-byte flits: a full flit
 * occupies a link for 1 ns and arrives 1 ns after it has been sent; an
 * empty flit (a control message) arrives 1 ns after it leaves. A
 * component that takes whole transactions sees one when its last flit has
 * arrived. Every expected time below is derived from those numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "actor.h"
#include "check.h"
#include "comp/scripted.h"
#include "fabric_fixture.h"
#include "mem/memstore.h"

#define NS(x) ((kb_time)((x) * 1000))

typedef struct world {
    fixture fx;
    kb_impl *whole, *flits; /* scripted implementations: transactions, flits */
    kb_scripted *s, *mem, *peer;
} world;

static kb_scripted *scripted_at(world *w, const char *id)
{
    return kb_scripted_of(kb_fabric_comp(w->fx.fab, node_of(&w->fx, id)));
}

/* The topology with `s_impl` at s and `mem_impl` at mem. */
static void open_world(world *w, const char *s_impl, const char *mem_impl)
{
    memset(w, 0, sizeof *w);
    w->whole = kb_scripted_impl_new("test.whole", false, NULL, "whole transactions");
    w->flits = kb_scripted_impl_new("test.flits", true, NULL, "every flit");
    size_t bad = 0;
    const char *why = NULL;
    const char *const kinds[] = {"Ping"};
    assert_true(kb_scripted_impl_set_messages(w->whole, kinds, 1, &bad, &why));
    assert_true(kb_scripted_impl_set_messages(w->flits, kinds, 1, &bad, &why)); /* a namesake of another impl */
    fixture *fx = &w->fx;
    fx->reg = kb_registry_new();
    kb_comp_register_builtins(fx->reg);
    assert_true(kb_registry_add(fx->reg, w->whole));
    assert_true(kb_registry_add(fx->reg, w->flits));
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "system: { ns_per_mm: 0.5, flit_bytes: 256 }\n"
             "graph:\n"
             "  nodes:\n"
             "    - { id: a, impl: builtin.forwarding }\n"
             "    - { id: s, impl: %s }\n"
             "    - { id: mem, kind: hbm_ctrl, impl: %s }\n"
             "    - { id: peer, impl: test.whole }\n"
             "  links:\n"
             "    - { src: a, dst: s, bw_gbs: 256, mm: 2 }\n"
             "    - { src: s, dst: mem, bw_gbs: 256, mm: 2 }\n"
             "    - { src: s, dst: peer, bw_gbs: 256, mm: 2 }\n",
             s_impl, mem_impl);
    char *err = NULL;
    if (!(fx->topo = kb_topo_load_string(yaml, "scripted.yaml", NULL, 0, fx->reg, &err)))
        fail_msg("topology: %s", err);
    fx->sim = kb_sim_new();
    if (!(fx->fab = kb_fabric_new(fx->sim, fx->topo, &err)))
        fail_msg("fabric: %s", err);
    w->s = scripted_at(w, "s");
    w->mem = scripted_at(w, "mem");
    w->peer = scripted_at(w, "peer");
    assert_null(scripted_at(w, "a")); /* a builtin */
}

static void close_world(world *w)
{
    fixture_close(&w->fx);
    kb_scripted_impl_free(w->whole);
    kb_scripted_impl_free(w->flits);
}

static void transfer(world *w, const char *dst, uint64_t nbytes, done_rec *d)
{
    char *err = NULL;
    bool ok = kb_transfer(w->fx.fab, node_of(&w->fx, "a"), node_of(&w->fx, dst), KB_VIEW_DATA, nbytes, false,
                          record_done, d, NULL, NULL, &err);
    if (!ok)
        fail_msg("transfer: %s", err);
}

/* A memory access of `kind` from a to mem, injected at a now. */
static kb_txn *access(world *w, const kb_msg_kind *kind, uint64_t addr, uint64_t nbytes, kb_data *data,
                      done_rec *d)
{
    char *err = NULL;
    const kb_path *p = kb_route(w->fx.topo, KB_VIEW_DATA, node_of(&w->fx, "a"), node_of(&w->fx, "mem"), &err);
    if (!p)
        fail_msg("route: %s", err);
    kb_txn *t = kb_mem_txn_new(w->fx.fab, kind, p, addr, nbytes, data);
    t->done = record_done;
    t->done_arg = d;
    kb_fabric_inject(w->fx.fab, t);
    return t;
}

static void assert_current(const kb_scripted *s, const char *want)
{
    char buf[160];
    kb_scripted_describe(s, buf, sizeof buf);
    assert_string_equal(buf, want);
}

/* Takes the one message waiting at s and forwards it. */
static void pass_on(kb_scripted *s)
{
    kb_scripted_msg m;
    assert_true(kb_scripted_take(s, &m));
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
}

/* Processes events one at a time until s has something in its inbox. */
static void step_until_queued(world *w, const kb_scripted *s)
{
    while (kb_scripted_queued(s) == 0)
        assert_int_equal(kb_sim_step(w->fx.sim, 1, NULL), KB_RUN_UNTIL);
}

static void test_arrival_waits_in_the_inbox_and_counts_as_held(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    done_rec d = {0};
    transfer(&w, "mem", 256, &d);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    /* the flit reaches s at 1 + 1 ns, and nothing happens until it is taken */
    assert_int_equal(kb_sim_now(w.fx.sim), NS(2));
    assert_int_equal(kb_scripted_queued(w.s), 1);
    assert_int_equal(kb_scripted_held(w.s), 1);
    assert_current(w.s, "");
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.s, &m));
    assert_int_equal(kb_scripted_queued(w.s), 0);
    assert_int_equal(kb_scripted_held(w.s), 1);
    assert_current(w.s, "transaction #1 (Transfer, 256 bytes)");
    assert_false(kb_scripted_msg_at_end(&m));
    assert_false(kb_scripted_take(w.s, &m));
    assert_int_equal(d.count, 0);
    close_world(&w);
}

static void test_forward_sends_on_now_and_finish_ends_the_transaction(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    done_rec d = {0};
    transfer(&w, "mem", 256, &d);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.s, &m));
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_GOES_ON);
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
    assert_true(m.done);
    assert_int_equal(kb_scripted_held(w.s), 0);
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_DONE);
    assert_int_equal(kb_scripted_held(w.s), 0);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    /* sent on at 2 ns, at mem 2 ns later */
    assert_int_equal(kb_sim_now(w.fx.sim), NS(4));
    assert_true(kb_scripted_take(w.mem, &m));
    assert_true(kb_scripted_msg_at_end(&m));
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_ENDS_HERE);
    assert_int_equal(kb_scripted_held(w.mem), 1);
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_OK);
    assert_int_equal(kb_scripted_held(w.mem), 0);
    /* a Transfer is done where it is handled */
    assert_int_equal(d.count, 1);
    assert_int_equal(d.at, NS(4));
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_DONE);
    assert_int_equal(kb_fabric_live_txns(w.fx.fab), 0);
    close_world(&w);
}

static void test_finish_at_a_memory_target_answers_a_read_with_its_bytes(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    done_rec d = {0};
    access(&w, &kb_msg_dma_read, 0, 512, NULL, &d);
    /* the read command is an empty flit: at s at 1 ns, at mem at 2 ns */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    pass_on(w.s);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(2));
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.mem, &m));
    assert_current(w.mem, "transaction #1 (PeDmaRead, 0 bytes)");
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_OK);
    /* The answer carries the 512 bytes back: two flits on mem -> s at 2-3
     * and 3-4 ns, the last at s at 5 ns; through s. The request's payload
     * moved to it, stamped with when the target served it. */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(5));
    assert_true(kb_scripted_take(w.s, &m));
    assert_current(w.s, "transaction #2 (Response, 512 bytes)");
    kb_mem_req *r = kb_mem_req_of(kb_scripted_msg_txn(&m));
    assert_non_null(r);
    assert_int_equal(r->nbytes, 512);
    assert_int_equal(r->t_serve, NS(2));
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
    /* then on s -> a at 5-6 and 6-7 ns, the last at a at 8 ns: done */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.at, NS(8));
    assert_int_equal(kb_fabric_live_txns(w.fx.fab), 0);
    close_world(&w);
}

static void test_finish_at_a_memory_target_stores_a_write_and_acknowledges_it(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    unsigned char bytes[256], back[256];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (unsigned char)(i * 7 + 1);
    done_rec d = {0};
    access(&w, &kb_msg_dma_write, 4096, sizeof bytes, kb_data_buffer(bytes, sizeof bytes), &d);
    /* one full flit: at s at 2 ns, at mem at 4 ns */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    pass_on(w.s);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(4));
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.mem, &m));
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_OK);
    kb_memstore_read(kb_fabric_memstore(w.fx.fab), node_of(&w.fx, "mem"), 4096, back, sizeof back);
    assert_memory_equal(back, bytes, sizeof bytes);
    /* the acknowledgement, an empty flit: at s at 5 ns, at a at 6 ns */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_true(kb_scripted_take(w.s, &m));
    assert_current(w.s, "transaction #2 (Response, 0 bytes)");
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.at, NS(6));
    close_world(&w);
}

static void test_send_of_a_declared_kind_reaches_a_second_scripted_component(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    const kb_msg_kind *ping = kb_scripted_impl_kind(w.whole, "Ping");
    assert_non_null(ping);
    char *err = NULL;
    kb_txn *t = kb_scripted_send(w.s, ping, node_of(&w.fx, "peer"), KB_VIEW_DATA, 0, 7, &err);
    assert_non_null(t);
    /* s counts what it sends; sending is no holding */
    assert_int_equal(kb_scripted_comp(w.s)->txns, 1);
    assert_int_equal(kb_scripted_held(w.s), 0);
    /* an empty flit: at peer 1 ns later */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(1));
    assert_int_equal(kb_scripted_held(w.peer), 1);
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.peer, &m));
    const kb_txn *got = kb_scripted_msg_txn(&m);
    assert_ptr_equal(got->kind, ping);
    int64_t tag = 0;
    assert_true(kb_scripted_tag(got, &tag));
    assert_int_equal(tag, 7);
    assert_current(w.peer, "transaction #1 (Ping, 0 bytes)");
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_OK);
    assert_int_equal(kb_scripted_held(w.peer), 0);
    assert_int_equal(kb_fabric_live_txns(w.fx.fab), 0);
    close_world(&w);
}

static void test_send_refuses_the_node_itself_and_kinds_not_declared(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    assert_null(kb_scripted_impl_kind(w.whole, "Pong"));
    char *err = NULL;
    const kb_msg_kind *ping = kb_scripted_impl_kind(w.whole, "Ping");
    assert_null(kb_scripted_send(w.s, ping, node_of(&w.fx, "s"), KB_VIEW_DATA, 0, 0, &err));
    assert_string_equal(err, "s sends to itself");
    free(err);
    /* a builtin kind, whose payload is not a tag, and another implementation's namesake */
    uint32_t mem = node_of(&w.fx, "mem");
    assert_null(kb_scripted_send(w.s, &kb_msg_mem_write, mem, KB_VIEW_DATA, 256, 0, &err));
    assert_string_equal(err, "s (test.whole) declares no message kind MemoryWrite: it sends only its own");
    free(err);
    const kb_msg_kind *other_ping = kb_scripted_impl_kind(w.flits, "Ping");
    assert_non_null(other_ping);
    assert_ptr_not_equal(other_ping, ping);
    assert_null(kb_scripted_send(w.s, other_ping, mem, KB_VIEW_DATA, 0, 0, &err));
    assert_string_equal(err, "s (test.whole) declares no message kind Ping: it sends only its own");
    free(err);
    assert_int_equal(kb_fabric_live_txns(w.fx.fab), 0); /* nothing was sent */
    assert_int_equal(kb_scripted_comp(w.s)->txns, 0);
    /* other messages have no tag */
    done_rec d = {0};
    transfer(&w, "mem", 0, &d);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.s, &m));
    int64_t tag = -1;
    assert_false(kb_scripted_tag(kb_scripted_msg_txn(&m), &tag));
    assert_int_equal(tag, -1);
    close_world(&w);
}

/* The receiving process: a C process (actor.h) recording its wake-ups. */
static void start_receiver(actor *r, wake_log *log, world *w, kb_scripted *s)
{
    memset(log, 0, sizeof *log);
    actor_init(r, w->fx.sim, 0, log, "component s", KB_PROC_DAEMON);
    kb_scripted_set_proc(s, &r->proc);
}

static void test_held_messages_make_the_receiving_process_count_for_quiescence(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    actor r;
    wake_log log;
    start_receiver(&r, &log, &w, w.s);
    kb_scripted_msg first, next;
    assert_false(kb_scripted_receive(w.s, &first, &r.w, -1));
    assert_true(r.proc.flags & KB_PROC_DAEMON);
    done_rec d = {0};
    transfer(&w, "mem", 256, &d);
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    /* woken with the arrival at 2 ns; while it holds it, it is no daemon */
    assert_int_equal(r.wakes, 1);
    assert_int_equal(log.when[0], NS(2));
    assert_true(kb_scripted_received(w.s, r.w.item, &first));
    assert_current(w.s, "transaction #1 (Transfer, 256 bytes)");
    assert_false(r.proc.flags & KB_PROC_DAEMON);
    /* receiving again without forwarding what it holds: a drop, reported */
    assert_false(kb_scripted_receive(w.s, &next, &r.w, -1));
    assert_current(w.s, "");
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    char *report = kb_sim_quiescence_report(w.fx.sim);
    assert_has(report, "process 'component s'");
    assert_has(report, "waiting to get from store 's inbox'");
    free(report);
    /* once it lets go of it, it is a daemon again: nothing to report */
    assert_int_equal(kb_scripted_forward(&first), KB_SCRIPTED_OK);
    assert_true(r.proc.flags & KB_PROC_DAEMON);
    assert_null(kb_sim_quiescence_report(w.fx.sim));
    kb_waiter_cancel(&r.w);
    kb_proc_end(&r.proc);
    close_world(&w);
}

static void test_receive_with_a_timeout_gets_nothing_when_nothing_comes_in_time(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.whole", "test.whole");
    actor r;
    wake_log log;
    start_receiver(&r, &log, &w, w.s);
    kb_scripted_msg m;
    /* nothing comes: woken empty at the deadline */
    assert_false(kb_scripted_receive(w.s, &m, &r.w, NS(1)));
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(r.wakes, 1);
    assert_int_equal(log.when[0], NS(1));
    assert_false(kb_scripted_received(w.s, r.w.item, &m));
    /* a transfer reaching s at 1 + 2 = 3 ns comes before a 3 ns deadline
     * ending at 4 ns; the deadline then finds no receive waiting */
    done_rec d = {0};
    transfer(&w, "mem", 256, &d);
    assert_false(kb_scripted_receive(w.s, &m, &r.w, NS(3)));
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(r.wakes, 2);
    assert_int_equal(log.when[1], NS(3));
    assert_true(kb_scripted_received(w.s, r.w.item, &m));
    assert_int_equal(kb_sim_now(w.fx.sim), NS(4));
    /* without a waiter or with timeout 0, nothing waits */
    assert_false(kb_scripted_receive(w.s, &m, NULL, -1));
    assert_false(kb_scripted_receive(w.s, &m, &r.w, 0));
    assert_false(kb_waiter_queued(&r.w));
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
    kb_proc_end(&r.proc);
    close_world(&w);
}

static void test_flit_aware_components_take_every_flit(void **state)
{
    (void)state;
    world w;
    open_world(&w, "test.flits", "test.flits");
    done_rec d = {0};
    transfer(&w, "mem", 512, &d);
    /* flits on a -> s at 0-1 and 1-2 ns: the first at s at 2 ns, passed on
     * at once (wormhole) */
    step_until_queued(&w, w.s);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(2));
    kb_scripted_msg m;
    assert_true(kb_scripted_take(w.s, &m));
    assert_true(m.flit);
    assert_current(w.s, "flit 1/2 of transaction #1 (Transfer, 512 bytes)");
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
    /* the second at 3 ns */
    step_until_queued(&w, w.s);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(3));
    assert_true(kb_scripted_take(w.s, &m));
    assert_current(w.s, "flit 2/2 of transaction #1 (Transfer, 512 bytes)");
    assert_int_equal(kb_scripted_forward(&m), KB_SCRIPTED_OK);
    /* s -> mem: the first left at 2 ns and arrives at 4 ns, the second left
     * at 3 ns and arrives at 5 ns; the transaction ends with its last */
    kb_sim_run(w.fx.sim, KB_TIME_MAX);
    assert_int_equal(kb_sim_now(w.fx.sim), NS(5));
    assert_int_equal(kb_scripted_held(w.mem), 2);
    assert_true(kb_scripted_take(w.mem, &m));
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_OK);
    assert_int_equal(d.count, 0);
    assert_true(kb_scripted_take(w.mem, &m));
    assert_int_equal(kb_scripted_finish(&m), KB_SCRIPTED_OK);
    assert_int_equal(d.count, 1);
    assert_int_equal(d.at, NS(5));
    assert_int_equal(kb_scripted_held(w.mem), 0);
    close_world(&w);
}

static void test_implementation_kinds_are_made_from_names_and_attrs_kept_in_name_order(void **state)
{
    (void)state;
    kb_impl *impl = kb_scripted_impl_new("test.impl", true, "noc_router", "doc");
    assert_ptr_equal(impl->ops, &kb_scripted_ops_flit);
    assert_true(kb_impl_serves(impl, "noc_router"));
    assert_false(kb_impl_serves(impl, "hbm_ctrl"));
    kb_scripted_impl_add_attr(impl, "delay_ns", 5, "an attribute");
    kb_scripted_impl_add_attr(impl, "overhead_ns", 0, "an attribute");
    kb_scripted_impl_add_attr(impl, "a_first", 1, "an attribute");
    for (int i = 0; i < 5; i++) { /* past the first allocation */
        char name[8];
        snprintf(name, sizeof name, "z%d", i);
        kb_scripted_impl_add_attr(impl, name, i, "an attribute");
    }
    assert_int_equal(impl->nattrs, 8);
    assert_string_equal(impl->attrs[0].name, "a_first");
    assert_string_equal(impl->attrs[1].name, "delay_ns");
    assert_true(impl->attrs[1].dflt == 5);
    assert_string_equal(impl->attrs[2].name, "overhead_ns");
    assert_string_equal(impl->attrs[7].name, "z4");
    assert_int_equal(kb_impl_attr_index(impl, "overhead_ns"), 2);

    char long_name[65];
    memset(long_name, 'x', 64);
    long_name[64] = '\0';
    size_t bad = 99;
    const char *why = NULL;
    const char *const dup[] = {"Ping", "Pong", "Ping"};
    assert_false(kb_scripted_impl_set_messages(impl, dup, 3, &bad, &why));
    assert_int_equal(bad, 2);
    assert_string_equal(why, "must be a new message kind name (a non-empty string of under 64 characters, each "
                             "listed once)");
    const char *const refused[] = {NULL, "", long_name};
    for (size_t i = 0; i < 3; i++) {
        assert_false(kb_scripted_impl_set_messages(impl, &refused[i], 1, &bad, &why));
        assert_int_equal(bad, 0);
    }
    /* a builtin kind's name: traces would show two different messages alike */
    const char *const builtin[] = {"Hello", "KernelLaunch"};
    assert_false(kb_scripted_impl_set_messages(impl, builtin, 2, &bad, &why));
    assert_int_equal(bad, 1);
    assert_string_equal(why, "must not be a builtin message kind's name (MemoryWrite, Transfer, KernelLaunch ...): "
                             "traces and errors could not tell the two apart");
    const char *const builtins[] = {"Response", "MemoryWrite", "MemoryRead", "PeDmaWrite", "PeDmaRead",
                                    "Transfer", "MmuMap",      "MmuUnmap",   "Completion"};
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
        assert_false(kb_scripted_impl_set_messages(impl, &builtins[i], 1, &bad, &why));
    long_name[63] = '\0'; /* 63 characters are fine */
    const char *const fine[] = {long_name};
    assert_true(kb_scripted_impl_set_messages(impl, fine, 1, &bad, &why));
    /* what was accepted before a refusal is kept, and freed with the implementation */
    const kb_msg_kind *ping = kb_scripted_impl_kind(impl, "Ping");
    assert_non_null(ping);
    assert_string_equal(ping->data_span, "Ping data");
    assert_string_equal(ping->ack_span, "Ping ack");
    assert_non_null(kb_scripted_impl_kind(impl, "Pong"));
    assert_non_null(kb_scripted_impl_kind(impl, "Hello"));
    assert_null(kb_scripted_impl_kind(impl, "KernelLaunch"));
    assert_non_null(kb_scripted_impl_kind(impl, long_name));
    kb_scripted_impl_free(impl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrival_waits_in_the_inbox_and_counts_as_held),
        cmocka_unit_test(test_forward_sends_on_now_and_finish_ends_the_transaction),
        cmocka_unit_test(test_finish_at_a_memory_target_answers_a_read_with_its_bytes),
        cmocka_unit_test(test_finish_at_a_memory_target_stores_a_write_and_acknowledges_it),
        cmocka_unit_test(test_send_of_a_declared_kind_reaches_a_second_scripted_component),
        cmocka_unit_test(test_send_refuses_the_node_itself_and_kinds_not_declared),
        cmocka_unit_test(test_held_messages_make_the_receiving_process_count_for_quiescence),
        cmocka_unit_test(test_receive_with_a_timeout_gets_nothing_when_nothing_comes_in_time),
        cmocka_unit_test(test_flit_aware_components_take_every_flit),
        cmocka_unit_test(test_implementation_kinds_are_made_from_names_and_attrs_kept_in_name_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
