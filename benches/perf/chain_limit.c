/* A limit to measure the chain benchmark against: the model of
 * benches/perf/chain.lua written by hand for this one case, single-threaded,
 * with nothing general left in it.
 *
 *   chain_limit [F] [--nodes N] [--bw-gbs B] [--mm L] [--ns-per-mm X]
 *               [--overhead-ns O] [--flit-bytes S] [--flits-per-txn K]
 *
 * Defaults are topologies/chain.yaml's and chain.lua's: F = 256 transactions
 * of K = 64 flits of 256 B, injected at n0 at time 0, all to n{N-1}; N = 8
 * builtin.forwarding nodes with overhead_ns 2.0; links of 256 GB/s and 1 mm at
 * 1 ns/mm. The options mirror kernbench's `--set graph.line.count=N`,
 * `graph.line.link.bw_gbs`, `graph.line.link.mm`, `system.ns_per_mm`,
 * `graph.line.node.attrs.overhead_ns` and `system.flit_bytes`.
 *
 * The model is kernbench's (src/fabric/delivery.c, src/comp/transit.c), step
 * for step, so the finish time and the event count are the same:
 *  - a node is one serial in-order worker: a flit arriving at `now` starts at
 *    max(busy_until, now), plus the overhead on a transaction's first flit;
 *  - a wire is FIFO: the flit departs at max(start, avail), holds the wire for
 *    llround(bytes * 1000 / bw_gbs) ps and arrives llround(mm * ns_per_mm *
 *    1000) ps after it has been fully sent: one event per flit per hop;
 *  - at the last node a transaction ends when its last flit starts there:
 *    at once if that is now, else by one more event at that time; its end
 *    makes the event the script waits on succeed, one more event at that
 *    time (kb_event_succeed), so the event count is kernbench's too;
 *  - n0 handles every injected flit at time 0, before the run (as
 *    s:transfer does, outside s:run()); equal times leave in schedule order.
 *
 * What is specialised: integer picoseconds, a monotone radix heap whose
 * entries are the flits themselves (at most one pending event per flit, so
 * the heap is intrusive lists through flat per-flit arrays), one bucket per
 * bit length of (time XOR last), all memory allocated before the run.
 *
 * Prints one line like chain.lua's, with wall_s the processor time of the
 * run (chain.lua's os.clock() around s:run()) and ns_per_event. */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NIL UINT32_MAX
#define NBUCKETS 64 /* bit lengths 0 .. 63 of time XOR last (times are below 2^63) */
#define FIRST 1u    /* info bits: the transaction's first flit */
#define LAST 2u     /* its last flit */
#define HOP_SHIFT 2 /* info >> HOP_SHIFT: the node the flit travels to */

typedef struct chain_params {
    long txns, flits_per_txn, nodes, flit_bytes;
    double bw_gbs, mm, ns_per_mm, overhead_ns;
} chain_params;

/* The run's whole state: entries 0 .. nflits-1 are flits (their arrival at
 * the next node), entries nflits .. nflits+txns-1 transaction completions
 * (info 0: kb_complete_at pending, 1: the succeed event). */
typedef struct chain {
    uint32_t nflits, nentries, nodes, flits_per_txn;
    int64_t ser_ps, prop_ps, overhead_ps;
    /* per entry */
    uint64_t *time;
    uint32_t *next;
    uint32_t *info;
    /* per node and per wire (wire h: node h -> h+1) */
    int64_t *busy_until, *avail;
    /* radix heap */
    uint64_t last, mask;
    uint32_t head[NBUCKETS], tail[NBUCKETS];
    uint64_t pending, events;
    int64_t finish_ps;
} chain;

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    if (!p) {
        fprintf(stderr, "chain_limit: out of memory\n");
        exit(1);
    }
    return p;
}

static inline unsigned bucket_of(const chain *c, uint64_t t)
{
    uint64_t x = t ^ c->last;
    return x ? 64u - (unsigned)__builtin_clzll(x) : 0u;
}

