/* Run control shared by simulations (kb_sim_control): the stop flag, the
 * simulated-time and event limits, what the first stopped run reached. */
#include "core/sim.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* An event every 10 ps, forever. */
static void tick(kb_sim *sim, void *arg)
{
    kb_sim_after(sim, 10, KB_PRIO_NORMAL, tick, arg);
}

static void count_limit(void *ctx) { ++*(int *)ctx; }

static void nop(kb_sim *sim, void *arg)
{
    (void)sim;
    (void)arg;
}

static void test_a_zeroed_control_changes_nothing(void **state)
{
    (void)state;
    kb_sim_control c;
    memset(&c, 0, sizeof c);
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, &c, 1);
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, tick, NULL);
    assert_int_equal(kb_sim_run(sim, 1000), KB_RUN_UNTIL);
    assert_int_equal(kb_sim_now(sim), 1000);
    assert_int_equal(c.stop, KB_STOP_NONE);
    kb_sim_free(sim);
}

static void test_until_stops_before_the_first_event_at_the_limit(void **state)
{
    (void)state;
    int calls = 0;
    kb_sim_control c = {.until = 95, .on_limit = count_limit, .ctx = &calls};
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, &c, 7);
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, tick, NULL);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    /* events at 0, 10, ..., 90: ten of them; the clock goes to the limit */
    kb_sim_stats st;
    kb_sim_get_stats(sim, &st);
    assert_int_equal(st.events, 10);
    assert_int_equal(st.now, 95);
    assert_int_equal(c.stop, KB_STOP_UNTIL);
    assert_int_equal(calls, 1);
    assert_true(c.reached.seen);
    assert_int_equal(c.reached.id, 7);
    assert_int_equal(c.reached.now, 95);
    assert_int_equal(c.reached.events, 10);
    /* stopped: every later run returns at once */
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    assert_int_equal(calls, 1);
    kb_sim_free(sim);
}

static void test_a_bounded_run_below_the_limit_is_not_stopped(void **state)
{
    (void)state;
    kb_sim_control c = {.until = 100};
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, &c, 1);
    assert_int_equal(kb_sim_run(sim, 100), KB_RUN_EMPTY); /* up to the limit: fine */
    assert_int_equal(kb_sim_now(sim), 100);
    assert_int_equal(c.stop, KB_STOP_NONE);
    assert_int_equal(kb_sim_run(sim, 150), KB_RUN_INTERRUPTED); /* past it, even with nothing to do */
    assert_int_equal(kb_sim_now(sim), 100);
    assert_int_equal(c.stop, KB_STOP_UNTIL);
    kb_sim_free(sim);
}

static void test_an_empty_queue_ends_a_run_normally(void **state)
{
    (void)state;
    kb_sim_control c = {.until = 1000, .max_events = 5};
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, &c, 1);
    for (int i = 0; i < 5; i++)
        kb_sim_at(sim, 10 * i, KB_PRIO_NORMAL, nop, NULL);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_EMPTY); /* exactly 5 events, none left */
    assert_int_equal(c.stop, KB_STOP_NONE);
    assert_false(c.reached.seen);
    kb_sim_free(sim);
}

static void test_max_events_counts_the_simulation_events(void **state)
{
    (void)state;
    kb_sim_control c = {.max_events = 25};
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, &c, 3);
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, tick, NULL);
    uint64_t done = 0;
    assert_int_equal(kb_sim_step(sim, 20, &done), KB_RUN_UNTIL); /* a step below the limit */
    assert_int_equal(done, 20);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    assert_int_equal(c.stop, KB_STOP_EVENTS);
    assert_int_equal(c.reached.events, 25);
    assert_int_equal(c.reached.now, 240);
    assert_int_equal(kb_sim_now(sim), 240);
    kb_sim_free(sim);
}

static void test_one_stop_ends_every_simulation_and_the_first_reason_stays(void **state)
{
    (void)state;
    kb_sim_control c = {.max_events = 3};
    kb_sim *a = kb_sim_new(), *b = kb_sim_new();
    kb_sim_set_control(a, &c, 1);
    kb_sim_set_control(b, &c, 2);
    kb_sim_after(a, 0, KB_PRIO_NORMAL, tick, NULL);
    kb_sim_after(b, 0, KB_PRIO_NORMAL, tick, NULL);
    assert_int_equal(kb_sim_run(a, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    c.until = 5; /* a second limit cannot replace the reason */
    assert_int_equal(kb_sim_run(b, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    assert_int_equal(c.stop, KB_STOP_EVENTS);
    assert_int_equal(c.reached.id, 1);
    kb_sim_stats st;
    kb_sim_get_stats(b, &st);
    assert_int_equal(st.events, 0); /* b stopped before its first event */
    kb_sim_free(a);
    kb_sim_free(b);
}

static void raise_stop(kb_sim *sim, void *arg)
{
    kb_sim_control *c = arg;
    if (kb_sim_now(sim) == 500)
        c->stop = KB_STOP_SIGINT; /* as a signal handler would */
    kb_sim_after(sim, 10, KB_PRIO_NORMAL, raise_stop, arg);
}

static void test_the_stop_flag_ends_a_run_at_the_next_event(void **state)
{
    (void)state;
    kb_sim_control c;
    memset(&c, 0, sizeof c);
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, &c, 1);
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, raise_stop, &c);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    assert_int_equal(kb_sim_now(sim), 500); /* the event that raised it was the last */
    assert_int_equal(c.reached.events, 51);
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_zeroed_control_changes_nothing),
        cmocka_unit_test(test_until_stops_before_the_first_event_at_the_limit),
        cmocka_unit_test(test_a_bounded_run_below_the_limit_is_not_stopped),
        cmocka_unit_test(test_an_empty_queue_ends_a_run_normally),
        cmocka_unit_test(test_max_events_counts_the_simulation_events),
        cmocka_unit_test(test_one_stop_ends_every_simulation_and_the_first_reason_stays),
        cmocka_unit_test(test_the_stop_flag_ends_a_run_at_the_next_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
