/* What a run writes besides its own output: the timeline trace, the
 * statistics file and summary, the op log and the resolved configuration
 * (docs/cli.md, docs/tracing.md). Every file is opened, as a temporary
 * file beside its target, before anything runs, and renamed over its
 * target at exit (src/trace/outfile.h). */
#ifndef KB_CLI_OUTPUTS_H
#define KB_CLI_OUTPUTS_H

#include "luasim/session.h"
#include "trace/outfile.h"
#include "trace/trace.h"
#include "trace/val.h"

typedef struct kb_outputs {
    const char *trace_path;   /* --trace */
    kb_trace_opts trace;      /* --trace-flows, --trace-counters, --trace-filter, --trace-window */
    const char **filters;     /* storage for trace.filters */
    const char *stats_json;   /* --stats-json */
    const char *op_log;       /* --op-log */
    const char *dump_config;  /* --dump-config */
    const char *results_json; /* --results-json */
    char *results;            /* the bench's results document, NULL: none (taken) */
    char *summary_note;       /* where the work was done, when not here (kb.summary_note; taken) */
    bool quiet;               /* --quiet: no summary */
    bool counter_window_set;  /* --trace-counter-ns given */
    /* the open files */
    kb_outfile *stats_file, *oplog_file, *config_file, *results_file;
} kb_outputs;

/* Checks every output path and opens the files on the session: false
 * with a message in err (a missing or unwritable directory, a directory
 * given as a file, two options naming the same file), nothing left open. */
bool kb_outputs_open(kb_session *s, kb_outputs *o, char *err, size_t errn);
/* After every simulation is closed: writes the statistics file, prints the
 * summary (when `summary` and not quiet) on stderr, and commits the files.
 * The results file is written only when the run was not stopped and has a
 * results document; otherwise it is dropped (and its absence reported
 * unless the run failed or stopped anyway: `failed`).
 * `stopped` (a kb_stop, 0: none) says the run ended early: the trace, the
 * statistics and the op log then say so. False if a file could not be
 * written (reported on stderr; that file is then not created). */
bool kb_outputs_finish(kb_session *s, kb_outputs *o, bool summary, int stopped, bool failed);

/* What a stop reached, newly allocated: "interrupted (SIGINT): simulation
 * #1 stopped at t=... after N events; Lua code stopped at FILE:LINE" (each
 * part when known). */
char *kb_stop_text(const kb_session *s, int stopped);
/* Drops every output file (nothing ran: none is created). */
void kb_outputs_abort(kb_session *s, kb_outputs *o);

/* The human summary of the runs (src/cli/summary.c); `note` (or NULL)
 * says where the work was done when other processes did it. */
void kb_print_summary(FILE *out, const kb_val *runs, const char *note);

#endif
