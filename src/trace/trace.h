/* Timeline traces in the Chrome Trace Event Format (JSON), for Perfetto
 * (ui.perfetto.dev) and chrome://tracing. Reference: docs/tracing.md.
 *
 * A kb_trace_file is one output file, opened by the command line and
 * shared by every simulation of the process; it is written as events
 * happen (constant memory) and is valid JSON once closed, also after an
 * error (kb_trace_error records it as an instant event first).
 *
 * A kb_tracer is one simulation's view of the file: its processes (one per
 * SIP, the host, the tray fabric), its tracks (one per component, named
 * after it) and its counters. Components add a slice with one call,
 * kb_trace_span. When tracing is off there is no tracer and callers test
 * a NULL pointer, so tracing costs one branch.
 *
 * Times are picoseconds in, microseconds out, printed exactly (6 decimals:
 * 1 ps resolution). */
#ifndef KB_TRACE_TRACE_H
#define KB_TRACE_TRACE_H

#include "core/types.h"
#include "trace/outfile.h"

#include <stdbool.h>
#include <stddef.h>

typedef struct kb_trace_opts {
    bool flows;                    /* flow arrows linking the hops of a transaction */
    bool counters;                 /* link and HBM pseudo-channel utilisation counters */
    const char *const *filters;    /* globs on component ids (fnmatch); none = all */
    size_t nfilters;
    kb_time win_start, win_end;    /* keep events overlapping [start, end] */
    kb_time counter_window_ps;     /* width of one utilisation sample (> 0) */
} kb_trace_opts;

typedef struct kb_trace_file kb_trace_file;

/* Starts the document on `out` (an output file, taken: kb_trace_close
 * commits it); the options are copied. */
kb_trace_file *kb_trace_open(kb_outfile *out, const kb_trace_opts *o);
/* Records an error as a global instant event at the latest time written. */
void kb_trace_error(kb_trace_file *f, const char *msg);
/* Marks the trace as truncated: a global instant event "truncated" at the
 * latest time written (args stopped_by, message), and at close the
 * document's "otherData" says {"truncated": "true", "stopped_by": ...}. */
void kb_trace_truncated(kb_trace_file *f, const char *stopped_by, const char *msg);
/* Ends the JSON document and commits the file (f is freed). False with
 * *err on an I/O error (the file is then removed). */
bool kb_trace_close(kb_trace_file *f, char **err);
/* Drops the document and its file (f is freed; NULL: nothing). */
void kb_trace_abort(kb_trace_file *f);
/* Events written so far (metadata included). */
uint64_t kb_trace_events(const kb_trace_file *f);

typedef struct kb_tracer kb_tracer;
typedef struct kb_track kb_track;
typedef struct kb_tcounter kb_tcounter;

/* A simulation's tracer; `sim` is its number in the process (1, 2, ...),
 * which keeps process ids apart and prefixes the process names of every
 * simulation after the first ("sim 2: sip0"). */
kb_tracer *kb_tracer_new(kb_trace_file *f, int sim);
/* Flushes the open counter samples and frees the tracer. */
void kb_tracer_free(kb_tracer *t);

bool kb_tracer_flows(const kb_tracer *t);
bool kb_tracer_counters(const kb_tracer *t);
/* Whether a component id passes the --trace-filter globs. */
bool kb_tracer_wants(const kb_tracer *t, const char *id);
/* Whether [start, end] overlaps the trace window. */
bool kb_tracer_in_window(const kb_tracer *t, kb_time start, kb_time end);

/* The process named `name` (created on first use, in call order). */
int kb_tracer_process(kb_tracer *t, const char *name);
/* A track (thread) named `name` in process pid, or NULL when the filter
 * excludes it. Overlapping slices on one track go to extra lanes named
 * "name (2)", ... so every lane holds properly nested slices. */
kb_track *kb_tracer_track(kb_tracer *t, int pid, const char *name);

/* Slice arguments: a string when s is not NULL, else the integer i. */
typedef struct kb_targ {
    const char *key;
    const char *s;
    int64_t i;
} kb_targ;

typedef enum kb_flow_phase { KB_FLOW_NONE, KB_FLOW_START, KB_FLOW_STEP, KB_FLOW_END } kb_flow_phase;

/* A slice [start, end] on track k (NULL: nothing). With flows on and
 * phase != NONE, also a flow event with id `flow` bound to the slice. */
void kb_trace_span(kb_tracer *t, kb_track *k, const char *name, kb_time start, kb_time end,
                   const kb_targ *args, size_t nargs, uint64_t flow, kb_flow_phase phase);
/* An instant event on track k (NULL: nothing). */
void kb_trace_instant(kb_tracer *t, kb_track *k, const char *name, kb_time at, const kb_targ *args,
                      size_t nargs);

/* A utilisation counter named `name` in process pid, sampled per counter
 * window; NULL when counters are off. */
kb_tcounter *kb_tracer_counter(kb_tracer *t, int pid, const char *name);
/* Books [start, end) as busy. Per counter, intervals must come in
 * non-decreasing start order and must not overlap (a wire, a channel). */
void kb_trace_busy(kb_tracer *t, kb_tcounter *c, kb_time start, kb_time end);

/* A value counter: at time `at`, counter `name` of process pid has
 * args {key: v} (a queue's occupancy). Written when tracing, whatever the
 * counter option says: one sample per change. */
void kb_trace_value(kb_tracer *t, int pid, const char *name, kb_time at, const char *key, double v);

#endif
