/* Many simulations in one process: no shared state between them. */
#include "workload.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void test_interleaved_simulations_match_separate_runs(void **state)
{
    (void)state;
    workload *alone = calloc(1, sizeof *alone);
    wl_start(alone, 3);
    kb_sim_run(alone->sim, KB_TIME_MAX);
    uint64_t expect = alone->step_hash;
    wl_finish(alone);
    free(alone);

    /* Two simulations of the same workload stepped alternately, plus a
     * third with another seed, all in one process. */
    workload *w[3];
    uint64_t seeds[3] = {3, 3, 4};
    for (int i = 0; i < 3; i++) {
        w[i] = calloc(1, sizeof *w[i]);
        wl_start(w[i], seeds[i]);
    }
    bool busy = true;
    while (busy) {
        busy = false;
        for (int i = 0; i < 3; i++) {
            uint64_t done = 0;
            kb_sim_step(w[i]->sim, 1 + (uint64_t)i, &done);
            busy |= done > 0;
        }
    }
    assert_int_equal(w[0]->step_hash, expect);
    assert_int_equal(w[1]->step_hash, expect);
    assert_true(w[2]->step_hash != expect);
    for (int i = 0; i < 3; i++) {
        wl_finish(w[i]);
        free(w[i]);
    }
}

static void test_simulations_can_be_created_and_freed_repeatedly(void **state)
{
    (void)state;
    /* Leaks are caught by the sanitizer build, which runs this test too. */
    for (int i = 0; i < 200; i++) {
        kb_sim *sim = kb_sim_new();
        kb_store *st = kb_store_new(sim, "s", 0);
        for (int k = 0; k < 50; k++)
            kb_store_put(st, (kb_item){.i = k}, NULL);
        kb_event *ev = kb_event_timeout(sim, 10, KB_ITEM_NONE);
        (void)ev; /* left live on purpose: freeing the sim reclaims it */
        if (i % 2)
            kb_sim_run(sim, KB_TIME_MAX);
        kb_store_close(st);
        kb_sim_free(sim);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_interleaved_simulations_match_separate_runs),
        cmocka_unit_test(test_simulations_can_be_created_and_freed_repeatedly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
