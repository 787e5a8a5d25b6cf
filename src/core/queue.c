#include "core/queue.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

void kb_queue_init(kb_queue *q) { memset(q, 0, sizeof *q); }

void kb_queue_destroy(kb_queue *q)
{
    for (int i = 0; i < KB_QUEUE_BUCKETS; i++)
        free(q->bucket[i].a);
    for (int p = 0; p < KB_QUEUE_PRIOS; p++)
        free(q->ring[p].a);
    free(q->scratch.a);
    memset(q, 0, sizeof *q);
}

void kb_queue_ring_grow(kb_qring *r)
{
    size_t cap = r->cap ? r->cap * 2 : 64;
    kb_qentry *a = kb_xmalloc(cap * sizeof *a);
    for (size_t i = 0; i < r->n; i++)
        a[i] = r->a[(r->head + i) & (r->cap - 1)];
    free(r->a);
    r->a = a;
    r->cap = cap;
    r->head = 0;
}

void kb_queue_vec_grow(kb_qvec *v)
{
    v->cap = v->cap ? v->cap * 2 : 64;
    v->a = kb_xrealloc(v->a, v->cap * sizeof *v->a);
}

/* ---- the sorted array (its fast paths are in queue.h) ---- */

/* Inserts into the array (which holds fewer than KB_QUEUE_SMALL_MAX),
 * first moving its entries down to index 0 if it has no room at its end. */
static void small_insert(kb_queue *q, const kb_qentry *e)
{
    if (q->head + q->n == KB_QUEUE_SMALL_CAP) {
        memmove(q->small, q->small + q->head, q->n * sizeof *q->small);
        q->head = 0;
    }
    kb_queue_small_insert(q, e);
}

/* The array's entries go to the radix heap (all are >= last). */
static __attribute__((noinline)) void to_radix(kb_queue *q)
{
    for (size_t k = q->head; k < q->head + q->n; k++)
        *kb_queue_slot(q, q->small[k].t, q->small[k].key) = q->small[k];
    q->head = 0;
    q->radix = true;
}

/* The radix heap's few entries go back to the array, sorted. */
static __attribute__((noinline)) void to_small(kb_queue *q)
{
    q->n = 0;
    q->head = 0;
    for (unsigned p = 0; p < KB_QUEUE_PRIOS; p++) {
        kb_qring *r = &q->ring[p];
        for (size_t k = 0; k < r->n; k++, q->n++)
            small_insert(q, &r->a[(r->head + k) & (r->cap - 1)]);
        r->head = r->n = 0;
    }
    while (q->bucket_mask) {
        int b = __builtin_ctzll(q->bucket_mask);
        kb_qvec *v = &q->bucket[b];
        for (size_t k = 0; k < v->n; k++, q->n++)
            small_insert(q, &v->a[k]);
        v->n = 0;
        q->bucket_mask &= q->bucket_mask - 1;
    }
    q->ring_mask = 0;
    q->radix = false;
}

void kb_queue_push_small_slow(kb_queue *q, kb_time t, uint64_t key, kb_callback fn, void *arg)
{
    kb_qentry e = {t, key, fn, arg};
    if (q->n < KB_QUEUE_SMALL_MAX) {
        small_insert(q, &e);
    } else {
        to_radix(q);
        kb_qentry_set(kb_queue_slot(q, t, key), &e);
    }
    q->n++;
}

/* ---- the radix heap's refill ---- */

/* The end of the run of increasing keys that starts at i. */
static size_t run_end(const kb_qentry *a, size_t i, size_t n)
{
    while (++i < n && a[i - 1].key < a[i].key)
        ;
    return i;
}

/* Merges a[0..na) and b[0..nb), each in key order, into out. */
static void merge(const kb_qentry *a, size_t na, const kb_qentry *b, size_t nb, kb_qentry *out)
{
    size_t i = 0, j = 0;
    while (i < na && j < nb)
        *out++ = b[j].key < a[i].key ? b[j++] : a[i++];
    memcpy(out, a + i, (na - i) * sizeof *a);
    memcpy(out + (na - i), b + j, (nb - j) * sizeof *b);
}

/* Puts ring r's entries in key order, at the start of its array. They
 * come from a bucket as a few increasing runs (entries of one instant
 * pushed at different times), so a natural merge sort, which merges
 * neighbouring runs pass by pass, costs a few copies per entry. */
static void sort_ring(kb_queue *q, kb_qring *r)
{
    size_t n = r->n;
    kb_qvec *s = &q->scratch;
    if (s->cap < n) {
        free(s->a);
        s->cap = r->cap;
        s->a = kb_xmalloc(s->cap * sizeof *s->a);
    }
    for (size_t k = 0; k < n; k++)
        s->a[k] = r->a[(r->head + k) & (r->cap - 1)];
    kb_qentry *src = s->a, *dst = r->a;
    for (;;) {
        size_t runs = 0;
        for (size_t i = 0; i < n; runs++) {
            size_t mid = run_end(src, i, n), end = mid < n ? run_end(src, mid, n) : n;
            merge(src + i, mid - i, src + mid, end - mid, dst + i);
            i = end;
        }
        kb_qentry *t = src;
        src = dst;
        dst = t;
        if (runs == 1)
            break;
    }
    if (src != r->a)
        memcpy(r->a, src, n * sizeof *src);
    r->head = 0;
}

