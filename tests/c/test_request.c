/* Requests as events (core/request.h): puts, gets and resource requests
 * that join the same FIFO queues as blocking calls, trigger their event when
 * served, and run their object's part first when processed (SimPy's order). */
#include "actor.h"
#include "core/event.h"
#include "core/request.h"
#include "core/resource.h"
#include "core/store.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static kb_item num(int64_t i) { return (kb_item){.i = i}; }

static int processed_calls;
static void count_processed(kb_request *r)
{
    (void)r;
    processed_calls++;
}

static void test_a_get_request_is_served_by_a_later_put_and_succeeds_with_the_item(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 0);
    kb_request g = {0};
    g.on_processed = count_processed;
    processed_calls = 0;
    kb_store_get_request(st, &g);
    assert_true(kb_request_pending(&g));
    assert_true(kb_request_busy(&g));
    assert_int_equal(g.ev->state, KB_EVENT_PENDING);
    assert_true(kb_store_put(st, num(7), NULL)); /* from outside a process */
    /* the put's processing (queued now) serves the getter */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(g.ev->state, KB_EVENT_PROCESSED);
    assert_int_equal(g.ev->value.i, 7);
    assert_int_equal(processed_calls, 1);
    assert_false(kb_request_busy(&g));
    kb_request_fini(&g);
    kb_store_close(st);
    kb_sim_free(sim);
}

/* A waiter on the request wakes after the object's part (the hook is the
 * event's first waiter): a put request's processing serves the first
 * getter before the putter's own waiter runs. */
static void test_a_put_request_serves_the_first_getter_before_its_waiters_wake(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 0);
    wake_log log = {0};
    actor getter, putter;
    actor_init(&getter, sim, 1, &log, "getter", 0);
    actor_init(&putter, sim, 2, &log, "putter", 0);
    kb_item out;
    assert_false(kb_store_get(st, &out, &getter.w));
    kb_request p = {0};
    kb_store_put_request(st, &p, num(3));
    assert_int_equal(p.ev->state, KB_EVENT_TRIGGERED); /* room: served at once */
    assert_false(kb_event_wait(p.ev, &putter.w));
    kb_sim_run(sim, KB_TIME_MAX);
    /* put processed: getter served (its processing queued), putter woken;
     * then the getter's processing wakes it */
    assert_int_equal(log.n, 2);
    assert_int_equal(log.who[0], 2);
    assert_int_equal(log.who[1], 1);
    assert_int_equal(getter.item.i, 3);
    kb_request_fini(&p);
    kb_proc_end(&getter.proc);
    kb_proc_end(&putter.proc);
    kb_store_close(st);
    kb_sim_free(sim);
}

static void test_a_cancelled_request_leaves_the_queue_and_serves_nobody(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "q", 1);
    assert_true(kb_store_put(st, num(1), NULL)); /* full */
    kb_request a = {0}, b = {0};
    kb_store_put_request(st, &a, num(2));
    kb_store_put_request(st, &b, num(3));
    assert_int_equal(kb_list_count(&st->putters), 2);
    assert_true(kb_request_cancel(&a));
    assert_false(kb_request_cancel(&a));
    assert_int_equal(kb_list_count(&st->putters), 1);
    kb_item out;
    assert_true(kb_store_get(st, &out, NULL));
    assert_int_equal(out.i, 1);
    kb_sim_run(sim, KB_TIME_MAX); /* the get's processing admits b, not a */
    assert_int_equal(a.ev->state, KB_EVENT_PENDING);
    assert_int_equal(b.ev->state, KB_EVENT_PROCESSED);
    assert_int_equal(kb_store_count(st), 1);
    assert_true(kb_store_get(st, &out, NULL));
    assert_int_equal(out.i, 3);
    kb_request_fini(&a);
    kb_request_fini(&b);
    kb_store_close(st);
    kb_sim_free(sim);
}

static void test_a_resource_request_holds_a_slot_until_released(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "bus", 1);
    kb_request a = {0}, b = {0};
    kb_resource_request(r, &a);
    kb_resource_request(r, &b);
    assert_int_equal(r->in_use, 1);
    assert_int_equal(r->nusers, 1);
    assert_false(kb_resource_release(r)); /* no slot taken by a blocking acquire */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(a.ev->state, KB_EVENT_PROCESSED);
    assert_int_equal(b.ev->state, KB_EVENT_PENDING);
    assert_true(kb_request_busy(&a)); /* a user */
    assert_true(kb_resource_release_request(r, &a));
    assert_false(kb_request_busy(&a));
    assert_false(kb_resource_release_request(r, &a)); /* SimPy: a second release is harmless */
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(b.ev->state, KB_EVENT_PROCESSED);
    assert_int_equal(r->in_use, 1);
    assert_true(kb_resource_release_request(r, &b));
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(r->in_use, 0);
    kb_request_fini(&a);
    kb_request_fini(&b);
    kb_resource_close(r);
    kb_sim_free(sim);
}

/* Requests and blocking acquires share one FIFO queue. */
static void test_requests_and_blocking_acquires_are_served_in_arrival_order(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_resource *r = kb_resource_new(sim, "bus", 1);
    assert_true(kb_resource_acquire(r, NULL));
    wake_log log = {0};
    actor x;
    actor_init(&x, sim, 1, &log, "x", 0);
    kb_request a = {0};
    kb_resource_request(r, &a);
    assert_false(kb_resource_acquire(r, &x.w));
    assert_true(kb_resource_release(r));
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(a.ev->state, KB_EVENT_PROCESSED);
    assert_int_equal(x.wakes, 0);
    assert_true(kb_resource_release_request(r, &a));
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(x.wakes, 1);
    kb_request_fini(&a);
    kb_proc_end(&x.proc);
    kb_resource_close(r);
    kb_sim_free(sim);
}

static void test_a_request_says_what_it_is(void **state)
{
    (void)state;
    kb_sim *sim = kb_sim_new();
    kb_store *st = kb_store_new(sim, "inbox", 0);
    kb_request g = {0};
    kb_store_get_request(st, &g);
    char buf[200];
    kb_event_describe(g.ev, buf, sizeof buf);
    assert_string_equal(buf, "get request #1 from store 'inbox' (pending)");
    assert_true(kb_request_cancel(&g));
    kb_event_describe(g.ev, buf, sizeof buf); /* it stays pending, and will never be served */
    assert_string_equal(buf, "get request #1 from store 'inbox' (cancelled)");
    kb_request_fini(&g);
    kb_store_close(st);
    kb_sim_free(sim);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_get_request_is_served_by_a_later_put_and_succeeds_with_the_item),
        cmocka_unit_test(test_a_put_request_serves_the_first_getter_before_its_waiters_wake),
        cmocka_unit_test(test_a_cancelled_request_leaves_the_queue_and_serves_nobody),
        cmocka_unit_test(test_a_resource_request_holds_a_slot_until_released),
        cmocka_unit_test(test_requests_and_blocking_acquires_are_served_in_arrival_order),
        cmocka_unit_test(test_a_request_says_what_it_is),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
