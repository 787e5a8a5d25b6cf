/* Store semantics (SimPy's): FIFO items, requests served first come first
 * served, completions processed through the queue, the shortcut only where
 * nothing else is queued at the current time. */
#include "actor.h"
#include "core/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static kb_item num(int64_t i) { return (kb_item){.i = i}; }

static uint64_t events(kb_sim *sim)
{
    kb_sim_stats st;
    kb_sim_get_stats(sim, &st);
    return st.events;
}

static void test_items_leave_in_fifo_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 0);
    for (int i = 0; i < 100; i++) /* enough to wrap and grow the ring */
        assert_true(kb_store_put(st, num(i), NULL));
    kb_item out;
    for (int i = 0; i < 40; i++) {
        assert_true(kb_store_get(st, &out, NULL));
        assert_int_equal(out.i, i);
    }
    for (int i = 100; i < 150; i++)
        assert_true(kb_store_put(st, num(i), NULL));
    for (int i = 40; i < 150; i++) {
        assert_true(kb_store_get(st, &out, NULL));
        assert_int_equal(out.i, i);
    }
    assert_false(kb_store_get(st, &out, NULL)); /* empty; no waiter: nothing queued */
    assert_true(kb_list_empty(&st->getters));
    kb_store_close(st);
    kb_sim_free(sim);
}

/* SimPy: the item goes in at the put; the put's processing serves the
 * getter, whose own processing wakes it: two events at the same time. */
static void test_a_put_reaches_a_waiting_getter_through_two_processings(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 0);
    wake_log log = {0};
    actor g;
    actor_init(&g, sim, 1, &log, "getter", 0);
    kb_item out;
    assert_false(kb_store_get(st, &out, &g.w));
    assert_ptr_equal(g.proc.wait_on, &st->w);
    kb_sim_run(sim, 1000);
    assert_int_equal(g.wakes, 0);
    assert_true(kb_store_put(st, num(5), NULL));
    assert_int_equal(kb_store_count(st), 1); /* in the store until the put is processed */
    assert_ptr_equal(g.proc.wait_on, &st->w);
    assert_int_equal(kb_sim_step(sim, 1, NULL), KB_RUN_UNTIL); /* the put: the getter is served */
    assert_int_equal(kb_store_count(st), 0);
    assert_null(g.proc.wait_on);
    assert_int_equal(g.wakes, 0);
    kb_sim_run(sim, KB_TIME_MAX); /* the get: the getter wakes */
    assert_int_equal(g.wakes, 1);
    assert_int_equal(g.item.i, 5);
    assert_int_equal(log.when[0], 1000);
    assert_int_equal(events(sim), 3); /* and the run(1000)'s until event */
    kb_proc_end(&g.proc);
    kb_store_close(st);
    kb_sim_free(sim);
}

static void test_put_blocks_while_full_until_a_get_is_processed(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 2);
    actor p;
    actor_init(&p, sim, 1, NULL, "putter", 0);
    assert_true(kb_store_put(st, num(1), NULL));
    assert_true(kb_store_put(st, num(2), NULL));
    assert_false(kb_store_put(st, num(3), NULL)); /* full, no waiter: nothing happens */
    assert_false(kb_store_put(st, num(4), &p.w)); /* full: queued with its item */
    assert_int_equal(kb_store_count(st), 2);
    kb_item out;
    assert_true(kb_store_get(st, &out, NULL));
    assert_int_equal(out.i, 1);
    assert_int_equal(kb_store_count(st), 1); /* the putter waits for the get's processing */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(kb_store_count(st), 2);
    assert_int_equal(p.wakes, 1);
    assert_true(kb_store_get(st, &out, NULL));
    assert_int_equal(out.i, 2);
    assert_true(kb_store_get(st, &out, NULL));
    assert_int_equal(out.i, 4);
    kb_proc_end(&p.proc);
    kb_store_close(st);
    kb_sim_free(sim);
}

static void test_blocked_getters_are_served_in_arrival_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 0);
    wake_log log = {0};
    actor g[4];
    kb_item out;
    int arrival[] = {2, 0, 3, 1};
    for (int i = 0; i < 4; i++)
        actor_init(&g[i], sim, i, &log, NULL, 0);
    for (int i = 0; i < 4; i++)
        assert_false(kb_store_get(st, &out, &g[arrival[i]].w));
    for (int i = 0; i < 4; i++)
        kb_store_put(st, num(100 + i), NULL);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(log.who[i], arrival[i]);
        assert_int_equal(g[arrival[i]].item.i, 100 + i);
        kb_proc_end(&g[i].proc);
    }
    kb_store_close(st);
    kb_sim_free(sim);
}

static void test_blocked_putters_are_admitted_in_arrival_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 1);
    wake_log log = {0};
    actor p[3];
    kb_store_put(st, num(0), NULL);
    for (int i = 0; i < 3; i++) {
        actor_init(&p[i], sim, i, &log, NULL, 0);
        assert_false(kb_store_put(st, num(i + 1), &p[i].w));
    }
    kb_item out;
    for (int i = 0; i <= 3; i++) {
        assert_true(kb_store_get(st, &out, NULL));
        assert_int_equal(out.i, i);
        kb_sim_run(sim, KB_TIME_MAX); /* the get's processing admits the next putter */
    }
    for (int i = 0; i < 3; i++) {
        assert_int_equal(log.who[i], i);
        kb_proc_end(&p[i].proc);
    }
    kb_store_close(st);
    kb_sim_free(sim);
}

