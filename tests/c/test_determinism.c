/* Determinism: the same inputs give the same event sequence. */
#include "workload.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

typedef struct outcome {
    uint64_t step_hash, event_hash, events;
    kb_time end;
} outcome;

static outcome run_workload(uint64_t seed)
{
    workload *wl = calloc(1, sizeof *wl);
    wl_start(wl, seed);
    kb_sim_run(wl->sim, KB_TIME_MAX);
    kb_sim_stats st;
    kb_sim_get_stats(wl->sim, &st);
    outcome o = {wl->step_hash, wl->event_hash, st.events, st.now};
    wl_finish(wl);
    free(wl);
    return o;
}

static void test_identical_runs_give_identical_event_sequences(void **state)
{
    (void)state;
    outcome a = run_workload(7), b = run_workload(7);
    assert_true(a.events > 5000); /* the workload is not trivial */
    assert_int_equal(a.events, b.events);
    assert_int_equal(a.end, b.end);
    assert_int_equal(a.event_hash, b.event_hash);
    assert_int_equal(a.step_hash, b.step_hash);
}

static void test_a_different_seed_gives_a_different_sequence(void **state)
{
    (void)state;
    outcome a = run_workload(7), c = run_workload(8);
    assert_true(a.step_hash != c.step_hash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_runs_give_identical_event_sequences),
        cmocka_unit_test(test_a_different_seed_gives_a_different_sequence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
