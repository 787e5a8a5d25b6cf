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
    memset(q, 0, sizeof *q);
}

static void ring_grow(kb_qring *r)
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

/* Appends, or inserts before the entries with greater keys: an entry may
 * be pushed after others of its instant although its key was taken first
 * (kb_sim_at_key); it still leaves in key order. */
static inline void ring_push(kb_qring *r, const kb_qentry *e)
{
    if (r->n == r->cap)
        ring_grow(r);
    size_t m = r->cap - 1, i = r->n;
    while (i > 0 && r->a[(r->head + i - 1) & m].key > e->key) {
        r->a[(r->head + i) & m] = r->a[(r->head + i - 1) & m];
        i--;
    }
    r->a[(r->head + i) & m] = *e;
    r->n++;
}

static inline void vec_push(kb_qvec *v, const kb_qentry *e)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->a = kb_xrealloc(v->a, v->cap * sizeof *v->a);
    }
    v->a[v->n++] = *e;
}

/* Files an entry relative to q->last, without counting it. */
static inline void place(kb_queue *q, const kb_qentry *e)
{
    uint64_t diff = (uint64_t)e->t ^ (uint64_t)q->last;
    if (diff == 0) {
        unsigned p = (unsigned)(e->key >> KB_QUEUE_SEQ_BITS);
        ring_push(&q->ring[p], e);
        q->ring_mask |= 1u << p;
    } else {
        int i = 64 - __builtin_clzll(diff); /* 1..63: times are non-negative */
        vec_push(&q->bucket[i], e);
        q->bucket_mask |= UINT64_C(1) << i;
    }
}

void kb_queue_push(kb_queue *q, kb_time t, uint64_t key, kb_callback fn, void *arg)
{
    kb_qentry e = {t, key, fn, arg};
    place(q, &e);
    q->n++;
}

static kb_time bucket_min(const kb_qvec *v)
{
    kb_time m = KB_TIME_MAX;
    for (size_t k = 0; k < v->n; k++)
        if (v->a[k].t < m)
            m = v->a[k].t;
    return m;
}

bool kb_queue_pop_before(kb_queue *q, kb_time until, kb_qentry *out)
{
    if (q->ring_mask == 0) {
        if (q->bucket_mask == 0)
            return false;
        int b = __builtin_ctzll(q->bucket_mask);
        kb_qvec *v = &q->bucket[b];
        kb_time m = bucket_min(v);
        if (m >= until)
            return false;
        /* Every entry of bucket b moves to the rings or a lower bucket,
         * in its current order, so equal keys keep their FIFO order. */
        q->last = m;
        q->bucket_mask &= ~(UINT64_C(1) << b);
        size_t n = v->n;
        v->n = 0;
        kb_qentry *a = v->a;
        bool release = v->cap > 4096; /* a big emptied bucket gives its memory back */
        if (release) {
            v->a = NULL;
            v->cap = 0;
        }
        for (size_t k = 0; k < n; k++)
            place(q, &a[k]);
        if (release)
            free(a);
    } else if (q->last >= until) {
        return false;
    }
    unsigned p = (unsigned)__builtin_ctz(q->ring_mask);
    kb_qring *r = &q->ring[p];
    *out = r->a[r->head];
    r->head = (r->head + 1) & (r->cap - 1);
    if (--r->n == 0)
        q->ring_mask &= ~(1u << p);
    q->n--;
    return true;
}

kb_time kb_queue_min_time(const kb_queue *q)
{
    if (q->ring_mask)
        return q->last;
    if (q->bucket_mask == 0)
        return KB_TIME_MAX;
    return bucket_min(&q->bucket[__builtin_ctzll(q->bucket_mask)]);
}
