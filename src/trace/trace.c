/* Chrome Trace Event Format writer. */
#define _POSIX_C_SOURCE 200809L
#include "trace/trace.h"

#include "core/util.h"
#include "trace/outfile.h"
#include "trace/val.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_trace_file {
    kb_outfile *file;
    FILE *out;
    char *stopped_by; /* kb_trace_truncated: why the run ended early */
    kb_trace_opts o;
    char **filters;
    uint64_t events;
    kb_time latest; /* latest event time written, for error instants */
};

struct kb_track {
    int pid;
    char *name;
    int nlanes;
    int *tids;
    kb_time *lane_end;
    kb_track *next;
};

struct kb_tcounter {
    int pid;
    char *name;
    kb_time win;  /* start of the open window */
    kb_time busy; /* busy time booked in it */
    bool open;
    kb_tcounter *next;
};

typedef struct proc {
    char *name;
    int pid;
} proc;

struct kb_tracer {
    kb_trace_file *f;
    int sim;
    proc *procs;
    size_t nprocs;
    int next_tid;
    kb_track *tracks;
    kb_tcounter *counters;
};

/* ---- file ---- */

kb_trace_file *kb_trace_open(kb_outfile *out, const kb_trace_opts *o)
{
    kb_trace_file *f = kb_xcalloc(1, sizeof *f);
    f->file = out;
    f->out = kb_outfile_stream(out);
    f->o = *o;
    if (f->o.counter_window_ps <= 0)
        f->o.counter_window_ps = 10000;
    f->filters = kb_xcalloc(o->nfilters ? o->nfilters : 1, sizeof *f->filters);
    for (size_t i = 0; i < o->nfilters; i++)
        f->filters[i] = kb_xstrdup(o->filters[i]);
    f->o.filters = (const char *const *)f->filters;
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", f->out);
    return f;
}

uint64_t kb_trace_events(const kb_trace_file *f) { return f->events; }

/* Starts an event line: the separator and the opening brace. */
static FILE *begin(kb_trace_file *f)
{
    if (f->events++)
        fputs(",\n", f->out);
    fputc('{', f->out);
    return f->out;
}

/* Picoseconds as exact microseconds. */
static void put_us(FILE *out, kb_time ps)
{
    if (ps < 0) {
        fputc('-', out);
        ps = -ps;
    }
    fprintf(out, "%lld.%06lld", (long long)(ps / 1000000), (long long)(ps % 1000000));
}

static void note_time(kb_trace_file *f, kb_time t)
{
    if (t > f->latest)
        f->latest = t;
}

void kb_trace_error(kb_trace_file *f, const char *msg)
{
    FILE *out = begin(f);
    fputs("\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"name\":\"error\",\"ts\":", out);
    put_us(out, f->latest);
    fputs(",\"args\":{\"message\":", out);
    kb_json_write_string(out, msg);
    fputs("}}", out);
}

void kb_trace_truncated(kb_trace_file *f, const char *stopped_by, const char *msg)
{
    FILE *out = begin(f);
    fputs("\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"name\":\"truncated\",\"ts\":", out);
    put_us(out, f->latest);
    fputs(",\"args\":{\"stopped_by\":", out);
    kb_json_write_string(out, stopped_by);
    fputs(",\"message\":", out);
    kb_json_write_string(out, msg);
    fputs("}}", out);
    free(f->stopped_by);
    f->stopped_by = kb_xstrdup(stopped_by);
}

static void free_file(kb_trace_file *f)
{
    for (size_t i = 0; i < f->o.nfilters; i++)
        free(f->filters[i]);
    free(f->filters);
    free(f->stopped_by);
    free(f);
}

bool kb_trace_close(kb_trace_file *f, char **err)
{
    if (f->stopped_by) { /* the document says it is incomplete (Chrome's metadata dictionary) */
        fputs("\n],\"otherData\":{\"truncated\":\"true\",\"stopped_by\":", f->out);
        kb_json_write_string(f->out, f->stopped_by);
        fputs("}}\n", f->out);
    } else {
        fputs("\n]}\n", f->out);
    }
    bool ok = kb_outfile_commit(f->file, err);
    free_file(f);
    return ok;
}

void kb_trace_abort(kb_trace_file *f)
{
    if (!f)
        return;
    kb_outfile_abort(f->file);
    free_file(f);
}

/* ---- tracer ---- */

kb_tracer *kb_tracer_new(kb_trace_file *f, int sim)
{
    kb_tracer *t = kb_xcalloc(1, sizeof *t);
    t->f = f;
    t->sim = sim;
    return t;
}

