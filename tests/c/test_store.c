/* Store semantics: FIFO items, blocking get and put, FIFO wake-ups. */
#include "actor.h"
#include "core/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static kb_item num(int64_t i) { return (kb_item){.i = i}; }

static void test_items_leave_in_fifo_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store st;
    kb_store_init(&st, sim, "q", 0);
    for (int i = 0; i < 100; i++) /* enough to wrap and grow the ring */
        assert_true(kb_store_put(&st, num(i), NULL));
    kb_item out;
    for (int i = 0; i < 40; i++) {
        assert_true(kb_store_get(&st, &out, NULL));
        assert_int_equal(out.i, i);
    }
    for (int i = 100; i < 150; i++)
        assert_true(kb_store_put(&st, num(i), NULL));
    for (int i = 40; i < 150; i++) {
        assert_true(kb_store_get(&st, &out, NULL));
        assert_int_equal(out.i, i);
    }
    assert_false(kb_store_get(&st, &out, NULL)); /* empty; no waiter: nothing queued */
    assert_true(kb_list_empty(&st.getters));
    kb_store_deinit(&st);
    kb_sim_free(sim);
}

static void test_get_blocks_until_a_put(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store st;
    kb_store_init(&st, sim, "q", 0);
    wake_log log = {0};
    actor g;
    actor_init(&g, sim, 1, &log, "getter", 0);
    kb_item out;
    assert_false(kb_store_get(&st, &out, &g.w));
    assert_ptr_equal(g.proc.wait_on, &st.w);
    kb_sim_run(sim, 1000);
    assert_int_equal(g.wakes, 0);
    assert_true(kb_store_put(&st, num(5), NULL)); /* handed straight to the getter */
    assert_int_equal(kb_store_count(&st), 0);
    assert_null(g.proc.wait_on);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(g.wakes, 1);
    assert_int_equal(g.item.i, 5);
    assert_int_equal(log.when[0], 1000);
    kb_proc_end(&g.proc);
    kb_store_deinit(&st);
    kb_sim_free(sim);
}

static void test_put_blocks_while_full_until_a_get(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store st;
    kb_store_init(&st, sim, "q", 2);
    actor p;
    actor_init(&p, sim, 1, NULL, "putter", 0);
    assert_true(kb_store_put(&st, num(1), NULL));
    assert_true(kb_store_put(&st, num(2), NULL));
    assert_false(kb_store_put(&st, num(3), NULL)); /* full, no waiter: dropped */
    assert_false(kb_store_put(&st, num(4), &p.w)); /* full: queued with its item */
    assert_int_equal(kb_store_count(&st), 2);
    kb_item out;
    assert_true(kb_store_get(&st, &out, NULL));
    assert_int_equal(out.i, 1);
    assert_int_equal(kb_store_count(&st), 2); /* the blocked item was admitted */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(p.wakes, 1);
    assert_true(kb_store_get(&st, &out, NULL));
    assert_int_equal(out.i, 2);
    assert_true(kb_store_get(&st, &out, NULL));
    assert_int_equal(out.i, 4);
    kb_proc_end(&p.proc);
    kb_store_deinit(&st);
    kb_sim_free(sim);
}

static void test_blocked_getters_are_served_in_arrival_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store st;
    kb_store_init(&st, sim, "q", 0);
    wake_log log = {0};
    actor g[4];
    kb_item out;
    int arrival[] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++)
        actor_init(&g[i], sim, i, &log, NULL, 0);
    for (int i = 0; i < 4; i++)
        assert_false(kb_store_get(&st, &out, &g[arrival[i]].w));
    for (int i = 0; i < 4; i++)
        kb_store_put(&st, num(100 + i), NULL);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(log.who[i], arrival[i]);
        assert_int_equal(g[arrival[i]].item.i, 100 + i);
        kb_proc_end(&g[i].proc);
    }
    kb_store_deinit(&st);
    kb_sim_free(sim);
}

static void test_blocked_putters_are_admitted_in_arrival_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store st;
    kb_store_init(&st, sim, "q", 1);
    wake_log log = {0};
    actor p[3];
    kb_store_put(&st, num(0), NULL);
    for (int i = 0; i < 3; i++) {
        actor_init(&p[i], sim, i, &log, NULL, 0);
        assert_false(kb_store_put(&st, num(i + 1), &p[i].w));
    }
    kb_item out;
    for (int i = 0; i <= 3; i++) {
        assert_true(kb_store_get(&st, &out, NULL));
        assert_int_equal(out.i, i);
    }
    kb_sim_run(sim, KB_TIME_MAX);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(log.who[i], i);
        kb_proc_end(&p[i].proc);
    }
    kb_store_deinit(&st);
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items_leave_in_fifo_order),
        cmocka_unit_test(test_get_blocks_until_a_put),
        cmocka_unit_test(test_put_blocks_while_full_until_a_get),
        cmocka_unit_test(test_blocked_getters_are_served_in_arrival_order),
        cmocka_unit_test(test_blocked_putters_are_admitted_in_arrival_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
