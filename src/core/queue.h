/* The pending-event queue, totally ordered by (time, priority, sequence).
 *
 * A monotone radix heap: simulated time never goes backwards, so every
 * entry's time is >= the time of the last entry removed ("last"). Entries
 * whose time equals `last` wait in one FIFO ring per priority; any other
 * entry waits in bucket i, where i is the bit length of (time XOR last).
 * When the rings run dry, the lowest non-empty bucket is scanned for its
 * minimum time, which becomes `last`, and its entries are redistributed to
 * the rings and lower buckets. Rings are kept in key order (an entry
 * pushed late with an early key, kb_sim_at_key, is inserted before the
 * greater keys; otherwise it is an append), so entries with equal time and
 * priority leave in sequence order.
 * Why this structure: docs/decisions.md ("Event queue"). */
#ifndef KB_CORE_QUEUE_H
#define KB_CORE_QUEUE_H

#include "core/types.h"

#define KB_QUEUE_PRIOS 8 /* priorities 0..7 */
#define KB_QUEUE_BUCKETS 64
#define KB_QUEUE_SEQ_BITS 56
#define KB_QUEUE_SEQ_MASK ((UINT64_C(1) << KB_QUEUE_SEQ_BITS) - 1)

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
    uint64_t bucket_mask;   /* bit i set: bucket[i] non-empty */
    unsigned ring_mask;     /* bit p set: ring[p] non-empty */
    size_t n;
    kb_qvec bucket[KB_QUEUE_BUCKETS];
    kb_qring ring[KB_QUEUE_PRIOS];
} kb_queue;

void kb_queue_init(kb_queue *q);
void kb_queue_destroy(kb_queue *q);

/* Adds an entry; requires t >= q->last (the simulation guarantees it by
 * never scheduling before its current time). The priority is key >> 56
 * and must be below KB_QUEUE_PRIOS. */
void kb_queue_push(kb_queue *q, kb_time t, uint64_t key, kb_callback fn, void *arg);

/* Removes the first entry into *out if its time is < until; otherwise
 * leaves the queue unchanged and returns false. */
bool kb_queue_pop_before(kb_queue *q, kb_time until, kb_qentry *out);

/* Time of the first entry, or KB_TIME_MAX when empty. Does not modify q. */
kb_time kb_queue_min_time(const kb_queue *q);

static inline size_t kb_queue_size(const kb_queue *q) { return q->n; }

#endif