static inline void append(chain *c, unsigned b, uint32_t e)
{
    c->next[e] = NIL;
    if (c->head[b] == NIL)
        c->head[b] = e;
    else
        c->next[c->tail[b]] = e;
    c->tail[b] = e;
    c->mask |= UINT64_C(1) << b;
}

/* Entries with equal times leave in push order (the lists keep it, and a
 * bucket is only redistributed into lower buckets that are empty). */
static inline void push(chain *c, uint32_t e, uint64_t t)
{
    c->time[e] = t;
    c->pending++;
    append(c, bucket_of(c, t), e);
}

static uint32_t pop(chain *c)
{
    if (c->head[0] == NIL) {
        unsigned b = (unsigned)__builtin_ctzll(c->mask); /* bucket 0 is empty, the heap is not */
        uint32_t e = c->head[b];
        uint64_t m = c->time[e];
        for (uint32_t i = c->next[e]; i != NIL; i = c->next[i])
            if (c->time[i] < m)
                m = c->time[i];
        c->head[b] = c->tail[b] = NIL;
        c->mask &= ~(UINT64_C(1) << b);
        c->last = m;
        while (e != NIL) {
            uint32_t nx = c->next[e];
            append(c, bucket_of(c, c->time[e]), e);
            e = nx;
        }
    }
    uint32_t e = c->head[0];
    c->head[0] = c->next[e];
    if (c->head[0] == NIL)
        c->mask &= ~UINT64_C(1);
    c->pending--;
    return e;
}

/* Transaction entry `done` completes at now: its end time, and the event
 * the script waits on succeeds, which the core runs as one more event at
 * now (kb_event_succeed). */
static inline void complete(chain *c, uint32_t done, int64_t now)
{
    if (now > c->finish_ps)
        c->finish_ps = now;
    c->info[done] = 1;
    push(c, done, (uint64_t)now);
}

/* Flit e handled by node h at `now` (transit.c's transit_flit, then
 * delivery.c's kb_fabric_send_flit). */
static inline void handle(chain *c, uint32_t e, uint32_t h, int64_t now)
{
    uint32_t info = c->info[e];
    int64_t start = c->busy_until[h] > now ? c->busy_until[h] : now;
    if (info & FIRST)
        start += c->overhead_ps;
    c->busy_until[h] = start;
    if (h + 1 < c->nodes) {
        int64_t depart = start > c->avail[h] ? start : c->avail[h];
        c->avail[h] = depart + c->ser_ps;
        c->info[e] = (info & 3u) | (h + 1) << HOP_SHIFT;
        push(c, e, (uint64_t)(depart + c->ser_ps + c->prop_ps));
        return;
    }
    if (info & LAST) { /* kb_complete_at */
        uint32_t done = c->nflits + e / c->flits_per_txn;
        if (start > now)
            push(c, done, (uint64_t)start); /* info 0: completes when popped */
        else
            complete(c, done, now);
    }
}

static void chain_init(chain *c, const chain_params *p)
{
    memset(c, 0, sizeof *c);
    uint64_t nflits = (uint64_t)p->txns * (uint64_t)p->flits_per_txn;
    if (nflits + (uint64_t)p->txns >= NIL) {
        fprintf(stderr, "chain_limit: too many flits\n");
        exit(2);
    }
    c->nflits = (uint32_t)nflits;
    c->nentries = (uint32_t)(nflits + (uint64_t)p->txns);
    c->nodes = (uint32_t)p->nodes;
    c->flits_per_txn = (uint32_t)p->flits_per_txn;
    /* kb_edge_serialize_ps, kb_topo_edge_prop_ps, attrs.overhead_ns: once. */
    c->ser_ps = p->bw_gbs > 0 ? llround((double)p->flit_bytes * 1000.0 / p->bw_gbs) : 0;
    c->prop_ps = llround(p->mm * p->ns_per_mm * 1000.0);
    c->overhead_ps = llround(p->overhead_ns * 1000.0);
    c->time = xcalloc(c->nentries, sizeof *c->time);
    c->next = xcalloc(c->nentries, sizeof *c->next);
    c->info = xcalloc(c->nentries, sizeof *c->info);
    c->busy_until = xcalloc(c->nodes, sizeof *c->busy_until);
    c->avail = xcalloc(c->nodes, sizeof *c->avail);
    for (unsigned b = 0; b < NBUCKETS; b++)
        c->head[b] = c->tail[b] = NIL;
    uint32_t k = (uint32_t)p->flits_per_txn;
    for (uint32_t e = 0; e < c->nflits; e++)
        c->info[e] = (e % k == 0 ? FIRST : 0u) | (e % k == k - 1 ? LAST : 0u);
}

