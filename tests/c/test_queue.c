/* The event queue: total order by (time, priority, insertion sequence). */
#include "core/queue.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

static uint64_t key(int prio, uint64_t seq) { return ((uint64_t)prio << KB_QUEUE_SEQ_BITS) | seq; }

static void test_pops_in_time_order(void **state)
{
    (void)state;
    kb_queue q;
    kb_queue_init(&q);
    kb_time times[] = {50, 10, 40, 20, 30, 1000000, 0};
    for (uint64_t i = 0; i < 7; i++)
        kb_queue_push(&q, times[i], key(1, i), NULL, NULL);
    kb_time expect[] = {0, 10, 20, 30, 40, 50, 1000000};
    kb_qentry e;
    for (int i = 0; i < 7; i++) {
        assert_true(kb_queue_pop_before(&q, KB_TIME_MAX, &e));
        assert_int_equal(e.t, expect[i]);
    }
    assert_false(kb_queue_pop_before(&q, KB_TIME_MAX, &e));
    kb_queue_destroy(&q);
}

static void test_equal_time_orders_by_priority_then_insertion(void **state)
{
    (void)state;
    kb_queue q;
    kb_queue_init(&q);
    /* inserted: (prio 1, seq 0) (prio 0, seq 1) (prio 2, seq 2) (prio 0, seq 3) (prio 1, seq 4) */
    int prios[] = {1, 0, 2, 0, 1};
    for (uint64_t i = 0; i < 5; i++)
        kb_queue_push(&q, 7, key(prios[i], i), NULL, NULL);
    uint64_t expect_seq[] = {1, 3, 0, 4, 2};
    kb_qentry e;
    for (int i = 0; i < 5; i++) {
        assert_true(kb_queue_pop_before(&q, KB_TIME_MAX, &e));
        assert_int_equal(e.key & KB_QUEUE_SEQ_MASK, expect_seq[i]);
    }
    kb_queue_destroy(&q);
}

static void test_pop_before_leaves_later_entries_untouched(void **state)
{
    (void)state;
    kb_queue q;
    kb_queue_init(&q);
    kb_queue_push(&q, 100, key(1, 0), NULL, NULL);
    kb_qentry e;
    assert_false(kb_queue_pop_before(&q, 100, &e)); /* until is exclusive */
    assert_int_equal(kb_queue_size(&q), 1);
    assert_int_equal(kb_queue_min_time(&q), 100);
    /* The clock may stop anywhere before 100; an entry pushed there must
     * still come first. */
    kb_queue_push(&q, 60, key(1, 1), NULL, NULL);
    assert_true(kb_queue_pop_before(&q, KB_TIME_MAX, &e));
    assert_int_equal(e.t, 60);
    assert_true(kb_queue_pop_before(&q, KB_TIME_MAX, &e));
    assert_int_equal(e.t, 100);
    assert_int_equal(kb_queue_min_time(&q), KB_TIME_MAX);
    kb_queue_destroy(&q);
}

/* Reference: a plain array kept sorted by insertion, O(n) per push;
 * a[head .. n) is what is pending (a[0 .. head) was popped). */
typedef struct ref {
    kb_qentry *a;
    size_t n, head;
} ref;

static int before(const kb_qentry *x, const kb_qentry *y)
{
    return x->t < y->t || (x->t == y->t && x->key < y->key);
}

/* Pushes e to both the queue and the reference. */
static void both_push(kb_queue *q, ref *r, kb_qentry e)
{
    kb_queue_push(q, e.t, e.key, NULL, NULL);
    size_t i = r->n++;
    while (i > r->head && before(&e, &r->a[i - 1])) {
        r->a[i] = r->a[i - 1];
        i--;
    }
    r->a[i] = e;
}

/* Pops from the queue (which must not be empty) and checks it is the
 * reference's first entry; returns its time. */
static kb_time both_pop(kb_queue *q, ref *r)
{
    kb_qentry got;
    assert_true(kb_queue_pop_before(q, KB_TIME_MAX, &got));
    kb_qentry want = r->a[r->head++];
    assert_int_equal(got.t, want.t);
    assert_int_equal(got.key, want.key);
    return got.t;
}

static uint64_t next_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Random interleaving of pushes (many equal times, all priorities, wide
 * and narrow delays) and pops, checked entry by entry against the
 * reference. */
static void test_random_workload_matches_sorted_reference(void **state)
{
    (void)state;
    enum { OPS = 60000 };
    kb_queue q;
    kb_queue_init(&q);
    ref r = {calloc(OPS, sizeof(kb_qentry)), 0, 0};
    uint64_t rng = 12345, seq = 0;
    kb_time now = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t x = next_rand(&rng);
        if (x % 3 != 0 || r.head == r.n) {
            kb_time delay = (x >> 8) % 4 == 0 ? 0 : (kb_time)((x >> 16) % ((x >> 40) % 2 ? 50 : 5000000));
            int prio = (int)((x >> 4) % KB_QUEUE_PRIOS);
            both_push(&q, &r, (kb_qentry){now + delay, key(prio, seq++), NULL, NULL});
        } else {
            now = both_pop(&q, &r);
        }
        assert_int_equal(kb_queue_size(&q), r.n - r.head);
    }
    while (r.head < r.n)
        both_pop(&q, &r);
    kb_qentry got;
    assert_false(kb_queue_pop_before(&q, KB_TIME_MAX, &got));
    free(r.a);
    kb_queue_destroy(&q);
}

