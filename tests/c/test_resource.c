/* Resource semantics: capacity, FIFO acquisition, hand-over on release. */
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
    kb_resource r;
    kb_resource_init(&r, sim, "dma", 2);
    assert_true(kb_resource_acquire(&r, NULL));
    assert_true(kb_resource_acquire(&r, NULL));
    assert_false(kb_resource_acquire(&r, NULL));
    assert_int_equal(r.in_use, 2);
    assert_int_equal(kb_resource_queued(&r), 0);
    kb_resource_deinit(&r);
    kb_sim_free(sim);
}

static void test_waiters_acquire_in_fifo_order_on_release(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource r;
    kb_resource_init(&r, sim, "dma", 1);
    wake_log log = {0};
    actor a[3];
    assert_true(kb_resource_acquire(&r, NULL));
    int arrival[] = {1, 2, 0};
    for (int i = 0; i < 3; i++)
        actor_init(&a[i], sim, i, &log, NULL, 0);
    for (int i = 0; i < 3; i++)
        assert_false(kb_resource_acquire(&r, &a[arrival[i]].w));
    assert_int_equal(kb_resource_queued(&r), 3);
    for (int i = 0; i < 3; i++) {
        assert_true(kb_resource_release(&r));
        assert_int_equal(r.in_use, 1); /* the slot passed to the next waiter */
        kb_sim_run(sim, KB_TIME_MAX);
        assert_int_equal(log.n, i + 1);
        assert_int_equal(log.who[i], arrival[i]);
    }
    assert_true(kb_resource_release(&r));
    assert_int_equal(r.in_use, 0);
    for (int i = 0; i < 3; i++)
        kb_proc_end(&a[i].proc);
    kb_resource_deinit(&r);
    kb_sim_free(sim);
}

static void test_release_without_a_held_slot_is_rejected(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource r;
    kb_resource_init(&r, sim, "dma", 1);
    assert_false(kb_resource_release(&r));
    assert_true(kb_resource_acquire(&r, NULL));
    assert_true(kb_resource_release(&r));
    assert_false(kb_resource_release(&r));
    kb_resource_deinit(&r);
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_slots_are_granted_at_once),
        cmocka_unit_test(test_waiters_acquire_in_fifo_order_on_release),
        cmocka_unit_test(test_release_without_a_held_slot_is_rejected),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
