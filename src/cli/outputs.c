#include "cli/outputs.h"

#include "core/util.h"
#include "trace/val.h"

#include <stdlib.h>
#include <string.h>

typedef struct named {
    const char *opt;
    kb_outfile *f;
} named;

/* Two options naming one file would overwrite each other. */
static bool distinct(const named *n, size_t k, char *err, size_t errn)
{
    for (size_t i = 0; i < k; i++)
        for (size_t j = i + 1; j < k; j++)
            if (n[i].f && n[j].f && kb_outfile_same(n[i].f, n[j].f)) {
                snprintf(err, errn, "%s %s and %s %s name the same file", n[i].opt, kb_outfile_path(n[i].f),
                         n[j].opt, kb_outfile_path(n[j].f));
                return false;
            }
    return true;
}

bool kb_outputs_open(kb_session *s, kb_outputs *o, char *err, size_t errn)
{
    enum { N = 5 };
    named n[N] = {{"--trace", NULL}, {"--stats-json", NULL}, {"--op-log", NULL}, {"--dump-config", NULL},
                  {"--results-json", NULL}};
    const char *paths[N] = {o->trace_path, o->stats_json, o->op_log, o->dump_config, o->results_json};
    bool ok = true;
    for (int i = 0; i < N && ok; i++) {
        char *e = NULL;
        if (paths[i] && !(n[i].f = kb_outfile_open(paths[i], n[i].opt, &e))) {
            snprintf(err, errn, "%s", e);
            free(e);
            ok = false;
        }
    }
    if (ok)
        ok = distinct(n, N, err, errn);
    if (!ok) {
        for (int i = 0; i < N; i++)
            kb_outfile_abort(n[i].f);
        return false;
    }
    if (n[0].f)
        s->trace = kb_trace_open(n[0].f, &o->trace);
    o->stats_file = n[1].f;
    o->oplog_file = n[2].f;
    o->config_file = n[3].f;
    o->results_file = n[4].f;
    if (o->oplog_file) {
        s->oplog_out = kb_outfile_stream(o->oplog_file);
        /* spill files beside the target; a device target's go to $TMPDIR */
        s->oplog_spill_dir = kb_outfile_dir(o->oplog_file);
        if (!s->oplog_spill_dir)
            s->oplog_spill_dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    }
    if (o->config_file)
        s->config_out = kb_outfile_stream(o->config_file);
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

static bool commit(kb_outfile *f)
{
    char *e = NULL;
    if (!f || kb_outfile_commit(f, &e))
        return true;
    fprintf(stderr, "kernbench: %s\n", e);
    free(e);
    return false;
}

char *kb_stop_text(const kb_session *s, int stopped)
{
    const kb_sim_control *c = &s->ctl;
    kb_buf b = {0};
    kb_buf_printf(&b, "%s", kb_stop_message(stopped));
    if (c->reached.seen) {
        char now[KB_TIME_STRLEN];
        kb_buf_printf(&b, ": simulation #%d stopped at t=%s after %llu events", c->reached.id,
                      kb_time_format(c->reached.now, now), (unsigned long long)c->reached.events);
    }
    if (s->stopped_where[0])
        kb_buf_printf(&b, "%sLua code stopped at %s", c->reached.seen ? "; " : ": ", s->stopped_where);
    if (!c->reached.seen && c->latest.seen) {
        char now[KB_TIME_STRLEN];
        kb_buf_printf(&b, "%ssimulation #%d had reached t=%s after %llu events", s->stopped_where[0] ? "; " : ": ",
                      c->latest.id, kb_time_format(c->latest.now, now), (unsigned long long)c->latest.events);
    }
    return kb_buf_take(&b);
}

static void write_stats(kb_session *s, kb_outputs *o, int stopped)
{
    FILE *f = kb_outfile_stream(o->stats_file);
    fputs("{\"simulations\":", f);
    if (s->runs)
        kb_val_write_json(s->runs, f);
    else
        fputs("[]", f);
    if (stopped) { /* a complete run's file has none of these keys */
        fputs(",\"interrupted\":true,\"stopped_by\":", f);
        kb_json_write_string(f, kb_stop_name(stopped));
        /* Where the stop found a simulation, or where the last run ended
         * when the stop found Lua code between runs. */
        const kb_sim_where *w = s->ctl.reached.seen ? &s->ctl.reached : &s->ctl.latest;
        if (w->seen) {
            fprintf(f, ",\"stopped_at\":{\"sim\":%d,\"sim_ns\":", w->id);
            kb_json_write_number(f, kb_ps_to_ns((double)w->now));
            fprintf(f, ",\"events\":%llu}", (unsigned long long)w->events);
        }
    }
    fputs("}\n", f);
}

/* The results file: the bench's document, or nothing. */
static bool finish_results(kb_outputs *o, int stopped, bool failed)
{
    bool ok = true;
    if (o->results_file && o->results && !stopped) {
        fputs(o->results, kb_outfile_stream(o->results_file));
        ok = commit(o->results_file);
    } else if (o->results_file) {
        if (!stopped && !failed)
            fprintf(stderr, "kernbench: --results-json %s: not written: no bench ran to completion\n",
                    o->results_json);
        ok = stopped || failed;
        kb_outfile_abort(o->results_file);
    }
    o->results_file = NULL;
    free(o->results);
    o->results = NULL;
    return ok;
}

/* What the closed simulations left for the outputs (their statistics, the
 * configurations written, an op-log error), dropped once written or not. */
static void forget_runs(kb_session *s)
{
    free(s->oplog_error);
    s->oplog_error = NULL;
    for (size_t i = 0; i < s->nconfigs; i++)
        free(s->configs_written[i]);
    free(s->configs_written);
    s->configs_written = NULL;
    s->nconfigs = 0;
    kb_val_free(s->runs);
    s->runs = NULL;
}

bool kb_outputs_finish(kb_session *s, kb_outputs *o, bool summary, int stopped, bool failed)
{
    bool ok = true;
    char *why = stopped ? kb_stop_text(s, stopped) : NULL;
    /* Simulations close in garbage-collection order: list them by number. */
    if (s->runs && s->runs->u.c.n > 1)
        qsort(s->runs->u.c.items, s->runs->u.c.n, sizeof *s->runs->u.c.items, by_sim);
    if (o->stats_file) {
        write_stats(s, o, stopped);
        ok = commit(o->stats_file) && ok;
        o->stats_file = NULL;
    }
    if (summary && !o->quiet && s->runs)
        kb_print_summary(stderr, s->runs, o->summary_note);
    if (s->trace) {
        char *e = NULL;
        if (stopped)
            kb_trace_truncated(s->trace, kb_stop_name(stopped), why);
        if (!kb_trace_close(s->trace, &e)) {
            fprintf(stderr, "kernbench: %s\n", e);
            free(e);
            ok = false;
        }
        s->trace = NULL;
    }
    if (o->oplog_file) {
        if (s->oplog_error) { /* records are missing: the file must not look complete */
            fprintf(stderr, "kernbench: --op-log %s: %s\n", o->op_log, s->oplog_error);
            kb_outfile_abort(o->oplog_file);
            ok = false;
        } else {
            if (stopped) {
                fputs("{\"truncated\":true,\"stopped_by\":", s->oplog_out);
                kb_json_write_string(s->oplog_out, kb_stop_name(stopped));
                fputs("}\n", s->oplog_out);
            }
            ok = commit(o->oplog_file) && ok;
        }
        o->oplog_file = NULL;
    }
    ok = commit(o->config_file) && ok;
    o->config_file = NULL;
    ok = finish_results(o, stopped, failed) && ok;
    s->oplog_out = s->config_out = NULL;
    free(why);
    forget_runs(s);
    return ok;
}

void kb_outputs_abort(kb_session *s, kb_outputs *o)
{
    kb_trace_abort(s->trace);
    s->trace = NULL;
    kb_outfile_abort(o->stats_file);
    kb_outfile_abort(o->oplog_file);
    kb_outfile_abort(o->config_file);
    kb_outfile_abort(o->results_file);
    o->stats_file = o->oplog_file = o->config_file = o->results_file = NULL;
    free(o->results);
    o->results = NULL;
    s->oplog_out = s->config_out = NULL;
    forget_runs(s); /* a usage error found while running still closed its simulations */
}
