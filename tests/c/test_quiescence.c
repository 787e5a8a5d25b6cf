/* Quiescence: a run that ends with processes still waiting says who waits
 * on what. */
#include "actor.h"
#include "core/event.h"
#include "core/resource.h"
#include "core/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_report_lists_each_blocked_process_and_its_object(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "inbox", 4);
    kb_resource *r = kb_resource_new(sim, "bus", 1);
    kb_event *ev = kb_event_new(sim);
    kb_event_set_name(ev, "go");
    actor a, b, c;
    actor_init(&a, sim, 0, NULL, "reader", 0);
    actor_init(&b, sim, 1, NULL, "starter", 0);
    actor_init(&c, sim, 2, NULL, "writer", 0);
    kb_item out;
    kb_store_get(st, &out, &a.w);
    kb_event_wait(ev, &b.w);
    kb_resource_acquire(r, NULL);
    kb_resource_acquire(r, &c.w);
    kb_sim_run(sim, KB_TIME_MAX);

    kb_sim_stats stats;
    kb_sim_get_stats(sim, &stats);
    assert_int_equal(stats.waiting, 3);
    char *report = kb_sim_quiescence_report(sim);
    assert_non_null(report);
    assert_non_null(strstr(report, "with 3 processes still waiting"));
    assert_non_null(strstr(report, "process 'reader' #1 waiting to get from store 'inbox' "
                                   "(0 items, capacity 4, 1 getters and 0 putters waiting)"));
    assert_non_null(strstr(report, "process 'starter' #2 waiting on event 'go' #1 (pending)"));
    assert_non_null(strstr(report, "process 'writer' #3 waiting to acquire resource 'bus' "
                                   "(1 of 1 in use, 1 waiting)"));
    free(report);

    kb_proc_end(&a.proc);
    kb_proc_end(&b.proc);
    kb_proc_end(&c.proc);
    kb_store_close(st);
    kb_resource_close(r);
    kb_sim_free(sim);
}

static void test_woken_processes_and_daemons_are_not_reported(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "port", 0);
    actor svc, user;
    actor_init(&svc, sim, 0, NULL, "router-worker", KB_PROC_DAEMON);
    actor_init(&user, sim, 1, NULL, "user", 0);
    kb_item out;
    kb_store_get(st, &out, &svc.w);
    kb_store_get(st, &out, &user.w);
    assert_non_null(user.proc.wait_on);
    kb_store_put(st, (kb_item){.i = 1}, NULL); /* goes to the daemon, first in line */
    kb_store_put(st, (kb_item){.i = 2}, NULL); /* then to the user */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_null(kb_sim_quiescence_report(sim));
    kb_store_get(st, &out, &svc.w); /* the daemon waits again: still no report */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_null(kb_sim_quiescence_report(sim));
    kb_proc_end(&svc.proc);
    kb_proc_end(&user.proc);
    kb_store_close(st);
    kb_sim_free(sim);
}

/* The report's first line says whether the simulation is quiescent: only
 * with no run going on and nothing queued. */
static void test_report_with_events_queued_is_not_quiescent(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_event *never = kb_event_new(sim);
    kb_event *t = kb_event_timeout(sim, 5000, KB_ITEM_NONE);
    actor a, b;
    actor_init(&a, sim, 0, NULL, "stuck", 0);
    actor_init(&b, sim, 1, NULL, "sleeper", 0);
    kb_event_wait(never, &a.w);
    kb_event_wait(t, &b.w);
    kb_sim_run(sim, 1000);
    char *report = kb_sim_quiescence_report(sim);
    assert_non_null(report);
    assert_null(strstr(report, "quiescent"));
    assert_non_null(strstr(report, "simulation at t=1.000 ns with 1 event queued and 2 processes waiting:"));
    assert_non_null(strstr(report, "process 'sleeper' #2 waiting on timeout #2 (5.000 ns, triggered)"));
    free(report);
    kb_sim_run(sim, KB_TIME_MAX);
    report = kb_sim_quiescence_report(sim);
    assert_non_null(strstr(report, "simulation quiescent at t=5.000 ns with 1 process still waiting:"));
    free(report);
    kb_proc_end(&a.proc);
    kb_proc_end(&b.proc);
    kb_event_unref(t);
    kb_event_unref(never);
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_lists_each_blocked_process_and_its_object),
        cmocka_unit_test(test_woken_processes_and_daemons_are_not_reported),
        cmocka_unit_test(test_report_with_events_queued_is_not_quiescent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
