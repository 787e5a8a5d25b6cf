/* Run control: callbacks at their times, run-until, step, stop, errors,
 * counters, interrupt. */
#include "core/sim.h"

#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

typedef struct log {
    kb_time t[64];
    int tag[64];
    int n;
} log_t;

typedef struct mark {
    log_t *log;
    int tag;
} mark;

static void record(kb_sim *sim, void *arg)
{
    mark *m = arg;
    m->log->t[m->log->n] = kb_sim_now(sim);
    m->log->tag[m->log->n++] = m->tag;
}

static void test_callbacks_run_at_their_time(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    log_t log = {0};
    mark m[3] = {{&log, 0}, {&log, 1}, {&log, 2}};
    kb_sim_at(sim, 3000, KB_PRIO_NORMAL, record, &m[0]);
    kb_sim_at(sim, 1000, KB_PRIO_NORMAL, record, &m[1]);
    kb_sim_after(sim, 2000, KB_PRIO_NORMAL, record, &m[2]);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_EMPTY);
    assert_int_equal(log.n, 3);
    assert_int_equal(log.tag[0], 1);
    assert_int_equal(log.t[0], 1000);
    assert_int_equal(log.tag[1], 2);
    assert_int_equal(log.t[1], 2000);
    assert_int_equal(log.tag[2], 0);
    assert_int_equal(kb_sim_now(sim), 3000);
    kb_sim_free(sim);
}

static void test_urgent_runs_before_normal_at_same_time(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    log_t log = {0};
    mark m[3] = {{&log, 0}, {&log, 1}, {&log, 2}};
    kb_sim_at(sim, 5, KB_PRIO_NORMAL, record, &m[0]);
    kb_sim_at(sim, 5, KB_PRIO_LATE, record, &m[1]);
    kb_sim_at(sim, 5, KB_PRIO_URGENT, record, &m[2]);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.tag[0], 2);
    assert_int_equal(log.tag[1], 0);
    assert_int_equal(log.tag[2], 1);
    kb_sim_free(sim);
}

static void test_run_until_is_exclusive_and_advances_clock(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    log_t log = {0};
    mark m[3] = {{&log, 0}, {&log, 1}, {&log, 2}};
    kb_sim_at(sim, 10, KB_PRIO_NORMAL, record, &m[0]);
    kb_sim_at(sim, 20, KB_PRIO_NORMAL, record, &m[1]);
    kb_sim_at(sim, 30, KB_PRIO_NORMAL, record, &m[2]);
    assert_int_equal(kb_sim_run(sim, 20), KB_RUN_UNTIL);
    assert_int_equal(log.n, 1); /* the event at exactly 20 waits */
    assert_int_equal(kb_sim_now(sim), 20);
    assert_int_equal(kb_sim_run(sim, 25), KB_RUN_UNTIL);
    assert_int_equal(log.n, 2);
    assert_int_equal(kb_sim_now(sim), 25);
    /* scheduling at the advanced clock still orders correctly */
    mark early = {&log, 9};
    kb_sim_at(sim, 26, KB_PRIO_NORMAL, record, &early);
    assert_int_equal(kb_sim_run(sim, 100), KB_RUN_EMPTY);
    assert_int_equal(log.n, 4);
    assert_int_equal(log.tag[2], 9);
    assert_int_equal(log.tag[3], 2);
    assert_int_equal(kb_sim_now(sim), 100); /* empty queue: clock still reaches until */
    kb_sim_free(sim);
}

static void test_step_processes_at_most_n_events(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    log_t log = {0};
    mark m = {&log, 0};
    for (int i = 0; i < 5; i++)
        kb_sim_at(sim, i * 10, KB_PRIO_NORMAL, record, &m);
    uint64_t done = 0;
    assert_int_equal(kb_sim_step(sim, 2, &done), KB_RUN_UNTIL);
    assert_int_equal(done, 2);
    assert_int_equal(kb_sim_now(sim), 10); /* step never moves the clock past the last event */
    assert_int_equal(kb_sim_step(sim, 10, &done), KB_RUN_EMPTY);
    assert_int_equal(done, 3);
    assert_int_equal(kb_sim_step(sim, 1, &done), KB_RUN_EMPTY);
    assert_int_equal(done, 0);
    kb_sim_free(sim);
}