static void chain_free(chain *c)
{
    free(c->time);
    free(c->next);
    free(c->info);
    free(c->busy_until);
    free(c->avail);
}

/* s:transfer for every transaction: n0 handles each flit at time 0. */
static void chain_inject(chain *c)
{
    for (uint32_t e = 0; e < c->nflits; e++)
        handle(c, e, 0, 0);
}

/* s:run(): one event per flit per hop, and a transaction's completion. */
static void chain_run(chain *c)
{
    while (c->pending) {
        uint32_t e = pop(c);
        int64_t now = (int64_t)c->time[e];
        c->events++;
        if (e >= c->nflits) {
            if (c->info[e] == 0)
                complete(c, e, now);
            continue;
        }
        handle(c, e, c->info[e] >> HOP_SHIFT, now);
    }
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void)
{
    fprintf(stderr, "usage: chain_limit [F] [--nodes N] [--bw-gbs B] [--mm L] [--ns-per-mm X] "
                    "[--overhead-ns O] [--flit-bytes S] [--flits-per-txn K]\n");
    exit(2);
}

static long need_long(const char *s, long min, long max)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < min || v > max)
        usage();
    return v;
}

static double need_double(const char *s, double min)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= min) || !isfinite(v))
        usage();
    return v;
}

int main(int argc, char **argv)
{
    chain_params p = {.txns = 256, .flits_per_txn = 64, .nodes = 8, .flit_bytes = 256,
                      .bw_gbs = 256.0, .mm = 1.0, .ns_per_mm = 1.0, .overhead_ns = 2.0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-') {
            p.txns = need_long(a, 1, 1L << 24);
            continue;
        }
        if (i + 1 >= argc)
            usage();
        const char *v = argv[++i];
        if (!strcmp(a, "--nodes"))
            p.nodes = need_long(v, 2, 1L << 20);
        else if (!strcmp(a, "--flits-per-txn"))
            p.flits_per_txn = need_long(v, 1, 1L << 20);
        else if (!strcmp(a, "--flit-bytes"))
            p.flit_bytes = need_long(v, 1, 1L << 20);
        else if (!strcmp(a, "--bw-gbs"))
            p.bw_gbs = need_double(v, 0.0);
        else if (!strcmp(a, "--mm"))
            p.mm = need_double(v, 0.0);
        else if (!strcmp(a, "--ns-per-mm"))
            p.ns_per_mm = need_double(v, 0.0);
        else if (!strcmp(a, "--overhead-ns"))
            p.overhead_ns = need_double(v, 0.0);
        else
            usage();
    }
    chain c;
    chain_init(&c, &p);
    chain_inject(&c);
    double t0 = cpu_seconds();
    chain_run(&c);
    double wall = cpu_seconds() - t0;
    uint64_t hops = (uint64_t)c.nflits * (uint64_t)(c.nodes - 1);
    printf("chain_limit: nodes=%u txns=%ld flits_per_txn=%ld finish_ns=%.3f events=%" PRIu64
           " flit_hops=%" PRIu64 " wall_s=%.6f flit_hops_per_s=%.0f ns_per_event=%.2f\n",
           c.nodes, p.txns, p.flits_per_txn, (double)c.finish_ps / 1000.0, c.events, hops, wall,
           wall > 0 ? (double)hops / wall : 0.0, c.events ? wall * 1e9 / (double)c.events : 0.0);
    chain_free(&c);
    return 0;
}
