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

bool kb_outputs_open(kb_session *s, const kb_outputs *o, char *err, size_t errn)
{
    if (o->trace_path) {
        char *e = NULL;
        s->trace = kb_trace_open(o->trace_path, &o->trace, &e);
        if (!s->trace) {
            snprintf(err, errn, "%s", e);
            free(e);
            return false;
        }
    }
    if (o->op_log && !(s->oplog_out = open_out("--op-log", o->op_log, err, errn)))
        return false;
    if (o->dump_config && !(s->config_out = open_out("--dump-config", o->dump_config, err, errn)))
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

bool kb_outputs_finish(kb_session *s, const kb_outputs *o, bool summary)
{
    bool ok = true;
    /* Simulations close in garbage-collection order: list them by number. */
    if (s->runs && s->runs->u.c.n > 1)
        qsort(s->runs->u.c.items, s->runs->u.c.n, sizeof *s->runs->u.c.items, by_sim);
    if (o->stats_json) {
        char err[512];
        FILE *f = open_out("--stats-json", o->stats_json, err, sizeof err);
        if (!f) {
            fprintf(stderr, "kernbench: %s\n", err);
            ok = false;
        } else {
            fputs("{\"simulations\":", f);
            if (s->runs)
                kb_val_write_json(s->runs, f);
            else
                fputs("[]", f);
            fputs("}\n", f);
            ok = close_out(f, "--stats-json", o->stats_json) && ok;
        }
    }
    if (summary && !o->quiet && s->runs)
        kb_print_summary(stderr, s->runs);
    if (s->trace) {
        char *e = NULL;
        if (!kb_trace_close(s->trace, &e)) {
            fprintf(stderr, "kernbench: %s\n", e);
            free(e);
            ok = false;
        }
        s->trace = NULL;
    }
    ok = close_out(s->oplog_out, "--op-log", o->op_log) && ok;
    ok = close_out(s->config_out, "--dump-config", o->dump_config) && ok;
    s->oplog_out = s->config_out = NULL;
    for (size_t i = 0; i < s->nconfigs; i++)
        free(s->configs_written[i]);
    free(s->configs_written);
    s->configs_written = NULL;
    s->nconfigs = 0;
    kb_val_free(s->runs);
    s->runs = NULL;
    return ok;
}
