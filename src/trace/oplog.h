/* The op log: one record per data-moving or computing operation, as
 * execution-pe-tl.md §4.3-4.5 defines it (OpRecord: t_start, t_end,
 * component_id, op_kind, op_name, params). Components add a record with
 * one call when the operation's service ends; readers get the records
 * stable-sorted by t_start (ties keep insertion order).
 *
 * Counts per op name are always kept; the records themselves only when the
 * log is kept (kb_oplog_keep: --op-log, sim.new{op_log = true}), so a long
 * run holds no per-operation memory unless asked to. Callers whose
 * params cost something to build test kb_oplog_keeps first. */
#ifndef KB_TRACE_OPLOG_H
#define KB_TRACE_OPLOG_H

#include "core/types.h"
#include "trace/val.h"

#include <stdio.h>

typedef struct kb_oprec {
    kb_time t_start, t_end;
    const char *component; /* node id; must outlive the log (the topology's) */
    const char *kind;      /* static: "memory", "gemm", "math", ... */
    const char *name;      /* static: "memory_write", "dma_read", ... */
    kb_val *params;        /* an object, owned by the log */
    uint64_t seq;          /* insertion order */
} kb_oprec;

typedef struct kb_opcount {
    const char *name; /* static */
    uint64_t n;
} kb_opcount;

typedef struct kb_oplog {
    kb_oprec *recs;
    size_t n, cap;
    bool sorted;
    bool keep;          /* records are kept (else only counted) */
    kb_opcount *counts; /* per name, in first-seen order */
    size_t ncounts;
} kb_oplog;

void kb_oplog_keep(kb_oplog *log, bool keep);
static inline bool kb_oplog_keeps(const kb_oplog *log) { return log->keep; }
/* Counts per op name, in the order names were first added. */
const kb_opcount *kb_oplog_counts(const kb_oplog *log, size_t *n);

/* Adds a record (takes params, which may be NULL for none); name and kind
 * must be static strings. Only counted when the log is not kept. */
void kb_oplog_add(kb_oplog *log, kb_time t_start, kb_time t_end, const char *component,
                  const char *kind, const char *name, kb_val *params);
/* The records in t_start order. */
const kb_oprec *kb_oplog_records(kb_oplog *log, size_t *n);
/* One JSON object per line, in t_start order, each tagged with `sim`. */
void kb_oplog_write_jsonl(kb_oplog *log, FILE *out, int sim);
void kb_oplog_free(kb_oplog *log);

/* Picoseconds as exact nanoseconds ("12.345"). */
void kb_json_write_ns(FILE *out, kb_time ps);

#endif
