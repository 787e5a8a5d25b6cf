#include "cli/outputs.h"

#include "trace/val.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static FILE *open_out(const char *opt, const char *path, char *err, size_t errn)
{
    FILE *f = fopen(path, "w");
    if (!f)
        snprintf(err, errn, "%s %s: %s", opt, path, strerror(errno));
    return f;
}

bool kb_outputs_open(kb_session *h, const kb_outputs *o, char *err, size_t errn)
{
    if (o->trace_path) {
        char *e = NULL;
        h->trace = kb_trace_open(o->trace_path, &o->trace, &e);
        if (!h->trace) {
            snprintf(err, errn, "%s", e);
            free(e);
            return false;
        }
    }
    if (o->op_log && !(h->oplog_out = open_out("--op-log", o->op_log, err, errn)))
        return false;
    if (o->dump_config && !(h->config_out = open_out("--dump-config", o->dump_config, err, errn)))
        return false;
    return true;
}

static int64_t sim_of(const kb_val *run)
{
    const kb_val *s = kb_obj_get(run, "sim");
    return s ? s->u.i : 0;
}

static int by_sim(const void *a, const void *b)
{
    int64_t x = sim_of(*(kb_val *const *)a), y = sim_of(*(kb_val *const *)b);
    return (x > y) - (x < y);
}

static bool close_out(FILE *f, const char *opt, const char *path)
{
    if (!f)
        return true;
    bool ok = !ferror(f);
    if (fclose(f) != 0)
        ok = false;
    if (!ok)
        fprintf(stderr, "kernbench: %s %s: write failed\n", opt, path);
    return ok;
}

bool kb_outputs_finish(kb_session *h, const kb_outputs *o, bool summary)
{
    bool ok = true;
    /* Simulations close in garbage-collection order: list them by number. */
    if (h->runs && h->runs->u.c.n > 1)
        qsort(h->runs->u.c.items, h->runs->u.c.n, sizeof *h->runs->u.c.items, by_sim);
    if (o->stats_json) {
        char err[512];
        FILE *f = open_out("--stats-json", o->stats_json, err, sizeof err);
        if (!f) {
            fprintf(stderr, "kernbench: %s\n", err);
            ok = false;
        } else {
            fputs("{\"simulations\":", f);
            if (h->runs)
                kb_val_write_json(h->runs, f);
            else
                fputs("[]", f);
            fputs("}\n", f);
            ok = close_out(f, "--stats-json", o->stats_json) && ok;
        }
    }
    if (summary && !o->quiet && h->runs)
        kb_print_summary(stderr, h->runs);
    if (h->trace) {
        char *e = NULL;
        if (!kb_trace_close(h->trace, &e)) {
            fprintf(stderr, "kernbench: %s\n", e);
            free(e);
            ok = false;
        }
        h->trace = NULL;
    }
    ok = close_out(h->oplog_out, "--op-log", o->op_log) && ok;
    ok = close_out(h->config_out, "--dump-config", o->dump_config) && ok;
    h->oplog_out = h->config_out = NULL;
    for (size_t i = 0; i < h->nconfigs; i++)
        free(h->configs_written[i]);
    free(h->configs_written);
    h->configs_written = NULL;
    h->nconfigs = 0;
    kb_val_free(h->runs);
    h->runs = NULL;
    return ok;
}
