/* The op log: one record per data-moving or computing operation, as
 * execution-pe-tl.md §4.3-4.5 defines it (OpRecord: t_start, t_end,
 * component_id, op_kind, op_name, params). Components add a record with
 * one call when the operation's service ends; readers get the records
 * stable-sorted by t_start (ties keep insertion order).
 *
 * Counts per op name are always kept; the records only when asked:
 * held in memory for readers (kb_oplog_keep: sim.new{op_log = true}), or
 * streamed to a file (kb_oplog_stream: --op-log), which holds them on disk
 * as sorted runs and merges them at kb_oplog_finish, so a long run needs no
 * per-operation memory either way (opstream.c). Callers whose params cost
 * something to build test kb_oplog_keeps first. */
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

typedef struct kb_opstream kb_opstream;

typedef struct kb_oplog {
    kb_oprec *recs;
    size_t n, cap;
    bool sorted;
    bool keep;            /* records are held in memory (kb_oplog_records) */
    kb_opstream *stream;  /* records are streamed to a file */
    uint64_t added;       /* records added so far: the next one's seq */
    kb_opcount *counts;   /* per name, in first-seen order */
    size_t ncounts;
} kb_oplog;

void kb_oplog_keep(kb_oplog *log, bool keep);
/* Whether records are wanted (held or streamed), else only counted. */
static inline bool kb_oplog_keeps(const kb_oplog *log) { return log->keep || log->stream; }
/* Counts per op name, in the order names were first added. */
const kb_opcount *kb_oplog_counts(const kb_oplog *log, size_t *n);

/* Adds a record (takes params, which may be NULL for none); name and kind
 * must be static strings. Only counted when no record is wanted. */
void kb_oplog_add(kb_oplog *log, kb_time t_start, kb_time t_end, const char *component,
                  const char *kind, const char *name, kb_val *params);
/* The held records in t_start order. */
const kb_oprec *kb_oplog_records(kb_oplog *log, size_t *n);
/* The held records, one JSON object per line, in t_start order, each
 * tagged with `sim`. */
void kb_oplog_write_jsonl(kb_oplog *log, FILE *out, int sim);
/* One record as a line of the JSON Lines op log. */
void kb_oplog_write_record(FILE *out, int sim, const kb_oprec *r);

/* Streams the records added from now on: they are written, as
 * kb_oplog_write_jsonl would write them, to `out` at kb_oplog_finish.
 * Until then at most `chunk_bytes` of them (0: 4 MiB) stay in memory; the
 * rest wait in sorted runs in an unlinked spill file created in
 * `spill_dir`. */
void kb_oplog_stream(kb_oplog *log, FILE *out, const char *spill_dir, int sim, size_t chunk_bytes);
/* Writes the streamed records to their file in t_start order and stops
 * streaming. False with *err (allocated) if a spill file could not be
 * written or read (the records are then incomplete). True when the log
 * does not stream. */
bool kb_oplog_finish(kb_oplog *log, char **err);
void kb_oplog_free(kb_oplog *log);

/* The stream's part (opstream.c). */
kb_opstream *kb_opstream_new(FILE *out, const char *spill_dir, int sim, size_t chunk_bytes);
void kb_opstream_add(kb_opstream *s, const kb_oprec *r);
bool kb_opstream_finish(kb_opstream *s, char **err); /* frees s */
void kb_opstream_free(kb_opstream *s);                /* drops the records; NULL: nothing */

/* Picoseconds as exact nanoseconds ("12.345"). */
void kb_json_write_ns(FILE *out, kb_time ps);

#endif