static void flush_counter(kb_tracer *t, kb_tcounter *c);

void kb_tracer_free(kb_tracer *t)
{
    if (!t)
        return;
    for (kb_tcounter *c = t->counters, *n; c; c = n) {
        n = c->next;
        flush_counter(t, c);
        free(c->name);
        free(c);
    }
    for (kb_track *k = t->tracks, *n; k; k = n) {
        n = k->next;
        free(k->name);
        free(k->tids);
        free(k->lane_end);
        free(k);
    }
    for (size_t i = 0; i < t->nprocs; i++)
        free(t->procs[i].name);
    free(t->procs);
    free(t);
}

bool kb_tracer_flows(const kb_tracer *t) { return t->f->o.flows; }
bool kb_tracer_counters(const kb_tracer *t) { return t->f->o.counters; }

bool kb_tracer_wants(const kb_tracer *t, const char *id)
{
    const kb_trace_opts *o = &t->f->o;
    if (o->nfilters == 0)
        return true;
    for (size_t i = 0; i < o->nfilters; i++)
        if (fnmatch(o->filters[i], id, 0) == 0)
            return true;
    return false;
}

bool kb_tracer_in_window(const kb_tracer *t, kb_time start, kb_time end)
{
    return end >= t->f->o.win_start && start <= t->f->o.win_end;
}

static void meta_name(kb_tracer *t, int pid, int tid, const char *what, const char *name)
{
    FILE *out = begin(t->f);
    fprintf(out, "\"ph\":\"M\",\"pid\":%d,", pid);
    if (tid >= 0)
        fprintf(out, "\"tid\":%d,", tid);
    fprintf(out, "\"name\":\"%s\",\"args\":{\"name\":", what);
    kb_json_write_string(out, name);
    fputs("}}", out);
}

int kb_tracer_process(kb_tracer *t, const char *name)
{
    for (size_t i = 0; i < t->nprocs; i++)
        if (strcmp(t->procs[i].name, name) == 0)
            return t->procs[i].pid;
    t->procs = kb_xrealloc(t->procs, (t->nprocs + 1) * sizeof *t->procs);
    int pid = t->sim * 1000 + (int)t->nprocs + 1;
    t->procs[t->nprocs++] = (proc){kb_xstrdup(name), pid};
    char *shown = t->sim > 1 ? kb_asprintf("sim %d: %s", t->sim, name) : kb_xstrdup(name);
    meta_name(t, pid, -1, "process_name", shown);
    FILE *out = begin(t->f);
    fprintf(out, "\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}}",
            pid, pid);
    free(shown);
    return pid;
}

kb_track *kb_tracer_track(kb_tracer *t, int pid, const char *name)
{
    if (!kb_tracer_wants(t, name))
        return NULL;
    kb_track *k = kb_xcalloc(1, sizeof *k);
    k->pid = pid;
    k->name = kb_xstrdup(name);
    k->next = t->tracks;
    t->tracks = k;
    return k;
}

/* The lane of a slice starting at `start`: the first whose slices have all
 * ended by then, else a new one (named on creation). */
static int lane_for(kb_tracer *t, kb_track *k, kb_time start, kb_time end)
{
    for (int i = 0; i < k->nlanes; i++)
        if (k->lane_end[i] <= start) {
            k->lane_end[i] = end;
            return k->tids[i];
        }
    k->tids = kb_xrealloc(k->tids, (size_t)(k->nlanes + 1) * sizeof *k->tids);
    k->lane_end = kb_xrealloc(k->lane_end, (size_t)(k->nlanes + 1) * sizeof *k->lane_end);
    int tid = ++t->next_tid;
    k->tids[k->nlanes] = tid;
    k->lane_end[k->nlanes] = end;
    k->nlanes++;
    char *name = k->nlanes > 1 ? kb_asprintf("%s (%d)", k->name, k->nlanes) : kb_xstrdup(k->name);
    meta_name(t, k->pid, tid, "thread_name", name);
    free(name);
    return tid;
}

static void put_args(FILE *out, const kb_targ *args, size_t nargs)
{
    fputs(",\"args\":{", out);
    for (size_t i = 0; i < nargs; i++) {
        if (i)
            fputc(',', out);
        kb_json_write_string(out, args[i].key);
        fputc(':', out);
        if (args[i].s)
            kb_json_write_string(out, args[i].s);
        else
            fprintf(out, "%lld", (long long)args[i].i);
    }
    fputc('}', out);
}

