/* Resource semantics (SimPy's): capacity, FIFO acquisition, a release
 * processed through the queue before the next request is granted. */
#include "actor.h"
#include "core/resource.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void test_free_slots_are_granted_at_once(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "dma", 2);
    assert_true(kb_resource_acquire(r, NULL));
    assert_true(kb_resource_acquire(r, NULL));
    assert_false(kb_resource_acquire(r, NULL));
    assert_int_equal(r->in_use, 2);
    assert_int_equal(kb_resource_queued(r), 0);
    kb_resource_close(r);
    kb_sim_free(sim);
}

static void test_waiters_acquire_in_fifo_order_on_release(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "dma", 1);
    wake_log log = {0};
    actor a[3];
    assert_true(kb_resource_acquire(r, NULL));
    int arrival[] = {1, 2, 0};
    for (int i = 0; i < 3; i++)
        actor_init(&a[i], sim, i, &log, NULL, 0);
    for (int i = 0; i < 3; i++)
        assert_false(kb_resource_acquire(r, &a[arrival[i]].w));
    assert_int_equal(kb_resource_queued(r), 3);
    for (int i = 0; i < 3; i++) {
        assert_true(kb_resource_release(r));
        assert_int_equal(r->in_use, 0); /* free until the release is processed */
        kb_sim_run(sim, KB_TIME_MAX);
        assert_int_equal(r->in_use, 1); /* granted to the next waiter */
        assert_int_equal(log.n, i + 1);
        assert_int_equal(log.who[i], arrival[i]);
    }
    assert_true(kb_resource_release(r));
    assert_int_equal(r->in_use, 0);
    for (int i = 0; i < 3; i++)
        kb_proc_end(&a[i].proc);
    kb_resource_close(r);
    kb_sim_free(sim);
}

static void test_release_without_a_held_slot_is_rejected(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "dma", 1);
    assert_false(kb_resource_release(r));
    assert_true(kb_resource_acquire(r, NULL));
    assert_true(kb_resource_release(r));
    assert_false(kb_resource_release(r));
    kb_resource_close(r);
    kb_sim_free(sim);
}

/* SimPy: a request made after a release but before the release is
 * processed tries the first waiting request, which gets the slot. */
static void test_a_request_after_a_release_serves_the_earlier_waiter(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "bus", 1);
    wake_log log = {0};
    actor a, b;
    actor_init(&a, sim, 1, &log, "a", 0);
    actor_init(&b, sim, 2, &log, "b", 0);
    assert_true(kb_resource_acquire(r, NULL));
    assert_false(kb_resource_acquire(r, &a.w));
    assert_true(kb_resource_release(r));
    assert_false(kb_resource_acquire(r, &b.w)); /* a, the first waiter, gets the slot */
    assert_int_equal(r->in_use, 1);
    assert_null(a.proc.wait_on);
    assert_ptr_equal(b.proc.wait_on, &r->w);
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(log.n, 1);
    assert_int_equal(log.who[0], 1);
    kb_proc_end(&a.proc);
    kb_proc_end(&b.proc);
    kb_resource_close(r);
    kb_sim_free(sim);
}

/* A resource given up with its release's processing queued goes after it. */
static void test_a_closed_resource_outlives_its_queued_release(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "bus", 1);
    assert_true(kb_resource_acquire(r, NULL));
    assert_true(kb_resource_release(r));
    kb_resource_close(r);
    kb_sim_run(sim, KB_TIME_MAX);
    kb_resource *r2 = kb_resource_new(sim, "bus2", 1);
    assert_true(kb_resource_acquire(r2, NULL));
    assert_true(kb_resource_release(r2)); /* queued; freed with the simulation */
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_slots_are_granted_at_once),
        cmocka_unit_test(test_waiters_acquire_in_fifo_order_on_release),
        cmocka_unit_test(test_release_without_a_held_slot_is_rejected),
        cmocka_unit_test(test_a_request_after_a_release_serves_the_earlier_waiter),
        cmocka_unit_test(test_a_closed_resource_outlives_its_queued_release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
