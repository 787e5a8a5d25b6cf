/* C-level event throughput: the "hold" model.
 *
 * The queue is filled with P pending events; each processed event schedules
 * one more at now + a random delay, so the queue stays at P entries while
 * E events are processed. Prints one line with events/s.
 *
 *   perf_event_queue [--pending P] [--events E] [--dist uniform|exp|bimodal|same]
 *
 * Defaults: P = 100000, E = 20000000, dist = exp (mean 1000 ps). */
#include "core/sim.h"
#include "core/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { DIST_UNIFORM, DIST_EXP, DIST_BIMODAL, DIST_SAME } dist_kind;

typedef struct hold_ctx {
    uint64_t rng;
    dist_kind dist;
} hold_ctx;

/* The delay draw is always inline: the benchmark measures the queue, not
 * whether the compiler happened to inline its random numbers. */
static inline __attribute__((always_inline)) uint64_t next_u64(uint64_t *s) /* xorshift64* */
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * UINT64_C(2685821657736338717);
}

static inline __attribute__((always_inline)) kb_time draw_delay(hold_ctx *c)
{
    uint64_t r = next_u64(&c->rng);
    switch (c->dist) {
    case DIST_UNIFORM:
        return (kb_time)(r % 2000);
    case DIST_EXP: {
        double u = ((double)(r >> 11) + 0.5) * (1.0 / 9007199254740992.0);
        return (kb_time)(-1000.0 * log(u));
    }
    case DIST_BIMODAL:
        return (r & 1) ? (kb_time)(r % 10) : (kb_time)(100000 + r % 1000);
    case DIST_SAME:
        return 0;
    }
    return 0;
}

static void hold(kb_sim *sim, void *arg)
{
    hold_ctx *c = arg;
    kb_sim_after(sim, draw_delay(c), KB_PRIO_NORMAL, hold, c);
}

static void usage(void)
{
    fprintf(stderr, "usage: perf_event_queue [--pending P] [--events E] "
                    "[--dist uniform|exp|bimodal|same]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    uint64_t pending = 100000, events = 20000000;
    hold_ctx ctx = {.rng = 0x9e3779b97f4a7c15u, .dist = DIST_EXP};
    const char *dist_name = "exp";
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--pending"))
            pending = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--events"))
            events = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--dist")) {
            dist_name = argv[++i];
            if (!strcmp(dist_name, "uniform"))
                ctx.dist = DIST_UNIFORM;
            else if (!strcmp(dist_name, "exp"))
                ctx.dist = DIST_EXP;
            else if (!strcmp(dist_name, "bimodal"))
                ctx.dist = DIST_BIMODAL;
            else if (!strcmp(dist_name, "same"))
                ctx.dist = DIST_SAME;
            else
                usage();
        } else
            usage();
    }
    if (pending == 0)
        usage();

    kb_sim *sim = kb_sim_new();
    for (uint64_t i = 0; i < pending; i++)
        kb_sim_after(sim, draw_delay(&ctx), KB_PRIO_NORMAL, hold, &ctx);
    uint64_t done = 0;
    kb_sim_step(sim, events, &done);
    kb_sim_stats st;
    kb_sim_get_stats(sim, &st);
    char now[KB_TIME_STRLEN];
    printf("event_queue dist=%s pending=%zu events=%" PRIu64 " sim_time=%s wall_s=%.3f "
           "events_per_s=%.0f\n",
           dist_name, st.pending, done, kb_time_format(st.now, now), st.wall_s, st.events_per_s);
    kb_sim_free(sim);
    return 0;
}
