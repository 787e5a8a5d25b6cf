/* One-shot events, timeouts and conditions. */
#include "actor.h"
#include "core/event.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static void assert_pool_empty(kb_sim *sim)
{
    kb_sim_stats st;
    kb_sim_get_stats(sim, &st);
    assert_int_equal(st.events_live, 0);
}

static void test_succeed_wakes_waiters_in_wait_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    wake_log log = {0};
    actor a[3];
    kb_event *ev = kb_event_new(sim);
    for (int i = 0; i < 3; i++)
        actor_init(&a[i], sim, i, &log, NULL, 0);
    int order[] = {1, 2, 0};
    for (int i = 0; i < 3; i++)
        assert_false(kb_event_wait(ev, &a[order[i]].w));
    assert_true(kb_event_succeed(ev, (kb_item){.i = 42}));
    assert_int_equal(log.n, 0); /* processing happens in the run, not in succeed */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 3);
    assert_int_equal(log.who[0], 1);
    assert_int_equal(log.who[1], 2);
    assert_int_equal(log.who[2], 0);
    assert_int_equal(a[0].item.i, 42);
    assert_true(a[0].ok);
    for (int i = 0; i < 3; i++)
        kb_proc_end(&a[i].proc);
    kb_event_unref(ev);
    assert_pool_empty(sim);
    kb_sim_free(sim);
}

static void test_wait_on_processed_event_completes_at_once(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    actor a;
    actor_init(&a, sim, 0, NULL, NULL, 0);
    kb_event *ev = kb_event_new(sim);
    kb_event_succeed(ev, (kb_item){.i = 7});
    kb_sim_run(sim, KB_TIME_MAX);
    assert_true(kb_event_wait(ev, &a.w));
    assert_int_equal(a.w.item.i, 7);
    assert_false(kb_waiter_queued(&a.w));
    assert_int_equal(a.wakes, 0);
    kb_proc_end(&a.proc);
    kb_event_unref(ev);
    kb_sim_free(sim);
}

static void test_fail_delivers_failure_and_double_trigger_is_rejected(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    actor a;
    actor_init(&a, sim, 0, NULL, NULL, 0);
    kb_event *ev = kb_event_new(sim);
    kb_event_wait(ev, &a.w);
    assert_true(kb_event_fail(ev, (kb_item){.i = -1}));
    assert_false(kb_event_succeed(ev, KB_ITEM_NONE));
    assert_false(kb_event_fail(ev, KB_ITEM_NONE));
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(a.wakes, 1);
    assert_false(a.ok);
    assert_int_equal(a.item.i, -1);
    kb_proc_end(&a.proc);
    kb_event_unref(ev);
    kb_sim_free(sim);
}

static void test_timeout_is_processed_after_its_delay(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    wake_log log = {0};
    actor a;
    actor_init(&a, sim, 0, &log, NULL, 0);
    kb_event *t = kb_event_timeout(sim, 2500, (kb_item){.i = 3});
    kb_event_wait(t, &a.w);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.when[0], 2500);
    assert_int_equal(a.item.i, 3);
    kb_proc_end(&a.proc);
    kb_event_unref(t);
    assert_pool_empty(sim);
    kb_sim_free(sim);
}

static void test_negative_timeout_fails_the_simulation(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_event *t = kb_event_timeout(sim, -5, KB_ITEM_NONE);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_FAILED);
    assert_non_null(strstr(kb_sim_error(sim), "invalid delay -5 ps"));
    assert_int_not_equal(t->state, KB_EVENT_PROCESSED);
    kb_event_unref(t);
    kb_sim_free(sim);
}

static void test_all_of_waits_for_every_child(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    wake_log log = {0};
    actor a;
    actor_init(&a, sim, 0, &log, NULL, 0);
    kb_event *kids[3] = {kb_event_timeout(sim, 10, KB_ITEM_NONE),
                         kb_event_timeout(sim, 30, KB_ITEM_NONE),
                         kb_event_timeout(sim, 20, KB_ITEM_NONE)};
    kb_event *all = kb_event_all_of(sim, kids, 3);
    for (int i = 0; i < 3; i++)
        kb_event_unref(kids[i]); /* the condition keeps its own references */
    kb_event_wait(all, &a.w);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.when[0], 30);
    assert_true(a.ok);
    assert_int_equal(a.item.u, 3);
    assert_int_equal(kb_event_cond_done(all), 3);
    kb_proc_end(&a.proc);
    kb_event_unref(all);
    assert_pool_empty(sim);
    kb_sim_free(sim);
}

static void test_all_of_fails_as_soon_as_a_child_fails(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    wake_log log = {0};
    actor a;
    actor_init(&a, sim, 0, &log, NULL, 0);
    kb_event *slow = kb_event_timeout(sim, 100, KB_ITEM_NONE);
    kb_event *bad = kb_event_new(sim);
    kb_event *kids[2] = {slow, bad};
    kb_event *all = kb_event_all_of(sim, kids, 2);
    kb_event_wait(all, &a.w);
    kb_event_fail(bad, (kb_item){.i = 99});
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.when[0], 0);
    assert_false(a.ok);
    assert_int_equal(a.item.i, 99);
    assert_int_equal(kb_event_cond_index(all), 1);
    kb_proc_end(&a.proc);
    kb_event_unref(all);
    kb_event_unref(slow);
    kb_event_unref(bad);
    assert_pool_empty(sim);
    kb_sim_free(sim);
}

