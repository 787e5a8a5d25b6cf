/* Test helper: a seeded random workload of C processes that sleep, put to
 * and get from a bounded store, and acquire and release a resource, with
 * many events at equal times. It folds every step it takes (time, actor,
 * action) into a hash, and an observer folds every event the simulation
 * processes (time, priority and sequence) into another. */
#ifndef KB_TEST_WORKLOAD_H
#define KB_TEST_WORKLOAD_H

#include "core/event.h"
#include "core/proc.h"
#include "core/resource.h"
#include "core/sim.h"
#include "core/store.h"
#include "core/waiter.h"

#include <stdlib.h>

#define WL_WORKERS 24

typedef struct workload workload;

typedef struct worker {
    kb_proc proc;
    kb_waiter w;
    workload *wl;
    int id;
    uint64_t rng;
    int steps_left;
    int holding;
} worker;

struct workload {
    kb_sim *sim;
    kb_store *store;
    kb_resource *res;
    worker workers[WL_WORKERS];
    uint64_t step_hash;
    uint64_t event_hash;
};

static inline uint64_t wl_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
    return h * 0x100000001b3u;
}

static inline uint64_t wl_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void wl_observe(void *ctx, kb_time t, uint64_t key, kb_callback fn, void *arg)
{
    (void)fn, (void)arg; /* addresses differ between simulations */
    workload *wl = ctx;
    wl->event_hash = wl_mix(wl_mix(wl->event_hash, (uint64_t)t), key);
}

/* Even workers produce into the store, odd ones consume from it; any
 * worker may take the resource, hold it for 1 ns and release it. */
static void wl_step(kb_sim *sim, void *arg)
{
    kb_waiter *w = arg;
    worker *k = KB_CONTAINER_OF(w, worker, w);
    workload *wl = k->wl;
    if (k->holding == 1) { /* just acquired: hold the slot for a while */
        k->holding = 2;
        kb_sim_after(sim, 1000, KB_PRIO_NORMAL, wl_step, w);
        return;
    }
    if (k->holding == 2) {
        kb_resource_release(wl->res);
        k->holding = 0;
    }
    uint64_t r = wl_rand(&k->rng);
    int action = (int)(r % 3);
    wl->step_hash = wl_mix(wl->step_hash, (uint64_t)kb_sim_now(sim));
    wl->step_hash = wl_mix(wl->step_hash, (uint64_t)(k->id * 4 + action));
    if (k->steps_left-- == 0) {
        kb_proc_end(&k->proc);
        return;
    }
    bool done_now = true;
    switch (action) {
    case 0: /* sleep 0, 1 or 2 ns at a random priority: many equal times */
        kb_sim_after(sim, (kb_time)((r >> 8) % 3) * 1000, (int)((r >> 16) % 3), wl_step, w);
        return;
    case 1:
        if (k->id % 2 == 0) {
            done_now = kb_store_put(wl->store, (kb_item){.u = r}, w);
        } else {
            kb_item got;
            done_now = kb_store_get(wl->store, &got, w);
        }
        break;
    case 2:
        k->holding = 1;
        done_now = kb_resource_acquire(wl->res, w);
        break;
    }
    if (done_now)
        kb_sim_after(sim, 0, KB_PRIO_NORMAL, wl_step, w);
}

static inline void wl_start(workload *wl, uint64_t seed)
{
    wl->sim = kb_sim_new();
    wl->step_hash = wl->event_hash = 1469598103934665603u;
    kb_sim_set_observer(wl->sim, wl_observe, wl);
    wl->store = kb_store_new(wl->sim, "shared", 3);
    wl->res = kb_resource_new(wl->sim, "bus", 2);
    for (int i = 0; i < WL_WORKERS; i++) {
        worker *k = &wl->workers[i];
        k->wl = wl;
        k->id = i;
        k->rng = seed * 1000003u + (uint64_t)i + 1;
        k->steps_left = 400;
        k->holding = 0;
        kb_proc_start(wl->sim, &k->proc, NULL, 0);
        kb_waiter_init(&k->w, wl_step, &k->proc);
        kb_sim_after(wl->sim, 0, KB_PRIO_URGENT, wl_step, &k->w);
    }
}

static inline void wl_finish(workload *wl)
{
    for (int i = 0; i < WL_WORKERS; i++) {
        kb_waiter_cancel(&wl->workers[i].w);
        kb_proc_end(&wl->workers[i].proc);
    }
    kb_store_close(wl->store);
    kb_resource_close(wl->res);
    kb_sim_free(wl->sim);
}

#endif
