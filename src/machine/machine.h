/* A machine: one simulation built on a topology. It owns the fabric (the
 * component instances and wires), keeps the record of the host's requests
 * (behind the statistics' request latencies) and what the command line
 * asked to observe of it (a tracer on the shared trace file, op-log
 * records). The binding layer's simulation object holds one
 * (src/lua/lmachine.h); C programs and tests can make their own. */
#ifndef KB_MACHINE_MACHINE_H
#define KB_MACHINE_MACHINE_H

#include "fabric/fabric.h"
#include "trace/trace.h"
#include "trace/val.h"

typedef struct kb_machine_opts {
    bool keep_oplog;          /* hold every op-log record in memory (counts are always kept) */
    FILE *oplog_out;          /* stream the op-log records to this file (kb_oplog_stream) */
    const char *oplog_spill_dir; /* where the stream's spill file goes */
    kb_trace_file *trace;     /* NULL: no trace */
    int serial;               /* the simulation's number in the process (trace ids, names) */
} kb_machine_opts;

typedef struct kb_machine kb_machine;

/* A machine of topology t on sim (both must outlive it). NULL with *err if
 * a node's implementation has no behaviour. */
kb_machine *kb_machine_new(kb_sim *sim, const kb_topo *t, const kb_machine_opts *o, char **err);
/* Frees the fabric (operations in flight are dropped) and the tracer;
 * streamed op-log records not yet finished are dropped. */
void kb_machine_free(kb_machine *m);
/* Writes the streamed op-log records to their file (kb_oplog_finish).
 * False with *err on an I/O error; true when nothing is streamed. */
bool kb_machine_finish_oplog(kb_machine *m, char **err);

kb_fabric *kb_machine_fabric(const kb_machine *m);
kb_tracer *kb_machine_tracer(const kb_machine *m); /* NULL when not tracing */

/* The host's requests: a submission (an instant on the host's trace track)
 * and a completion (recorded for the statistics, and an instant). `kind`
 * must outlive the machine (a kind's name). */
void kb_machine_submitted(kb_machine *m, const char *what, uint64_t nbytes);
void kb_machine_completed(kb_machine *m, const char *kind, uint64_t nbytes, kb_time start, kb_time end);

/* Adds the machine's statistics at the simulation's current time to the
 * object v: the fabric's components and links, request
 * latencies ("request_latency"; every request under "requests" when asked)
 * and op counts ("op_counts"). */
void kb_machine_stats(kb_machine *m, kb_val *v, bool requests);
/* The op counts by name (also in the statistics), newly allocated. */
kb_val *kb_machine_op_counts(kb_machine *m);

#endif
