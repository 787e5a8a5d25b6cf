/* What a run writes besides its own output: the timeline trace, the
 * statistics file and summary, the op log and the resolved configuration
 * (docs/cli.md, docs/tracing.md). */
#ifndef KB_CLI_OUTPUTS_H
#define KB_CLI_OUTPUTS_H

#include "luasim/session.h"
#include "trace/trace.h"
#include "trace/val.h"

typedef struct kb_outputs {
    const char *trace_path;   /* --trace */
    kb_trace_opts trace;      /* --trace-flows, --trace-counters, --trace-filter, --trace-window */
    const char **filters;     /* storage for trace.filters */
    const char *stats_json;   /* --stats-json */
    const char *op_log;       /* --op-log */
    const char *dump_config;  /* --dump-config */
    bool quiet;               /* --quiet: no summary */
    bool counter_window_set;  /* --trace-counter-ns given */
} kb_outputs;

/* Opens the files on the session. False with a message in err. */
bool kb_outputs_open(kb_session *s, const kb_outputs *o, char *err, size_t errn);
/* After every simulation is closed: writes the statistics file, prints the
 * summary (when `summary` and not quiet) on stderr, closes the files.
 * False if a file could not be written (reported on stderr). */
bool kb_outputs_finish(kb_session *s, const kb_outputs *o, bool summary);

/* The human summary of the runs (src/cli/summary.c). */
void kb_print_summary(FILE *out, const kb_val *runs);

#endif