void kb_trace_span(kb_tracer *t, kb_track *k, const char *name, kb_time start, kb_time end,
                   const kb_targ *args, size_t nargs, uint64_t flow, kb_flow_phase phase)
{
    if (!k || !kb_tracer_in_window(t, start, end))
        return;
    int tid = lane_for(t, k, start, end);
    FILE *out = begin(t->f);
    fprintf(out, "\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":", k->pid, tid);
    put_us(out, start);
    fputs(",\"dur\":", out);
    put_us(out, end - start);
    fputs(",\"name\":", out);
    kb_json_write_string(out, name);
    put_args(out, args, nargs);
    fputc('}', out);
    note_time(t->f, end);
    if (phase == KB_FLOW_NONE || !t->f->o.flows)
        return;
    /* Bound to the slice that encloses its time stamp: the middle of this one. */
    static const char ph[] = {0, 's', 't', 'f'};
    out = begin(t->f);
    fprintf(out, "\"ph\":\"%c\",\"pid\":%d,\"tid\":%d,\"ts\":", ph[phase], k->pid, tid);
    put_us(out, start + (end - start) / 2);
    fprintf(out, ",\"id\":%llu,\"cat\":\"txn\",\"name\":\"txn\"%s}", (unsigned long long)flow,
            phase == KB_FLOW_END ? ",\"bp\":\"e\"" : "");
}

void kb_trace_instant(kb_tracer *t, kb_track *k, const char *name, kb_time at, const kb_targ *args,
                      size_t nargs)
{
    if (!k || !kb_tracer_in_window(t, at, at))
        return;
    int tid = k->nlanes ? k->tids[0] : lane_for(t, k, at, at);
    FILE *out = begin(t->f);
    fprintf(out, "\"ph\":\"i\",\"s\":\"t\",\"pid\":%d,\"tid\":%d,\"ts\":", k->pid, tid);
    put_us(out, at);
    fputs(",\"name\":", out);
    kb_json_write_string(out, name);
    put_args(out, args, nargs);
    fputc('}', out);
    note_time(t->f, at);
}

/* ---- counters ---- */

kb_tcounter *kb_tracer_counter(kb_tracer *t, int pid, const char *name)
{
    if (!t->f->o.counters)
        return NULL;
    kb_tcounter *c = kb_xcalloc(1, sizeof *c);
    c->pid = pid;
    c->name = kb_xstrdup(name);
    c->next = t->counters;
    t->counters = c;
    return c;
}

static void sample(kb_tracer *t, kb_tcounter *c, kb_time at, double util)
{
    if (!kb_tracer_in_window(t, at, at))
        return;
    FILE *out = begin(t->f);
    fprintf(out, "\"ph\":\"C\",\"pid\":%d,\"ts\":", c->pid);
    put_us(out, at);
    fputs(",\"name\":", out);
    kb_json_write_string(out, c->name);
    fputs(",\"args\":{\"util\":", out);
    kb_json_write_number(out, util);
    fputs("}}", out);
    note_time(t->f, at);
}

void kb_trace_value(kb_tracer *t, int pid, const char *name, kb_time at, const char *key, double v)
{
    if (!kb_tracer_in_window(t, at, at))
        return;
    FILE *out = begin(t->f);
    fprintf(out, "\"ph\":\"C\",\"pid\":%d,\"ts\":", pid);
    put_us(out, at);
    fputs(",\"name\":", out);
    kb_json_write_string(out, name);
    fputs(",\"args\":{", out);
    kb_json_write_string(out, key);
    fputc(':', out);
    kb_json_write_number(out, v);
    fputs("}}", out);
    note_time(t->f, at);
}

/* Writes the open window's sample and, after it, a 0 (the counter is idle
 * until its next sample). */
static void flush_counter(kb_tracer *t, kb_tcounter *c)
{
    if (!c->open)
        return;
    kb_time w = t->f->o.counter_window_ps;
    sample(t, c, c->win, (double)c->busy / (double)w);
    sample(t, c, c->win + w, 0.0);
    c->open = false;
}

void kb_trace_busy(kb_tracer *t, kb_tcounter *c, kb_time start, kb_time end)
{
    if (!c)
        return;
    kb_time w = t->f->o.counter_window_ps;
    while (start < end) {
        kb_time win = start / w * w;
        if (!c->open || win != c->win) {
            if (c->open && win == c->win + w) { /* the next window: no idle gap to mark */
                sample(t, c, c->win, (double)c->busy / (double)w);
            } else {
                flush_counter(t, c);
            }
            c->win = win;
            c->busy = 0;
            c->open = true;
        }
        kb_time stop = end < win + w ? end : win + w;
        c->busy += stop - start;
        start = stop;
    }
}
