/* Shared objects with SimPy's general loop (core/shared.h): a container
 * serves its head while requests fit, a priority store keeps Python's heapq
 * order, a preemptive resource takes the worst user's slot. */
#include "core/container.h"
#include "core/presource.h"
#include "core/pstore.h"
#include "core/sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static bool triggered(const kb_request *r) { return r->ev->state != KB_EVENT_PENDING; }

static void test_a_container_serves_its_head_while_requests_fit(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_shared *c = kb_container_new(sim, "tank", 10, 1);
    kb_request big = {0}, small = {0}, put = {0};
    kb_container_get(c, &big, 5);   /* waits: level 1 */
    kb_container_get(c, &small, 1); /* behind the big one: waits too */
    assert_false(triggered(&big));
    assert_false(triggered(&small));
    kb_container_put(c, &put, 6); /* level 7; its processing serves both */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_true(triggered(&big));
    assert_true(triggered(&small));
    assert_true(kb_container_level(c) == 1);
    kb_request_fini(&big);
    kb_request_fini(&small);
    kb_request_fini(&put);
    kb_shared_close(c);
    kb_sim_free(sim);
}

/* Priorities 1, 1, 1 put in order a1 a2 a3 with a 0 first: heapq pops
 * a1 a3 a2 (scenario 48's order), not arrival order. */
static void test_a_priority_store_keeps_heapq_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_shared *ps = kb_pstore_new_priority(sim, "q", 0);
    double keys[] = {3, 1, 2, 1, 2, 1, 0, 2};
    kb_request puts[8];
    memset(puts, 0, sizeof puts);
    for (int i = 0; i < 8; i++)
        kb_pstore_put(ps, &puts[i], (kb_item){.i = i}, keys[i]);
    int64_t expect[] = {6, 1, 5, 3, 2};
    kb_request gets[5];
    memset(gets, 0, sizeof gets);
    for (int i = 0; i < 5; i++) {
        kb_pstore_get(ps, &gets[i]);
        assert_true(triggered(&gets[i]));
        assert_int_equal(gets[i].ev->value.i, expect[i]);
    }
    kb_sim_run(sim, KB_TIME_MAX); /* a request stays put until processed */
    for (int i = 0; i < 5; i++)
        kb_request_fini(&gets[i]);
    for (int i = 0; i < 8; i++)
        kb_request_fini(&puts[i]);
    kb_shared_close(ps);
    kb_sim_free(sim);
}

static kb_request *victim_seen, *by_seen;
static void on_preempt(void *ctx, kb_request *victim, kb_request *by)
{
    (void)ctx;
    victim_seen = victim;
    by_seen = by;
}

static void test_a_preempting_request_takes_the_worst_users_slot(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_shared *r = kb_presource_new(sim, "arb", 2, true, on_preempt, NULL);
    kb_request a = {0}, b = {0}, hi = {0}, polite = {0};
    kb_presource_request(r, &a, 5, true, NULL);
    kb_presource_request(r, &b, 5, true, NULL); /* equal priority, later: the worse key */
    kb_presource_request(r, &polite, 0, false, NULL);
    assert_false(triggered(&polite)); /* preempt = false waits */
    assert_null(victim_seen);
    kb_request_cancel(&polite);
    kb_presource_request(r, &hi, 1, true, NULL);
    assert_ptr_equal(victim_seen, &b);
    assert_ptr_equal(by_seen, &hi);
    assert_true(triggered(&hi));
    assert_int_equal(kb_presource_in_use(r), 2);
    kb_sim_run(sim, KB_TIME_MAX);
    kb_presource_release(r, &a);
    kb_presource_release(r, &hi);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(kb_presource_in_use(r), 0);
    kb_request_fini(&a);
    kb_request_fini(&b);
    kb_request_fini(&hi);
    kb_request_fini(&polite);
    kb_shared_close(r);
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_container_serves_its_head_while_requests_fit),
        cmocka_unit_test(test_a_priority_store_keeps_heapq_order),
        cmocka_unit_test(test_a_preempting_request_takes_the_worst_users_slot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
