/* A simulation built on a topology: fabric, host requests, observation (machine.h). */
#include "machine/machine.h"

#include "core/sim.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct request {
    const char *kind;
    uint64_t nbytes;
    kb_time start, end;
} request;

struct kb_machine {
    kb_fabric *fab;
    kb_tracer *tracer;
    request *requests;
    size_t nrequests, cap_requests;
};

kb_machine *kb_machine_new(kb_sim *sim, const kb_topo *t, const kb_machine_opts *o, char **err)
{
    kb_fabric *fab = kb_fabric_new(sim, t, err);
    if (!fab)
        return NULL;
    kb_machine *m = kb_xcalloc(1, sizeof *m);
    m->fab = fab;
    kb_oplog_keep(kb_fabric_oplog(fab), o->keep_oplog);
    if (o->oplog_out)
        kb_oplog_stream(kb_fabric_oplog(fab), o->oplog_out, o->oplog_spill_dir, o->serial, 0);
    if (o->trace) {
        m->tracer = kb_tracer_new(o->trace, o->serial);
        kb_fabric_set_tracer(fab, m->tracer, o->serial);
    }
    return m;
}

void kb_machine_free(kb_machine *m)
{
    if (!m)
        return;
    kb_fabric_free(m->fab);
    kb_tracer_free(m->tracer);
    free(m->requests);
    free(m);
}

bool kb_machine_finish_oplog(kb_machine *m, char **err) { return kb_oplog_finish(kb_fabric_oplog(m->fab), err); }

kb_fabric *kb_machine_fabric(const kb_machine *m) { return m->fab; }
kb_tracer *kb_machine_tracer(const kb_machine *m) { return m->tracer; }

void kb_machine_submitted(kb_machine *m, const char *what, uint64_t nbytes)
{
    if (!m->tracer)
        return;
    kb_targ args[1] = {{"bytes", NULL, (int64_t)nbytes}};
    char name[128];
    snprintf(name, sizeof name, "submit %s", what);
    kb_trace_instant(m->tracer, kb_fabric_host_track(m->fab), name, kb_sim_now(kb_fabric_sim(m->fab)), args, 1);
}

void kb_machine_completed(kb_machine *m, const char *kind, uint64_t nbytes, kb_time start, kb_time end)
{
    if (m->nrequests == m->cap_requests) {
        m->cap_requests = m->cap_requests ? 2 * m->cap_requests : 16;
        m->requests = kb_xrealloc(m->requests, m->cap_requests * sizeof *m->requests);
    }
    m->requests[m->nrequests++] = (request){kind, nbytes, start, end};
    if (m->tracer) {
        kb_targ args[2] = {{"bytes", NULL, (int64_t)nbytes}, {"latency_ps", NULL, end - start}};
        char name[64];
        snprintf(name, sizeof name, "done %s", kind);
        kb_trace_instant(m->tracer, kb_fabric_host_track(m->fab), name, end, args, 2);
    }
}

/* Counts per op name, in the order names first occurred (kept even when
 * the records are not). */
kb_val *kb_machine_op_counts(kb_machine *m)
{
    size_t n;
    const kb_opcount *c = kb_oplog_counts(kb_fabric_oplog(m->fab), &n);
    kb_val *counts = kb_val_obj();
    for (size_t i = 0; i < n; i++)
        kb_obj_int(counts, c[i].name, (int64_t)c[i].n);
    return counts;
}

static int cmp_time(const void *a, const void *b)
{
    kb_time x = *(const kb_time *)a, y = *(const kb_time *)b;
    return (x > y) - (x < y);
}

/* Count, min, median, mean and max of the request latencies. */
static kb_val *latency_summary(const kb_machine *m)
{
    kb_val *v = kb_val_obj();
    kb_obj_int(v, "count", (int64_t)m->nrequests);
    if (m->nrequests == 0)
        return v;
    kb_time *lat = kb_xmalloc(m->nrequests * sizeof *lat);
    double sum = 0;
    for (size_t i = 0; i < m->nrequests; i++) {
        lat[i] = m->requests[i].end - m->requests[i].start;
        sum += (double)lat[i];
    }
    qsort(lat, m->nrequests, sizeof *lat, cmp_time);
    kb_obj_num(v, "min_ns", kb_ps_to_ns((double)lat[0]));
    kb_obj_num(v, "median_ns", kb_ps_to_ns((double)lat[m->nrequests / 2]));
    kb_obj_num(v, "mean_ns", kb_ps_to_ns(sum / (double)m->nrequests));
    kb_obj_num(v, "max_ns", kb_ps_to_ns((double)lat[m->nrequests - 1]));
    free(lat);
    return v;
}

void kb_machine_stats(kb_machine *m, kb_val *v, bool requests)
{
    kb_obj_take_all(v, kb_fabric_stats(m->fab, kb_sim_now(kb_fabric_sim(m->fab))));
    kb_obj_put(v, "request_latency", latency_summary(m));
    kb_val *req = requests ? kb_obj_put(v, "requests", kb_val_arr()) : NULL;
    for (size_t i = 0; req && i < m->nrequests; i++) {
        const request *r = &m->requests[i];
        kb_val *e = kb_arr_push(req, kb_val_obj());
        kb_obj_str(e, "kind", r->kind);
        kb_obj_int(e, "nbytes", (int64_t)r->nbytes);
        kb_obj_num(e, "start_ns", kb_ps_to_ns((double)r->start));
        kb_obj_num(e, "end_ns", kb_ps_to_ns((double)r->end));
        kb_obj_num(e, "latency_ns", kb_ps_to_ns((double)(r->end - r->start)));
    }
    kb_obj_put(v, "op_counts", kb_machine_op_counts(m));
}
