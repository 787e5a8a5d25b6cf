/* The op log: one record per data-moving or computing operation, as
 * execution-pe-tl.md §4.3-4.5 defines it (OpRecord: t_start, t_end,
 * component_id, op_kind, op_name, params). Components add a record with
 * one call when the operation's service ends; readers get the records
 * stable-sorted by t_start (ties keep insertion order). */
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

typedef struct kb_oplog {
    kb_oprec *recs;
    size_t n, cap;
    bool sorted;
} kb_oplog;

/* Adds a record (takes params, which may be NULL for none). */
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
