/* What a simulation lets its user see: s:stats(), s:op_log(), and the
 * trace, statistics and op log the command line asked the host for
 * (docs/tracing.md). */
#include "lua/lsim.h"

#include "core/util.h"
#include "fabric/fabric.h"
#include "lua/host.h"
#include "lua/lval.h"
#include "trace/oplog.h"
#include "trace/trace.h"

#include <stdlib.h>
#include <string.h>

void lobserve_attach(lsim *S)
{
    kb_host *h = S->host;
    if (!h || !h->trace || !S->fab)
        return;
    S->tracer = kb_tracer_new(h->trace, S->serial);
    kb_fabric_set_tracer(S->fab, S->tracer, S->serial);
}

void lobserve_request(lsim *S, const char *kind, uint64_t nbytes, kb_time start, kb_time end)
{
    if (S->nrequests == S->cap_requests) {
        S->cap_requests = S->cap_requests ? 2 * S->cap_requests : 16;
        S->requests = kb_xrealloc(S->requests, S->cap_requests * sizeof *S->requests);
    }
    S->requests[S->nrequests++] = (lrequest){kind, nbytes, start, end};
    if (S->tracer) {
        kb_targ args[2] = {{"bytes", NULL, (int64_t)nbytes}, {"latency_ps", NULL, end - start}};
        char name[64];
        snprintf(name, sizeof name, "done %s", kind);
        kb_trace_instant(S->tracer, kb_fabric_host_track(S->fab), name, end, args, 2);
    }
}

void lobserve_submit(lsim *S, const char *what, uint64_t nbytes)
{
    if (!S->tracer)
        return;
    kb_targ args[1] = {{"bytes", NULL, (int64_t)nbytes}};
    char name[128];
    snprintf(name, sizeof name, "submit %s", what);
    kb_trace_instant(S->tracer, kb_fabric_host_track(S->fab), name, kb_sim_now(S->sim), args, 1);
}

/* Counts per op name, in the order names first occurred (kept even when
 * the records are not). */
static kb_val *op_counts(kb_oplog *log)
{
    size_t n;
    const kb_opcount *c = kb_oplog_counts(log, &n);
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
static kb_val *latency_summary(const lsim *S)
{
    kb_val *v = kb_val_obj();
    kb_obj_int(v, "count", (int64_t)S->nrequests);
    if (S->nrequests == 0)
        return v;
    kb_time *lat = kb_xmalloc(S->nrequests * sizeof *lat);
    double sum = 0;
    for (size_t i = 0; i < S->nrequests; i++) {
        lat[i] = S->requests[i].end - S->requests[i].start;
        sum += (double)lat[i];
    }
    qsort(lat, S->nrequests, sizeof *lat, cmp_time);
    kb_obj_num(v, "min_ns", (double)lat[0] / 1000.0);
    kb_obj_num(v, "median_ns", (double)lat[S->nrequests / 2] / 1000.0);
    kb_obj_num(v, "mean_ns", sum / (double)S->nrequests / 1000.0);
    kb_obj_num(v, "max_ns", (double)lat[S->nrequests - 1] / 1000.0);
    free(lat);
    return v;
}

/* The statistics of S now: simulation-wide figures, then (with a
 * topology) components, links, request latencies (and, when `requests`,
 * every request) and op counts. */
static kb_val *stats_of(lsim *S, bool requests)
{
    kb_sim_stats st;
    kb_sim_get_stats(S->sim, &st);
    kb_val *v = kb_val_obj();
    kb_obj_int(v, "sim", S->serial);
    if (S->fab)
        kb_obj_str(v, "topology", kb_topo_name(kb_fabric_topo(S->fab)));
    kb_obj_num(v, "sim_ns", (double)st.now / 1000.0);
    kb_obj_int(v, "events", (int64_t)st.events);
    kb_obj_num(v, "wall_s", st.wall_s);
    kb_obj_num(v, "events_per_s", st.events_per_s);
    kb_obj_int(v, "pending", (int64_t)st.pending);
    kb_obj_int(v, "processes", (int64_t)st.procs);
    kb_obj_int(v, "waiting", (int64_t)st.waiting);
    kb_obj_int(v, "resumes", (int64_t)S->resumes);
    kb_obj_num(v, "resumes_per_s", st.wall_s > 0 ? (double)S->resumes / st.wall_s : 0.0);
    if (!S->fab)
        return v;
    kb_obj_take_all(v, kb_fabric_stats(S->fab, st.now));
    kb_obj_put(v, "request_latency", latency_summary(S));
    kb_val *req = requests ? kb_obj_put(v, "requests", kb_val_arr()) : NULL;
    for (size_t i = 0; req && i < S->nrequests; i++) {
        const lrequest *r = &S->requests[i];
        kb_val *e = kb_arr_push(req, kb_val_obj());
        kb_obj_str(e, "kind", r->kind);
        kb_obj_int(e, "nbytes", (int64_t)r->nbytes);
        kb_obj_num(e, "start_ns", (double)r->start / 1000.0);
        kb_obj_num(e, "end_ns", (double)r->end / 1000.0);
        kb_obj_num(e, "latency_ns", (double)(r->end - r->start) / 1000.0);
    }
    kb_obj_put(v, "op_counts", op_counts(kb_fabric_oplog(S->fab)));
    return v;
}

static int l_stats(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    bool requests = false;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        lua_getfield(L, 2, "requests");
        requests = lua_toboolean(L, -1);
        lua_pop(L, 1);
    }
    kb_val *v = stats_of(S, requests);
    lval_push(L, v);
    kb_val_free(v);
    return 1;
}

