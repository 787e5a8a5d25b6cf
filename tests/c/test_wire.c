/* Wire and transit-node arithmetic on tiny explicit topologies.
 *
 * Two nodes a <-> b (and a three-node line a - m - b), 256 GB/s links of
 * 2 mm at 0.5 ns/mm, 256-byte flits: a full flit occupies a link for
 * 256 B / 256 GB/s = 1 ns and arrives 2 mm x 0.5 ns/mm = 1 ns after it has
 * been sent. Every expected time below is derived from those numbers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fabric_fixture.h"

#define NS(x) ((kb_time)((x) * 1000))

static const char *two_nodes(double b_overhead_ns, char *buf, size_t n)
{
    snprintf(buf, n,
             "system: { ns_per_mm: 0.5, flit_bytes: 256 }\n"
             "graph:\n"
             "  nodes:\n"
             "    - { id: a, impl: builtin.forwarding }\n"
             "    - { id: b, impl: builtin.forwarding, attrs: { overhead_ns: %g } }\n"
             "  links:\n"
             "    - { src: a, dst: b, bw_gbs: 256, mm: 2 }\n",
             b_overhead_ns);
    return buf;
}

static void transfer(fixture *fx, const char *src, const char *dst, uint64_t nbytes, done_rec *d)
{
    char *err = NULL;
    bool ok = kb_transfer(fx->fab, node_of(fx, src), node_of(fx, dst), KB_VIEW_DATA, nbytes, false,
                          record_done, d, NULL, NULL, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err);
    assert_true(ok);
}

static void test_single_flit_costs_serialisation_plus_propagation(void **state)
{
    (void)state;
    char y[1024];
    fixture fx;
    fixture_open(&fx, two_nodes(0, y, sizeof y), NULL, NULL, 0);
    done_rec d = {0};
    transfer(&fx, "a", "b", 256, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* 1 ns on the wire + 1 ns propagation. */
    assert_int_equal(d.count, 1);
    assert_int_equal(d.at, NS(2));
    fixture_close(&fx);
}