/* Appends e to its priority's ring (a refill's; kb_queue_ring_slot
 * keeps key order instead). Returns the ring's bit if e's key is below
 * the one before it: that ring needs sorting. */
static unsigned ring_append(kb_queue *q, const kb_qentry *e)
{
    kb_qring *r = kb_queue_ring_room(q, e->key);
    size_t m = r->cap - 1;
    bool late = r->n && r->a[(r->head + r->n - 1) & m].key > e->key;
    r->a[(r->head + r->n++) & m] = *e;
    return late ? 1u << (e->key >> KB_QUEUE_SEQ_BITS) : 0;
}

static kb_time bucket_min(const kb_qvec *v)
{
    kb_time m = KB_TIME_MAX;
    for (size_t k = 0; k < v->n; k++)
        if (v->a[k].t < m)
            m = v->a[k].t;
    return m;
}

bool kb_queue_pop_radix(kb_queue *q, kb_time until, kb_qentry *out)
{
    if (q->n <= KB_QUEUE_SMALL_MIN) {
        to_small(q);
        return kb_queue_pop_small(q, until, out);
    }
    int b = __builtin_ctzll(q->bucket_mask);
    kb_qvec *v = &q->bucket[b];
    kb_time m = bucket_min(v);
    if (m >= until)
        return false;
    /* Every entry of bucket b moves to a lower bucket, in its current
     * order, or to the (empty) rings, which are then sorted by key. */
    q->last = m;
    q->bucket_mask &= ~(UINT64_C(1) << b);
    size_t n = v->n;
    v->n = 0;
    kb_qentry *a = v->a;
    /* A big emptied bucket gives its memory back unless the queue is as
     * big: in a steady state the next redistribution would only ask for it
     * again (malloc, page faults and copies on every refill). */
    bool release = v->cap > 4096 && v->cap > 2 * q->n;
    if (release) {
        v->a = NULL;
        v->cap = 0;
    }
    /* `last` and the mask in locals: stores of entries could otherwise
     * alias q's fields and reload them for every entry. */
    uint64_t mask = 0, last = (uint64_t)m;
    unsigned unsorted = 0; /* rings whose appends went out of key order */
    for (size_t k = 0; k < n; k++) {
        uint64_t diff = (uint64_t)a[k].t ^ last;
        if (diff == 0) {
            unsorted |= ring_append(q, &a[k]);
        } else {
            int i = 64 - __builtin_clzll(diff);
            mask |= UINT64_C(1) << i;
            *kb_queue_bucket_slot(q, i) = a[k];
        }
    }
    q->bucket_mask |= mask;
    if (release)
        free(a);
    for (; unsorted; unsorted &= unsorted - 1)
        sort_ring(q, &q->ring[__builtin_ctz(unsorted)]);
    return kb_queue_pop_ring(q, until, out);
}

kb_time kb_queue_min_time(const kb_queue *q)
{
    if (!q->radix)
        return q->n ? q->small[q->head].t : KB_TIME_MAX;
    if (q->ring_mask)
        return q->last;
    if (q->bucket_mask == 0)
        return KB_TIME_MAX;
    return bucket_min(&q->bucket[__builtin_ctzll(q->bucket_mask)]);
}

/* A linear scan of every entry: for rare rewrites (an interrupted
 * process's pending wake, sim.h), never on a hot path. */
size_t kb_queue_redirect(kb_queue *q, kb_callback fn, void *arg, kb_callback new_fn, void *new_arg)
{
    size_t n = 0;
#define KB_REDIRECT(e)                                   \
    if ((e)->fn == fn && (e)->arg == arg) {              \
        (e)->fn = new_fn;                                \
        (e)->arg = new_arg;                              \
        n++;                                             \
    }
    if (!q->radix) {
        for (size_t i = q->head; i < q->head + q->n; i++)
            KB_REDIRECT(&q->small[i]);
        return n;
    }
    for (int p = 0; p < KB_QUEUE_PRIOS; p++) {
        kb_qring *r = &q->ring[p];
        for (size_t i = 0; i < r->n; i++)
            KB_REDIRECT(&r->a[(r->head + i) & (r->cap - 1)]);
    }
    for (int b = 0; b < KB_QUEUE_BUCKETS; b++)
        for (size_t i = 0; i < q->bucket[b].n; i++)
            KB_REDIRECT(&q->bucket[b].a[i]);
#undef KB_REDIRECT
    return n;
}