/* The queue's size wanders back and forth across both thresholds of the
 * sorted array (KB_QUEUE_SMALL_MAX, KB_QUEUE_SMALL_MIN) while some
 * entries are pushed late under a key taken earlier (as kb_sim_at_key
 * does), many at the current time: every removal matches the sorted
 * reference, and kb_queue_has_now agrees with it, whichever structure holds
 * the entries. */
static void test_size_crossing_both_structures_keeps_the_order(void **state)
{
    (void)state;
    enum { OPS = 200000, RESERVED = 16 };
    kb_queue q;
    kb_queue_init(&q);
    ref r = {calloc(OPS, sizeof(kb_qentry)), 0, 0};
    uint64_t rng = 987654321, seq = 0;
    uint64_t reserved[RESERVED]; /* keys taken, pushed later */
    int nres = 0;
    kb_time now = 0;
    bool growing = true;
    int moves = 0;
    bool was_radix = false;
    for (int op = 0; op < OPS; op++) {
        size_t size = r.n - r.head;
        if (size >= 3 * KB_QUEUE_SMALL_MAX)
            growing = false;
        else if (size <= KB_QUEUE_SMALL_MIN / 2)
            growing = true;
        uint64_t x = next_rand(&rng);
        if (x % 8 == 0 && nres < RESERVED) { /* take a key now, push it later */
            reserved[nres++] = key((int)((x >> 8) % 3), seq++);
            continue;
        }
        if ((growing ? x % 4 != 0 : x % 4 == 0) || r.head == r.n) {
            kb_time delay = (x >> 8) % 3 == 0 ? 0 : (kb_time)((x >> 16) % ((x >> 40) % 2 ? 20 : 3000));
            uint64_t k = nres > 0 && (x >> 5) % 2 ? reserved[--nres] : key((int)((x >> 4) % 3), seq++);
            both_push(&q, &r, (kb_qentry){now + delay, k, NULL, NULL});
        } else {
            now = both_pop(&q, &r);
            for (unsigned p = 0; p < 3; p++) {
                const kb_qentry *next = r.head < r.n ? &r.a[r.head] : NULL;
                bool want_now = next && next->t == now && (next->key >> KB_QUEUE_SEQ_BITS) <= p;
                assert_int_equal(kb_queue_has_now(&q, p), want_now);
            }
        }
        assert_int_equal(kb_queue_size(&q), r.n - r.head);
        assert_int_equal(kb_queue_min_time(&q), r.head < r.n ? r.a[r.head].t : KB_TIME_MAX);
        if (q.radix != was_radix) {
            moves++;
            was_radix = q.radix;
        }
    }
    assert_true(moves >= 20); /* the entries went back and forth many times */
    free(r.a);
    kb_queue_destroy(&q);
}

/* Refills that bring many entries of one instant to the rings with their
 * keys out of order: keys taken in order and pushed as R interleaved runs
 * (R = 1 .. all of them, the last a reversal), over three priorities,
 * several rounds so that each ring's start wanders (its entries wrap
 * around its end), with entries at other times mixed in. Every removal
 * matches the sorted reference. */
static void test_refill_sorts_interleaved_runs_of_keys(void **state)
{
    (void)state;
    enum { K = 600, ROUNDS = 8 };
    static const int runs[] = {1, 2, 3, 7, 64, K};
    kb_queue q;
    kb_queue_init(&q);
    size_t cap = (size_t)ROUNDS * 6 * (K + K / 4 + 8);
    ref r = {calloc(cap, sizeof(kb_qentry)), 0, 0};
    uint64_t rng = 4242, seq = 0;
    kb_time now = 0;
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t v = 0; v < sizeof runs / sizeof *runs; v++) {
            int R = runs[v];
            uint64_t base = seq;
            seq += K;
            kb_time t = now + 1000;
            for (int j = 0; j < R; j++) /* run j: keys base + j, base + j + R, ... */
                for (int k = j; k < K; k += R) {
                    uint64_t kk = R == K ? base + (uint64_t)(K - 1 - k) : base + (uint64_t)k;
                    int prio = (int)(next_rand(&rng) % 3);
                    both_push(&q, &r, (kb_qentry){t, key(prio, kk), NULL, NULL});
                    if (k % 4 == 0) /* others, before and after the instant */
                        both_push(&q, &r, (kb_qentry){now + 1 + (kb_time)(next_rand(&rng) % 2000),
                                                      key(prio, seq++), NULL, NULL});
                }
            while (r.head < r.n - K / 8) /* leave a few for the next refill */
                now = both_pop(&q, &r);
        }
    }
    while (r.head < r.n)
        both_pop(&q, &r);
    free(r.a);
    kb_queue_destroy(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pops_in_time_order),
        cmocka_unit_test(test_equal_time_orders_by_priority_then_insertion),
        cmocka_unit_test(test_pop_before_leaves_later_entries_untouched),
        cmocka_unit_test(test_random_workload_matches_sorted_reference),
        cmocka_unit_test(test_size_crossing_both_structures_keeps_the_order),
        cmocka_unit_test(test_refill_sorts_interleaved_runs_of_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
