/* kernbench: the command line. Runs a Lua script or code against the
 * simulator, or starts the REPL: options.c parses the options, defaults.c
 * hands them to the Lua library, run.c runs what they name. Reference:
 * docs/cli.md. */
#include "cli/defaults.h"
#include "cli/exec.h"
#include "cli/options.h"
#include "cli/outputs.h"
#include "cli/paths.h"
#include "cli/progress.h"
#include "cli/repl.h"
#include "cli/run.h"
#include "cli/web.h"
#include "lua/state.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* KERNBENCH_CCL_TRACE=1 is --ipcq-trace (the original's variable). */
static bool ccl_trace_env(void)
{
    const char *v = getenv("KERNBENCH_CCL_TRACE");
    if (!v || !*v || strcmp(v, "0") == 0)
        return false;
    if (strcmp(v, "1") != 0)
        fprintf(stderr, "kernbench: KERNBENCH_CCL_TRACE='%s': expected 1 (on) or 0 (off); taken as on\n", v);
    return true;
}

int main(int argc, char **argv)
{
    /* A write past a file-size limit (ulimit -f) fails with EFBIG and takes
     * the write-error path (a message, exit status 1, no target file)
     * instead of killing the process with SIGXFSZ (docs/reliability.md). */
    signal(SIGXFSZ, SIG_IGN);
    kb_cli_options o = {0};
    int code = kb_cli_parse(argc, argv, &o);
    if (code >= 0) {
        kb_cli_options_free(&o);
        return code;
    }

    char err[1024];
    char *lua_dir = kb_find_lua_dir(argv[0], err, sizeof err);
    if (!lua_dir) {
        fprintf(stderr, "kernbench: %s\n", err);
        kb_cli_options_free(&o);
        return KB_EXIT_ERROR;
    }
    kb_session session = {.print_stats = o.stats, .keep_requests = o.out.stats_json != NULL,
                          .keep_runs = o.out.stats_json != NULL || !o.out.quiet,
                          .ipcq_trace = o.ipcq_trace || ccl_trace_env()};
    session.ctl.until = o.until_ps;
    session.ctl.max_events = o.max_events;
    kb_exec_signals(&session); /* from here a signal stops the run and keeps its outputs */
    /* Output paths first: a bad one is a usage error before anything runs. */
    if (!kb_outputs_open(&session, &o.out, err, sizeof err)) {
        free(lua_dir);
        kb_cli_options_free(&o);
        return kb_cli_usage_error("%s", err);
    }
    if (o.timeout_s > 0)
        kb_exec_timeout(o.timeout_s);
    lua_State *L = kb_lua_open(&session, lua_dir, err, sizeof err);
    free(lua_dir);
    if (!L) {
        fprintf(stderr, "kernbench: %s\n", err);
        kb_outputs_abort(&session, &o.out);
        kb_cli_options_free(&o);
        return KB_EXIT_ERROR;
    }
    kb_session_track_coroutines(L);
    kb_web_preload(L); /* kernbench.httpd, for kernbench web */
    kb_progress progress; /* the progress line on a terminal (docs/cli.md "Progress") */
    kb_progress_start(&progress, &session, L, o.out.quiet);

    int status = kb_cli_set_defaults(L, &o);
    int exit_status = KB_EXIT_OK;
    const char *sub = o.script ? argv[o.script] : "";
    bool probe = strcmp(sub, "probe") == 0, list = strcmp(sub, "list") == 0;
    bool help = strcmp(sub, "help") == 0, run = strcmp(sub, "run") == 0;
    bool web = strcmp(sub, "web") == 0; /* docs/web.md */
    bool draw = strcmp(sub, "draw") == 0; /* docs/draw.md */
    bool sweep = strcmp(sub, "sweep") == 0; /* docs/sweeps.md */
    bool usage = status == LUA_OK && (!kb_cli_topology_exists(L, o.topology) || !kb_cli_ccl_exists(o.ccl));
    char *bench_path = NULL;
    if (!usage && (o.nparams > 0 || o.out.results_json) && (!o.script || probe || list || help || web || draw || sweep)) {
        kb_cli_usage_error("%s", "--param and --results-json need a bench: kernbench [options] run BENCH");
        usage = true;
    }
    if (!usage && run && o.script + 1 >= argc) {
        fprintf(stderr, "kernbench: run: which bench? (kernbench run NAME: 'kernbench list' shows the names)\n");
        usage = true;
    }
    if (!usage && run && status == LUA_OK) {
        bench_path = kb_cli_resolve_bench(L, &session, argv[o.script + 1], &status);
        if (bench_path)
            argv[o.script + 1] = bench_path; /* arg[0] is the bench's file */
        usage = status == KB_EXEC_USAGE;
    }
    if (usage) {
        kb_lua_close(L);
        kb_outputs_abort(&session, &o.out);
        kb_cli_options_free(&o);
        return KB_EXIT_USAGE;
    }
    kb_cli_arg_table(L, argc, argv, run ? o.script + 1 : o.script);
#define GOING_ON (status == LUA_OK && !session.ctl.stop)
    for (int i = 0; i < o.nrequires && GOING_ON; i++)
        status = kb_cli_run_require(L, &session, o.requires[i]);
    for (int i = 0; i < o.ncode && GOING_ON; i++)
        status = kb_cli_run_code(L, &session, o.code[i]);
    int first = o.script + 1; /* a subcommand's first argument */
    if (GOING_ON && web)
        status = kb_cli_run_subcommand(L, &session, "kernbench.web", "main", argc, argv, first, &exit_status);
    else if (GOING_ON && draw)
        status = kb_cli_run_subcommand(L, &session, "kernbench.draw", "main", argc, argv, first, &exit_status);
    else if (GOING_ON && sweep)
        status = kb_cli_run_subcommand(L, &session, "kernbench.sweep", "main", argc, argv, first, &exit_status);
    else if (GOING_ON && (probe || list || help))
        status = kb_cli_run_subcommand(L, &session, probe ? "kernbench.probe" : "kernbench.bench_find",
                                       probe ? "main" : list ? "list_main" : "help_main", argc, argv, first,
                                       &exit_status);
    else if (GOING_ON && o.script)
        status = kb_cli_run_script(L, &session, argc, argv, run ? o.script + 1 : o.script, run, &exit_status);
    kb_progress_end(&progress); /* no line in the REPL, the summary or the messages at exit */
    if (GOING_ON && (o.interactive || (!o.script && o.ncode == 0)))
        kb_repl(L, &session);
#undef GOING_ON
    /* What the outputs say is decided here: a stop that comes later finds
     * the run complete (it still sets the exit status). */
    kb_exec_timeout(0);
    int stopped = session.ctl.stop;
    if (status == KB_EXEC_USAGE && !stopped) {
        /* a user's mistake found while running (a --set, a bench parameter):
         * reported by kb_exec_report; no output is written */
        kb_lua_close(L);
        free(bench_path);
        kb_outputs_abort(&session, &o.out);
        kb_cli_options_free(&o);
        return KB_EXIT_USAGE;
    }

    fflush(stdout);
    o.out.results = kb_cli_take_kb_string(L, "results_document");
    o.out.summary_note = kb_cli_take_kb_string(L, "summary_note");
    kb_lua_close(L); /* closes the simulations still open (and reports them) */
    free(bench_path);
    /* A failed run has said why; no summary after it. */
    bool failed = status != LUA_OK || exit_status != KB_EXIT_OK;
    bool written = kb_outputs_finish(&session, &o.out, o.script != 0 && !failed, stopped, failed);
    free(o.out.summary_note);
    bool marked = o.out.trace_path || o.out.stats_json || o.out.op_log;
    kb_cli_options_free(&o);
    if (stopped) {
        char *why = kb_stop_text(&session, stopped);
        fprintf(stderr, "kernbench: %s%s\n", why, marked ? "; the trace, statistics and op log written say so" : "");
        free(why);
    }
    if (!written)
        return KB_EXIT_ERROR;
    switch (stopped ? stopped : session.ctl.stop) {
    case KB_STOP_SIGINT: return KB_EXIT_SIGINT;
    case KB_STOP_SIGTERM: return KB_EXIT_SIGTERM;
    case KB_STOP_TIMEOUT: return KB_EXIT_TIMEOUT;
    case KB_STOP_UNTIL: return KB_EXIT_UNTIL;
    case KB_STOP_EVENTS: return KB_EXIT_MAX_EVENTS;
    default: break;
    }
    return status != LUA_OK ? KB_EXIT_ERROR : exit_status;
}
