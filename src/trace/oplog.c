/* Op log records. */
#include "trace/oplog.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

void kb_oplog_keep(kb_oplog *log, bool keep) { log->keep = keep; }

const kb_opcount *kb_oplog_counts(const kb_oplog *log, size_t *n)
{
    *n = log->ncounts;
    return log->counts;
}

static void count(kb_oplog *log, const char *name)
{
    for (size_t i = 0; i < log->ncounts; i++) /* names are static: the same pointer, usually */
        if (log->counts[i].name == name) {
            log->counts[i].n++;
            return;
        }
    for (size_t i = 0; i < log->ncounts; i++)
        if (strcmp(log->counts[i].name, name) == 0) {
            log->counts[i].n++;
            return;
        }
    log->counts = kb_xrealloc(log->counts, (log->ncounts + 1) * sizeof *log->counts);
    log->counts[log->ncounts++] = (kb_opcount){name, 1};
}

void kb_oplog_add(kb_oplog *log, kb_time t_start, kb_time t_end, const char *component,
                  const char *kind, const char *name, kb_val *params)
{
    count(log, name);
    if (!kb_oplog_keeps(log)) {
        kb_val_free(params);
        return;
    }
    kb_oprec r = {t_start, t_end, component, kind, name, params ? params : kb_val_obj(), log->added++};
    if (log->stream)
        kb_opstream_add(log->stream, &r);
    if (!log->keep) {
        kb_val_free(r.params);
        return;
    }
    if (log->n == log->cap) {
        log->cap = log->cap ? 2 * log->cap : 64;
        log->recs = kb_xrealloc(log->recs, log->cap * sizeof *log->recs);
    }
    log->recs[log->n++] = r;
    log->sorted = false;
}

static int by_start(const void *a, const void *b)
{
    const kb_oprec *x = a, *y = b;
    if (x->t_start != y->t_start)
        return x->t_start < y->t_start ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

const kb_oprec *kb_oplog_records(kb_oplog *log, size_t *n)
{
    if (!log->sorted && log->n > 1)
        qsort(log->recs, log->n, sizeof *log->recs, by_start); /* seq makes it stable */
    log->sorted = true;
    *n = log->n;
    return log->recs;
}

void kb_json_write_ns(FILE *out, kb_time ps)
{
    if (ps < 0) {
        fputc('-', out);
        ps = -ps;
    }
    fprintf(out, "%lld.%03lld", (long long)(ps / 1000), (long long)(ps % 1000));
}

void kb_oplog_write_record(FILE *out, int sim, const kb_oprec *r)
{
    fprintf(out, "{\"sim\":%d,\"t_start_ns\":", sim);
    kb_json_write_ns(out, r->t_start);
    fputs(",\"t_end_ns\":", out);
    kb_json_write_ns(out, r->t_end);
    fputs(",\"component\":", out);
    kb_json_write_string(out, r->component);
    fputs(",\"op_kind\":", out);
    kb_json_write_string(out, r->kind);
    fputs(",\"op_name\":", out);
    kb_json_write_string(out, r->name);
    fputs(",\"params\":", out);
    kb_val_write_json(r->params, out);
    fputs("}\n", out);
}

void kb_oplog_write_jsonl(kb_oplog *log, FILE *out, int sim)
{
    size_t n;
    const kb_oprec *r = kb_oplog_records(log, &n);
    for (size_t i = 0; i < n; i++)
        kb_oplog_write_record(out, sim, &r[i]);
}

void kb_oplog_stream(kb_oplog *log, FILE *out, const char *spill_dir, int sim, size_t chunk_bytes)
{
    log->stream = kb_opstream_new(out, spill_dir, sim, chunk_bytes);
}

bool kb_oplog_finish(kb_oplog *log, char **err)
{
    if (!log->stream)
        return true;
    bool ok = kb_opstream_finish(log->stream, err);
    log->stream = NULL;
    return ok;
}

void kb_oplog_free(kb_oplog *log)
{
    kb_opstream_free(log->stream); /* never finished: its records are dropped */
    for (size_t i = 0; i < log->n; i++)
        kb_val_free(log->recs[i].params);
    free(log->recs);
    free(log->counts);
    *log = (kb_oplog){0};
}