static void test_partial_flit_is_paced_by_its_own_size(void **state)
{
    (void)state;
    char y[1024];
    fixture fx;
    fixture_open(&fx, two_nodes(0, y, sizeof y), NULL, NULL, 0);
    done_rec d = {0};
    transfer(&fx, "a", "b", 300, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* Flits of 256 and 44 B: 1 ns + 44/256 ns = 1.171875 ns on the wire,
     * rounded to the picosecond (172 ps for the second), + 1 ns. */
    assert_int_equal(d.at, NS(1) + 172 + NS(1));
    fixture_close(&fx);
}

static void test_back_to_back_flits_stream_at_link_rate(void **state)
{
    (void)state;
    char y[1024];
    fixture fx;
    fixture_open(&fx, two_nodes(0, y, sizeof y), NULL, NULL, 0);
    done_rec d = {0};
    transfer(&fx, "a", "b", 4 * 256, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* Four flits leave at 0, 1, 2, 3 ns; the last is on the wire until
     * 4 ns and arrives at 5 ns. */
    assert_int_equal(d.at, NS(5));
    fixture_close(&fx);
}

static void test_two_flows_share_one_link_in_fifo_order(void **state)
{
    (void)state;
    char y[1024];
    fixture fx;
    fixture_open(&fx, two_nodes(0, y, sizeof y), NULL, NULL, 0);
    done_rec d1 = {0}, d2 = {0};
    transfer(&fx, "a", "b", 4 * 256, &d1);
    transfer(&fx, "a", "b", 4 * 256, &d2);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* The second flow's flits follow the first's: they leave at 4..7 ns
     * and its last arrives at 8 + 1 = 9 ns. */
    assert_int_equal(d1.at, NS(5));
    assert_int_equal(d2.at, NS(9));
    fixture_close(&fx);
}

static void test_opposite_directions_are_independent(void **state)
{
    (void)state;
    char y[1024];
    fixture fx;
    fixture_open(&fx, two_nodes(0, y, sizeof y), NULL, NULL, 0);
    done_rec ab = {0}, ba = {0};
    transfer(&fx, "a", "b", 4 * 256, &ab);
    transfer(&fx, "b", "a", 4 * 256, &ba);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* Each direction alone: 5 ns. */
    assert_int_equal(ab.at, NS(5));
    assert_int_equal(ba.at, NS(5));
    fixture_close(&fx);
}

static void test_first_flit_pays_overhead_once(void **state)
{
    (void)state;
    char y[1024];
    fixture fx;
    fixture_open(&fx, two_nodes(3, y, sizeof y), NULL, NULL, 0);
    done_rec one = {0}, eight = {0};
    transfer(&fx, "a", "b", 256, &one);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* One flit: arrives at 2 ns, b decodes its header for 3 ns: 5 ns. */
    assert_int_equal(one.at, NS(5));
    kb_time t0 = kb_sim_now(fx.sim);
    transfer(&fx, "a", "b", 8 * 256, &eight);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* Eight flits: the first arrives at +2 and is handled at +5; the others
     * arrive at +3 .. +9 and need no decode, so the last is handled at +9.
     * Paying 3 ns per flit would give +2 + 8 x 3 = +26. */
    assert_int_equal(eight.at - t0, NS(9));
    fixture_close(&fx);
}

static const char line_yaml[] =
    "system: { ns_per_mm: 0.5, flit_bytes: 256 }\n"
    "graph:\n"
    "  line: { count: 3, prefix: n, node: { impl: builtin.forwarding, attrs: { overhead_ns: 0 } },\n"
    "          link: { bw_gbs: 256, mm: 2 } }\n";

static void test_multi_hop_transfer_serialises_the_payload_once(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, line_yaml, NULL, NULL, 0);
    done_rec d = {0};
    transfer(&fx, "n0", "n2", 64 * 256, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* Flit i leaves n0 at i ns, reaches n1 at i + 2, leaves it at once and
     * reaches n2 at i + 4: the last (i = 63) at 67 ns. Store and forward
     * would cost 2 x (64 + 1) = 130 ns. */
    assert_int_equal(d.at, NS(67));
    fixture_close(&fx);
}

static void test_middle_node_overhead_delays_the_train_once(void **state)
{
    (void)state;
    static const char *const ov[] = {"graph.line.node.attrs.overhead_ns=3"};
    fixture fx;
    fixture_open(&fx, line_yaml, NULL, ov, 1);
    done_rec d = {0};
    transfer(&fx, "n0", "n2", 4 * 256, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* n0 decodes for 3 ns, so flits leave n0 at 3..6 and reach n1 at 5..8;
     * n1 decodes the first until 8, and the wire n1 -> n2 sends them at
     * 8, 9, 10, 11; they arrive at 10 .. 13; n2 decodes the first until 13:
     * the last is handled at 13 ns. */
    assert_int_equal(d.at, NS(13));
    fixture_close(&fx);
}

static void test_control_message_travels_as_one_empty_flit(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, line_yaml, NULL, NULL, 0);
    done_rec d = {0};
    char *err = NULL;
    /* A 0-byte transaction: no serialisation, 1 ns propagation per link. */
    kb_txn *t = kb_txn_new(fx.fab, &kb_msg_transfer,
                           kb_route(fx.topo, KB_VIEW_DATA, node_of(&fx, "n0"), node_of(&fx, "n2"), &err), 0);
    t->done = record_done;
    t->done_arg = &d;
    assert_int_equal(t->nflits, 1);
    kb_fabric_inject(fx.fab, t);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    assert_int_equal(d.at, NS(2));
    fixture_close(&fx);
}

static void test_wire_counters_add_up(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, line_yaml, NULL, NULL, 0);
    done_rec d = {0};
    transfer(&fx, "n0", "n2", 10 * 256 + 1, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    int64_t e = kb_topo_edge_between(fx.topo, node_of(&fx, "n0"), node_of(&fx, "n1"));
    const kb_wire *w = kb_fabric_wire(fx.fab, (uint32_t)e);
    assert_int_equal(w->bytes, 10 * 256 + 1);
    assert_int_equal(w->flits, 11);
    assert_int_equal(kb_fabric_live_txns(fx.fab), 0);
    fixture_close(&fx);
}

static void test_a_waiting_train_is_one_pending_event(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, line_yaml, NULL, NULL, 0);
    done_rec d = {0};
    /* 64 transactions of 1024 flits: 65 536 flits wait for the wire n0 -> n1,
     * as runs behind one event (fabric.h, "Hot path"). */
    for (int i = 0; i < 64; i++)
        transfer(&fx, "n0", "n2", 1024 * 256, &d);
    kb_sim_stats st;
    kb_sim_get_stats(fx.sim, &st);
    assert_int_equal(st.pending, 1);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* Flit i leaves n0 at i ns and reaches n2 at i + 4: the last at 65 539 ns;
     * one event per flit per hop and one completion event per transaction. */
    assert_int_equal(d.count, 64);
    assert_int_equal(d.at, NS(65539));
    kb_sim_get_stats(fx.sim, &st);
    assert_int_equal(st.events, 2 * 65536);
    int64_t e = kb_topo_edge_between(fx.topo, node_of(&fx, "n1"), node_of(&fx, "n2"));
    assert_int_equal(kb_fabric_wire(fx.fab, (uint32_t)e)->flits, 65536);
    fixture_close(&fx);
}

/* a -> m -> c and b -> m -> c, b's link twice as long: a's second flit and
 * b's only flit reach m at 3 ns. a's was sent first, so m handles it first
 * although b's flit waited in the queue before a's was scheduled (only a
 * wire's oldest flit has an event; the queue orders an instant by key). */
static void test_equal_arrivals_are_handled_in_send_order(void **state)
{
    (void)state;
    static const char yaml[] = "system: { ns_per_mm: 0.5, flit_bytes: 256 }\n"
                               "graph:\n"
                               "  nodes:\n"
                               "    - { id: a, impl: builtin.forwarding }\n"
                               "    - { id: b, impl: builtin.forwarding }\n"
                               "    - { id: m, impl: builtin.forwarding }\n"
                               "    - { id: c, impl: builtin.forwarding }\n"
                               "  links:\n"
                               "    - { src: a, dst: m, bw_gbs: 256, mm: 2 }\n"
                               "    - { src: b, dst: m, bw_gbs: 256, mm: 4 }\n"
                               "    - { src: m, dst: c, bw_gbs: 256, mm: 2 }\n";
    fixture fx;
    fixture_open(&fx, yaml, NULL, NULL, 0);
    done_rec da = {0}, db = {0};
    transfer(&fx, "a", "c", 2 * 256, &da);
    transfer(&fx, "b", "c", 256, &db);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* m -> c sends a0 at 2, a1 at 3, b0 at 4: a ends at 5 ns, b at 6 ns
     * (b first at 3 would end b at 5 and a at 6). */
    assert_int_equal(da.at, NS(5));
    assert_int_equal(db.at, NS(6));
    fixture_close(&fx);
}

/* Statistics list the active nodes and edges (kept as counters first move):
 * exactly those a walk of the whole fabric finds, in index order. */
static void test_active_lists_match_a_full_walk(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, line_yaml, NULL, NULL, 0);
    done_rec d = {0};
    transfer(&fx, "n2", "n1", 3 * 256, &d);
    transfer(&fx, "n0", "n1", 0, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    const uint32_t *ids;
    size_t n = kb_fabric_active_nodes(fx.fab, &ids), k = 0;
    for (uint32_t i = 0; i < kb_topo_node_count(fx.topo); i++) {
        const kb_comp *c = kb_fabric_comp(fx.fab, i);
        if (c->txns || c->flits) {
            assert_true(k < n);
            assert_int_equal(ids[k++], i);
        }
    }
    assert_int_equal(k, n);
    assert_int_equal(n, 3);
    n = kb_fabric_active_edges(fx.fab, &ids), k = 0;
    for (uint32_t i = 0; i < kb_topo_edge_count(fx.topo); i++)
        if (kb_fabric_wire(fx.fab, i)->flits) {
            assert_true(k < n);
            assert_int_equal(ids[k++], i);
        }
    assert_int_equal(k, n);
    assert_int_equal(n, 2);
    fixture_close(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_flit_costs_serialisation_plus_propagation),
        cmocka_unit_test(test_partial_flit_is_paced_by_its_own_size),
        cmocka_unit_test(test_back_to_back_flits_stream_at_link_rate),
        cmocka_unit_test(test_two_flows_share_one_link_in_fifo_order),
        cmocka_unit_test(test_opposite_directions_are_independent),
        cmocka_unit_test(test_first_flit_pays_overhead_once),
        cmocka_unit_test(test_multi_hop_transfer_serialises_the_payload_once),
        cmocka_unit_test(test_middle_node_overhead_delays_the_train_once),
        cmocka_unit_test(test_control_message_travels_as_one_empty_flit),
        cmocka_unit_test(test_wire_counters_add_up),
        cmocka_unit_test(test_a_waiting_train_is_one_pending_event),
        cmocka_unit_test(test_equal_arrivals_are_handled_in_send_order),
        cmocka_unit_test(test_active_lists_match_a_full_walk),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