static void set_ns(lua_State *L, const char *k, kb_time ps)
{
    lua_pushnumber(L, (double)ps / 1000.0);
    lua_setfield(L, -2, k);
}

/* s:op_log() -> {records = {...}, counts = {name = n}} */
static int l_op_log(lua_State *L)
{
    lsim *S = lsim_check(L, 1);
    lua_createtable(L, 0, 2);
    if (!S->fab) {
        lua_newtable(L);
        lua_setfield(L, -2, "records");
        lua_newtable(L);
        lua_setfield(L, -2, "counts");
        return 1;
    }
    kb_oplog *log = kb_fabric_oplog(S->fab);
    size_t n;
    const kb_oprec *r = kb_oplog_records(log, &n);
    lua_createtable(L, (int)n, 0);
    for (size_t i = 0; i < n; i++) {
        lua_createtable(L, 0, 6);
        set_ns(L, "t_start_ns", r[i].t_start);
        set_ns(L, "t_end_ns", r[i].t_end);
        lua_pushstring(L, r[i].component);
        lua_setfield(L, -2, "component");
        lua_pushstring(L, r[i].kind);
        lua_setfield(L, -2, "op_kind");
        lua_pushstring(L, r[i].name);
        lua_setfield(L, -2, "op_name");
        lval_push(L, r[i].params);
        lua_setfield(L, -2, "params");
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "records");
    kb_val *counts = op_counts(log);
    lval_push(L, counts);
    kb_val_free(counts);
    lua_setfield(L, -2, "counts");
    return 1;
}

void lobserve_close(lua_State *L, lsim *S)
{
    kb_host *h = S->host;
    if (!S->fab)
        return;
    if (h && h->oplog_out)
        kb_oplog_write_jsonl(kb_fabric_oplog(S->fab), h->oplog_out, S->serial);
    if (h) /* every request only if a file will hold them; the summary needs less */
        kb_host_add_run(L, stats_of(S, h->keep_requests));
}

void lobserve_free(lsim *S)
{
    kb_tracer_free(S->tracer);
    S->tracer = NULL;
    free(S->requests);
    S->requests = NULL;
    S->nrequests = S->cap_requests = 0;
}

const luaL_Reg lobserve_methods[] = {{"stats", l_stats}, {"op_log", l_op_log}, {NULL, NULL}};