static void stop_now(kb_sim *sim, void *arg)
{
    (*(int *)arg)++;
    kb_sim_stop(sim);
}

static void test_stop_from_callback_returns_after_that_event(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    int calls = 0;
    kb_sim_at(sim, 1, KB_PRIO_NORMAL, stop_now, &calls);
    kb_sim_at(sim, 1, KB_PRIO_NORMAL, stop_now, &calls);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_STOPPED);
    assert_int_equal(calls, 1);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_STOPPED); /* the second one */
    assert_int_equal(calls, 2);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_EMPTY);
    kb_sim_free(sim);
}

static void schedule_in_past(kb_sim *sim, void *arg)
{
    kb_sim_at(sim, kb_sim_now(sim) - 1, KB_PRIO_NORMAL, record, arg);
}

static void test_scheduling_in_the_past_fails_the_run(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    log_t log = {0};
    mark m = {&log, 0};
    kb_sim_at(sim, 5000, KB_PRIO_NORMAL, schedule_in_past, &m);
    kb_sim_at(sim, 6000, KB_PRIO_NORMAL, record, &m);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_FAILED);
    assert_non_null(kb_sim_error(sim));
    assert_non_null(strstr(kb_sim_error(sim), "t=4.999 ns is before now=5.000 ns"));
    assert_int_equal(log.n, 0);
    /* the error persists until cleared, then the run can go on */
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_FAILED);
    kb_sim_clear_error(sim);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_EMPTY);
    assert_int_equal(log.n, 1);
    kb_sim_free(sim);
}

static void test_invalid_priority_is_an_error(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    log_t log = {0};
    mark m = {&log, 0};
    kb_sim_at(sim, 1, 8, record, &m);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_FAILED);
    assert_non_null(strstr(kb_sim_error(sim), "invalid event priority 8"));
    kb_sim_free(sim);
}

static void chain(kb_sim *sim, void *arg)
{
    int *left = arg;
    if (--*left > 0)
        kb_sim_after(sim, 1, KB_PRIO_NORMAL, chain, arg);
}

static void test_counters_count_processed_events(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    int left = 1000;
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, chain, &left);
    kb_sim_stats st;
    kb_sim_get_stats(sim, &st);
    assert_int_equal(st.pending, 1);
    kb_sim_run(sim, KB_TIME_MAX);
    kb_sim_get_stats(sim, &st);
    assert_int_equal(st.events, 1000);
    assert_int_equal(st.now, 999);
    assert_int_equal(st.pending, 0);
    assert_true(st.wall_s >= 0);
    assert_true(st.wall_s == 0 || st.events_per_s > 0);
    kb_sim_free(sim);
}

static void endless(kb_sim *sim, void *arg)
{
    volatile sig_atomic_t *flag = arg;
    if (kb_sim_now(sim) == 50000)
        *flag = 1; /* as a signal handler would */
    kb_sim_after(sim, 1, KB_PRIO_NORMAL, endless, arg);
}

static void test_interrupt_flag_stops_an_endless_run(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    volatile sig_atomic_t flag = 0;
    kb_sim_set_interrupt(sim, &flag);
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, endless, (void *)&flag);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    assert_true(kb_sim_now(sim) >= 50000);
    assert_true(kb_sim_now(sim) < 50000 + 4096); /* polled every 4096 events */
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callbacks_run_at_their_time),
        cmocka_unit_test(test_urgent_runs_before_normal_at_same_time),
        cmocka_unit_test(test_run_until_is_exclusive_and_advances_clock),
        cmocka_unit_test(test_step_processes_at_most_n_events),
        cmocka_unit_test(test_stop_from_callback_returns_after_that_event),
        cmocka_unit_test(test_scheduling_in_the_past_fails_the_run),
        cmocka_unit_test(test_invalid_priority_is_an_error),
        cmocka_unit_test(test_counters_count_processed_events),
        cmocka_unit_test(test_interrupt_flag_stops_an_endless_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