/* Only the first waiting putter is tried, as in SimPy: a new put finds
 * the room left by a get that is not processed yet, and admits the putter
 * that was waiting before it. */
static void test_a_new_put_admits_the_first_waiting_putter(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 1);
    wake_log log = {0};
    actor a, b;
    actor_init(&a, sim, 1, &log, "a", 0);
    actor_init(&b, sim, 2, &log, "b", 0);
    assert_true(kb_store_put(st, num(0), NULL));
    assert_false(kb_store_put(st, num(1), &a.w)); /* full */
    kb_item out;
    assert_true(kb_store_get(st, &out, NULL)); /* room, until the get's processing */
    assert_false(kb_store_put(st, num(2), &b.w));
    assert_int_equal(kb_store_count(st), 1); /* a's item took the room */
    assert_null(a.proc.wait_on);
    assert_ptr_equal(b.proc.wait_on, &st->w);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.who[0], 1);
    assert_true(kb_store_get(st, &out, NULL));
    assert_int_equal(out.i, 1);
    kb_proc_end(&a.proc);
    kb_proc_end(&b.proc);
    kb_store_close(st);
    kb_sim_free(sim);
}

/* ---- the shortcut ---- */

typedef struct shortcut_case {
    kb_store *st;
    actor a;
    bool continued;
    kb_item got;
} shortcut_case;

/* Resumes the actor as the event's last action, which then gets. */
static void resume_and_get(kb_sim *sim, void *arg)
{
    shortcut_case *c = arg;
    kb_sim_resuming_last(sim, &c->a.proc);
    c->continued = kb_store_get(c->st, &c->got, &c->a.w);
}

static void nothing(kb_sim *sim, void *arg)
{
    (void)sim;
    (void)arg;
}

static void run_shortcut_case(bool other_event_now, bool step)
{
    kb_sim *sim = kb_sim_new();
    shortcut_case c = {.st = kb_store_new(sim, "q", 0)};
    actor_init(&c.a, sim, 1, NULL, "a", 0);
    kb_store_put(c.st, num(7), NULL);
    kb_sim_run(sim, KB_TIME_MAX);
    kb_sim_at(sim, 10, KB_PRIO_NORMAL, resume_and_get, &c);
    if (other_event_now)
        kb_sim_at(sim, 10, KB_PRIO_NORMAL, nothing, NULL);
    uint64_t before = events(sim);
    if (step)
        while (kb_sim_step(sim, 1, NULL) == KB_RUN_UNTIL)
            ;
    else
        kb_sim_run(sim, KB_TIME_MAX);
    bool expect = !other_event_now && !step;
    assert_int_equal(c.continued, expect);
    assert_int_equal(c.continued ? c.got.i : c.a.item.i, 7);
    assert_int_equal(c.a.wakes, expect ? 0 : 1);
    /* the get's processing counts as an event either way */
    assert_int_equal(events(sim) - before, other_event_now ? 3 : 2);
    kb_proc_end(&c.a.proc);
    kb_store_close(c.st);
    kb_sim_free(sim);
}

static void test_a_process_resumed_last_continues_when_nothing_else_is_due(void **state)
{
    (void)state;
    run_shortcut_case(false, false);
}

static void test_another_event_at_the_same_time_makes_the_process_wait(void **state)
{
    (void)state;
    run_shortcut_case(true, false);
}

static void test_stepping_never_takes_the_shortcut(void **state)
{
    (void)state;
    run_shortcut_case(false, true);
}

/* A store given up while a processing of it is queued is freed after
 * that processing (ASan reports a use after free or a leak otherwise). */
static void test_a_closed_store_outlives_its_queued_processing(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 1);
    assert_true(kb_store_put(st, num(1), NULL));
    kb_store_close(st);
    kb_sim_run(sim, KB_TIME_MAX);
    kb_store *st2 = kb_store_new(sim, "q2", 0);
    assert_true(kb_store_put(st2, num(1), NULL)); /* freed with the simulation */
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_items_leave_in_fifo_order),
        cmocka_unit_test(test_a_put_reaches_a_waiting_getter_through_two_processings),
        cmocka_unit_test(test_put_blocks_while_full_until_a_get_is_processed),
        cmocka_unit_test(test_blocked_getters_are_served_in_arrival_order),
        cmocka_unit_test(test_blocked_putters_are_admitted_in_arrival_order),
        cmocka_unit_test(test_a_new_put_admits_the_first_waiting_putter),
        cmocka_unit_test(test_a_process_resumed_last_continues_when_nothing_else_is_due),
        cmocka_unit_test(test_another_event_at_the_same_time_makes_the_process_wait),
        cmocka_unit_test(test_stepping_never_takes_the_shortcut),
        cmocka_unit_test(test_a_closed_store_outlives_its_queued_processing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
