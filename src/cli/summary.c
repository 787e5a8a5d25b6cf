/* The short human summary printed after a run: totals, the busiest
 * components, the bottleneck link and request latencies, over every
 * simulation that had a topology. */
#include "cli/outputs.h"

#include "trace/val.h"

#include <stdlib.h>
#include <string.h>

typedef struct item {
    double util;
    int64_t sim;
    size_t order; /* position in the listing: ties never depend on addresses */
    const kb_val *v;
} item;

static double num(const kb_val *o, const char *k)
{
    const kb_val *v = kb_obj_get(o, k);
    if (!v)
        return 0.0;
    return v->type == KB_V_INT ? (double)v->u.i : v->type == KB_V_NUM ? v->u.d : 0.0;
}

static const char *str(const kb_val *o, const char *k)
{
    const kb_val *v = kb_obj_get(o, k);
    return v && v->type == KB_V_STR ? v->u.s : "?";
}

/* Highest utilisation first; ties by simulation, then listing order. */
static int by_util(const void *a, const void *b)
{
    const item *x = a, *y = b;
    if (x->util != y->util)
        return x->util > y->util ? -1 : 1;
    if (x->sim != y->sim)
        return x->sim < y->sim ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Collects the entries of array `key` of every run. */
static item *collect(const kb_val *runs, const char *key, size_t *n)
{
    size_t cap = 0;
    *n = 0;
    item *out = NULL;
    for (size_t r = 0; r < runs->u.c.n; r++) {
        const kb_val *run = runs->u.c.items[r];
        const kb_val *arr = kb_obj_get(run, key);
        for (size_t i = 0; arr && i < arr->u.c.n; i++) {
            if (*n == cap) {
                cap = cap ? 2 * cap : 64;
                out = realloc(out, cap * sizeof *out);
                if (!out)
                    abort();
            }
            const kb_val *e = arr->u.c.items[i];
            out[*n] = (item){num(e, "util"), (int64_t)num(run, "sim"), *n, e};
            (*n)++;
        }
    }
    return out;
}

void kb_print_summary(FILE *out, const kb_val *runs, const char *note)
{
    size_t nsims = 0;
    double events = 0, wall = 0, sim_ns = 0;
    for (size_t r = 0; r < runs->u.c.n; r++) {
        const kb_val *run = runs->u.c.items[r];
        if (!kb_obj_get(run, "components"))
            continue;
        nsims++;
        events += num(run, "events");
        wall += num(run, "wall_s");
        if (num(run, "sim_ns") > sim_ns)
            sim_ns = num(run, "sim_ns");
    }
    if (nsims == 0)
        return;
    bool many = nsims > 1;
    if (note) /* the work was done by other processes: say so, not "0 events" alone */
        fprintf(out, "summary: %zu simulation%s in this process, %.0f events here (%s), longest simulated "
                     "time here %.3f ns, wall %.3f s in runs",
                nsims, many ? "s" : "", events, note, sim_ns, wall);
    else
        fprintf(out, "summary: %zu simulation%s, %.0f events, longest simulated time %.3f ns, "
                     "wall %.3f s in runs",
                nsims, many ? "s" : "", events, sim_ns, wall);
    if (wall > 0)
        fprintf(out, " (%.3g events/s)", events / wall);
    fputc('\n', out);

    size_t nc, nl;
    item *comps = collect(runs, "components", &nc);
    if (nc) /* qsort of an empty (NULL) list is undefined */
        qsort(comps, nc, sizeof *comps, by_util);
    if (nc)
        fputs("  busiest components (busy / simulated time):\n", out);
    for (size_t i = 0; i < nc && i < 5; i++) {
        fprintf(out, "    %5.1f%%  %s", 100.0 * comps[i].util, str(comps[i].v, "id"));
        if (many)
            fprintf(out, "  (sim %lld)", (long long)comps[i].sim);
        fputc('\n', out);
    }
    item *links = collect(runs, "links", &nl);
    if (nl)
        qsort(links, nl, sizeof *links, by_util);
    if (nl) {
        const kb_val *l = links[0].v;
        fprintf(out, "  bottleneck link: %s -> %s, %.1f%% busy, %.0f GB/s, peak queueing %.3f ns",
                str(l, "src"), str(l, "dst"), 100.0 * links[0].util, num(l, "bw_gbs"),
                num(l, "peak_queue_ns"));
        if (many)
            fprintf(out, "  (sim %lld)", (long long)links[0].sim);
        fputc('\n', out);
    }
    /* Host requests (memory, map and launch requests issued from Lua; not the
     * fabric transactions of the components): latency extremes, the count in all. */
    double nreq = 0, lo = 0, hi = 0;
    for (size_t r = 0; r < runs->u.c.n; r++) {
        const kb_val *rl = kb_obj_get(runs->u.c.items[r], "request_latency");
        double n = rl ? num(rl, "count") : 0;
        if (n <= 0)
            continue;
        lo = nreq == 0 || num(rl, "min_ns") < lo ? num(rl, "min_ns") : lo;
        hi = nreq == 0 || num(rl, "max_ns") > hi ? num(rl, "max_ns") : hi;
        nreq += n;
    }
    if (nreq > 0)
        fprintf(out, "  host requests: %.0f, latency min %.3f / max %.3f ns\n", nreq, lo, hi);
    free(comps);
    free(links);
}