static void test_any_of_reports_the_first_child_and_stops_listening(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    wake_log log = {0};
    actor a;
    actor_init(&a, sim, 0, &log, NULL, 0);
    kb_event *never = kb_event_new(sim);
    kb_event *soon = kb_event_timeout(sim, 5, (kb_item){.i = 5});
    kb_event *kids[2] = {never, soon};
    kb_event *any = kb_event_any_of(sim, kids, 2);
    kb_event_wait(any, &a.w);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.when[0], 5);
    assert_int_equal(a.item.i, 5);
    assert_int_equal(kb_event_cond_index(any), 1);
    /* freeing the condition while `never` is pending must detach from it */
    kb_event_unref(any);
    assert_true(kb_list_empty(&never->waiters));
    kb_event_succeed(never, KB_ITEM_NONE);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    kb_proc_end(&a.proc);
    kb_event_unref(never);
    kb_event_unref(soon);
    assert_pool_empty(sim);
    kb_sim_free(sim);
}

static void test_conditions_count_children_already_processed(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_event *done = kb_event_new(sim);
    kb_event_succeed(done, (kb_item){.i = 1});
    kb_sim_run(sim, KB_TIME_MAX);
    kb_event *pending = kb_event_new(sim);
    kb_event *kids[2] = {pending, done};
    kb_event *any = kb_event_any_of(sim, kids, 2);
    kb_event *all = kb_event_all_of(sim, kids, 2);
    assert_int_equal(any->state, KB_EVENT_TRIGGERED);
    assert_int_equal(kb_event_cond_index(any), 1);
    assert_int_equal(all->state, KB_EVENT_PENDING);
    assert_int_equal(kb_event_cond_done(all), 1);
    kb_event_succeed(pending, KB_ITEM_NONE);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(all->state, KB_EVENT_PROCESSED);
    kb_event *none = kb_event_all_of(sim, NULL, 0);
    kb_event *none_any = kb_event_any_of(sim, NULL, 0);
    assert_int_equal(none->state, KB_EVENT_TRIGGERED);
    assert_int_equal(none_any->state, KB_EVENT_TRIGGERED);
    kb_sim_run(sim, KB_TIME_MAX);
    kb_event *evs[] = {done, pending, any, all, none, none_any};
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        kb_event_unref(evs[i]);
    assert_pool_empty(sim);
    kb_sim_free(sim);
}

static void test_describe_names_the_event_and_its_state(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_event *ev = kb_event_new(sim);
    kb_event_set_name(ev, "ready");
    char buf[128];
    kb_event_describe(ev, buf, sizeof buf);
    assert_string_equal(buf, "event 'ready' #1 (pending)");
    kb_event *kids[1] = {ev};
    kb_event *all = kb_event_all_of(sim, kids, 1);
    kb_event_describe(all, buf, sizeof buf);
    assert_string_equal(buf, "all_of event #2 (pending, 0 of 1 children processed)");
    kb_event *t = kb_event_timeout(sim, 5000, KB_ITEM_NONE);
    kb_event_label(t, buf, sizeof buf);
    assert_string_equal(buf, "timeout #3");
    kb_event_describe(t, buf, sizeof buf);
    assert_string_equal(buf, "timeout #3 (5.000 ns, triggered)");
    /* a process's completion event is named as the process, with its id */
    kb_proc proc = {0};
    kb_proc_start(sim, &proc, "worker", 0);
    kb_event *done = kb_event_new(sim);
    kb_event_set_process(done, &proc);
    kb_event_describe(done, buf, sizeof buf);
    assert_string_equal(buf, "process 'worker' #1 (alive)");
    kb_proc_end(&proc); /* the event outlives the process's record */
    kb_event_succeed(done, KB_ITEM_NONE);
    kb_event_describe(done, buf, sizeof buf);
    assert_string_equal(buf, "process 'worker' #1 (finished)");
    kb_event *bad = kb_event_new(sim);
    kb_event_set_process(bad, &(kb_proc){.id = 7, .name = "crash"});
    kb_event_fail(bad, KB_ITEM_NONE);
    kb_event_label(bad, buf, sizeof buf);
    assert_string_equal(buf, "process 'crash' #7");
    kb_event_describe(bad, buf, sizeof buf);
    assert_string_equal(buf, "process 'crash' #7 (failed)");
    /* freeing the simulation with live events and conditions is clean */
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_succeed_wakes_waiters_in_wait_order),
        cmocka_unit_test(test_wait_on_processed_event_completes_at_once),
        cmocka_unit_test(test_fail_delivers_failure_and_double_trigger_is_rejected),
        cmocka_unit_test(test_timeout_is_processed_after_its_delay),
        cmocka_unit_test(test_negative_timeout_fails_the_simulation),
        cmocka_unit_test(test_all_of_waits_for_every_child),
        cmocka_unit_test(test_all_of_fails_as_soon_as_a_child_fails),
        cmocka_unit_test(test_any_of_reports_the_first_child_and_stops_listening),
        cmocka_unit_test(test_conditions_count_children_already_processed),
        cmocka_unit_test(test_describe_names_the_event_and_its_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
