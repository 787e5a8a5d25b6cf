/* The pending-event queue, totally ordered by (time, priority, sequence).
 *
 * Two structures, one order: while few entries are pending (at most
 * KB_QUEUE_SMALL_MAX) they sit in one array sorted by (time, key), inserted
 * from its end (new events are mostly the latest) and removed from its
 * front; past that they move to a radix heap, and back to the array when
 * the heap's rings run dry with KB_QUEUE_SMALL_MIN or fewer pending (checked
 * there, not on every removal). Which one holds the entries
 * never shows: both give the exact total order.
 *
 * The radix heap is monotone: simulated time never goes backwards, so every
 * entry's time is >= the time of the last entry removed ("last"). Entries
 * whose time equals `last` wait in one FIFO ring per priority; any other
 * entry waits in bucket i, where i is the bit length of (time XOR last).
 * When the rings run dry, the lowest non-empty bucket is scanned for its
 * minimum time, which becomes `last`, and its entries are redistributed to
 * the rings and lower buckets. Rings are kept in key order (an entry
 * pushed late with an early key, kb_sim_at_key, is inserted before the
 * greater keys; otherwise it is an append), so entries with equal time and
 * priority leave in sequence order. A redistribution appends and then
 * sorts the rings it left out of order (queue.c: a bucket can hold several
 * runs of keys, and inserting each entry would be quadratic in them).
 * Why this structure: docs/decisions.md ("Event queue"). */
#ifndef KB_CORE_QUEUE_H
#define KB_CORE_QUEUE_H

#include "core/types.h"

#define KB_QUEUE_PRIOS 8 /* priorities 0..7 */
#define KB_QUEUE_BUCKETS 64
#define KB_QUEUE_SEQ_BITS 56
#define KB_QUEUE_SEQ_MASK ((UINT64_C(1) << KB_QUEUE_SEQ_BITS) - 1)
/* The sorted array's bounds (hysteresis, so a queue hovering near one
 * size does not move back and forth) and its capacity (room to insert
 * before moving the entries down to index 0). */
#define KB_QUEUE_SMALL_MAX 32
#define KB_QUEUE_SMALL_MIN 8
#define KB_QUEUE_SMALL_CAP 128

typedef struct kb_qentry {
    kb_time t;
    uint64_t key; /* priority << 56 | insertion sequence */
    kb_callback fn;
    void *arg;
} kb_qentry;

typedef struct kb_qvec {
    kb_qentry *a;
    size_t n, cap;
} kb_qvec;

typedef struct kb_qring {
    kb_qentry *a;
    size_t head, n, cap; /* cap is a power of two */
} kb_qring;

typedef struct kb_queue {
    kb_time last;           /* time of the last entry removed */
    size_t n;
    bool radix;             /* the radix heap holds the entries, not the array */
    size_t head;            /* the sorted array: small[head .. head + n) */
    /* the radix heap */
    uint64_t bucket_mask;   /* bit i set: bucket[i] non-empty */
    unsigned ring_mask;     /* bit p set: ring[p] non-empty */
    kb_qvec bucket[KB_QUEUE_BUCKETS];
    kb_qring ring[KB_QUEUE_PRIOS];
    kb_qvec scratch;        /* room to sort a ring (queue.c) */
    kb_qentry small[KB_QUEUE_SMALL_CAP];
} kb_queue;

void kb_queue_init(kb_queue *q);
void kb_queue_destroy(kb_queue *q);

/* Copies field by field: an entry built from a push's arguments then
 * goes straight from registers, where a whole-struct copy read it back
 * from the stack with wider loads than its stores (a store-forwarding
 * stall on every push). */
static inline void kb_qentry_set(kb_qentry *dst, const kb_qentry *e)
{
    dst->t = e->t;
    dst->key = e->key;
    dst->fn = e->fn;
    dst->arg = e->arg;
}

/* The out-of-line parts of push and pop (queue.c). */
void kb_queue_ring_grow(kb_qring *r);
void kb_queue_vec_grow(kb_qvec *v);

/* Radix heap: the ring of an entry at q->last with key `key`, marked
 * non-empty, with room for one more entry (which the caller places). */
static inline kb_qring *kb_queue_ring_room(kb_queue *q, uint64_t key)
{
    unsigned p = (unsigned)(key >> KB_QUEUE_SEQ_BITS);
    kb_qring *r = &q->ring[p];
    if (r->n == r->cap)
        kb_queue_ring_grow(r);
    q->ring_mask |= 1u << p;
    return r;
}

/* Radix heap: makes room in its ring for an entry at q->last with key
 * `key`, without counting it, and returns the slot to write it to. The
 * entry is appended, or goes before the entries with greater keys: it may
 * be pushed after others of its instant although its key was taken first
 * (kb_sim_at_key); it still leaves in key order. */
static inline kb_qentry *kb_queue_ring_slot(kb_queue *q, uint64_t key)
{
    kb_qring *r = kb_queue_ring_room(q, key);
    size_t m = r->cap - 1, i = r->n;
    while (i > 0 && r->a[(r->head + i - 1) & m].key > key) {
        r->a[(r->head + i) & m] = r->a[(r->head + i - 1) & m];
        i--;
    }
    r->n++;
    return &r->a[(r->head + i) & m];
}

/* Radix heap: the slot for an entry in bucket i (i >= 1: the bit length
 * of its time XOR q->last), without counting it or marking the bucket. */
static inline kb_qentry *kb_queue_bucket_slot(kb_queue *q, int i)
{
    kb_qvec *v = &q->bucket[i];
    if (v->n == v->cap)
        kb_queue_vec_grow(v);
    return &v->a[v->n++];
}

/* Radix heap: the slot for an entry of time t and key `key`, relative to
 * q->last, without counting it. The caller writes the entry: a push field
 * by field from its arguments, a move as a whole from where it was. */
static inline kb_qentry *kb_queue_slot(kb_queue *q, kb_time t, uint64_t key)
{
    uint64_t diff = (uint64_t)t ^ (uint64_t)q->last;
    if (diff == 0)
        return kb_queue_ring_slot(q, key);
    int i = 64 - __builtin_clzll(diff); /* 1..63: times are non-negative */
    q->bucket_mask |= UINT64_C(1) << i;
    return kb_queue_bucket_slot(q, i);
}

/* The array is full or needs its entries moved down first: by value, so
 * a push's entry never has to sit in memory to be passed. */
void kb_queue_push_small_slow(kb_queue *q, kb_time t, uint64_t key, kb_callback fn, void *arg);
/* Radix heap with every ring empty: moves few entries back to the array,
 * else refills the rings from the lowest bucket; then pops (queue.c). */
bool kb_queue_pop_radix(kb_queue *q, kb_time until, kb_qentry *out);

/* Radix heap: the first entry of the first non-empty ring, which holds
 * entries at `last`. */
static inline bool kb_queue_pop_ring(kb_queue *q, kb_time until, kb_qentry *out)
{
    if (q->last >= until)
        return false;
    unsigned p = (unsigned)__builtin_ctz(q->ring_mask);
    kb_qring *r = &q->ring[p];
    *out = r->a[r->head];
    r->head = (r->head + 1) & (r->cap - 1);
    if (--r->n == 0)
        q->ring_mask &= ~(1u << p);
    q->n--;
    return true;
}

/* The sorted array: its first entry. */
static inline bool kb_queue_pop_small(kb_queue *q, kb_time until, kb_qentry *out)
{
    if (q->n == 0 || q->small[q->head].t >= until)
        return false;
    *out = q->small[q->head];
    q->last = out->t;
    q->head = --q->n ? q->head + 1 : 0;
    return true;
}

static inline bool kb_queue_later(const kb_qentry *a, const kb_qentry *e)
{
    return a->t > e->t || (a->t == e->t && a->key > e->key);
}

/* Inserts into the sorted array, which has room at its end. */
static inline void kb_queue_small_insert(kb_queue *q, const kb_qentry *e)
{
    size_t i = q->head + q->n;
    while (i > q->head && kb_queue_later(&q->small[i - 1], e)) {
        q->small[i] = q->small[i - 1];
        i--;
    }
    kb_qentry_set(&q->small[i], e);
}

/* Adds an entry; requires t >= q->last (the simulation guarantees it by
 * never scheduling before its current time). The priority is key >> 56
 * and must be below KB_QUEUE_PRIOS. */
static inline void kb_queue_push(kb_queue *q, kb_time t, uint64_t key, kb_callback fn, void *arg)
{
    kb_qentry e = {t, key, fn, arg};
    if (q->radix)
        kb_qentry_set(kb_queue_slot(q, t, key), &e);
    else if (q->n < KB_QUEUE_SMALL_MAX && q->head + q->n < KB_QUEUE_SMALL_CAP)
        kb_queue_small_insert(q, &e);
    else {
        kb_queue_push_small_slow(q, t, key, fn, arg); /* a move first; counts it */
        return;
    }
    q->n++;
}

/* Removes the first entry into *out if its time is < until; otherwise
 * leaves the queue unchanged and returns false. */
static inline bool kb_queue_pop_before(kb_queue *q, kb_time until, kb_qentry *out)
{
    if (!q->radix)
        return kb_queue_pop_small(q, until, out);
    if (q->ring_mask)
        return kb_queue_pop_ring(q, until, out);
    return kb_queue_pop_radix(q, until, out);
}

/* Time of the first entry, or KB_TIME_MAX when empty. Does not modify q. */
kb_time kb_queue_min_time(const kb_queue *q);

/* Every queued entry (fn, arg) becomes (new_fn, new_arg), keeping its
 * place; returns how many did. A scan of the whole queue. */
size_t kb_queue_redirect(kb_queue *q, kb_callback fn, void *arg, kb_callback new_fn, void *new_arg);

/* Whether an entry of priority <= max_prio waits at the time of the last
 * entry removed (while that entry's event is processed: at the current
 * time). */
static inline bool kb_queue_has_now(const kb_queue *q, unsigned max_prio)
{
    if (!q->radix)
        return q->n && q->small[q->head].t == q->last &&
               (unsigned)(q->small[q->head].key >> KB_QUEUE_SEQ_BITS) <= max_prio;
    return (q->ring_mask & ((2u << max_prio) - 1)) != 0;
}

static inline size_t kb_queue_size(const kb_queue *q) { return q->n; }

#endif
