/* The session a Lua state serves: what the command line asked of its
 * simulations (statistics lines, a trace file, op log and configuration
 * outputs, the stop flag and run limits) and what it collects from them
 * (their statistics at close). A state holds at most one; the `sim` module
 * and the bindings find it with kb_session_of. */
#ifndef KB_LUASIM_SESSION_H
#define KB_LUASIM_SESSION_H

#include "core/sim.h"

#include <lua.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct kb_trace_file;
struct kb_val;

/* kb.progress(k, n[, label]): the point of n a bench has started (k from
 * 1; 0: none yet). `since_s` is when point k started and `first_*` the
 * first point started since n last changed or k went back (kb_wall_seconds
 * values): the command line's estimate of the time left. */
#define KB_SESSION_LABEL_MAX 48
typedef struct kb_session_point {
    int64_t k, n; /* n == 0: the bench said nothing */
    char label[KB_SESSION_LABEL_MAX + 1];
    double since_s;
    int64_t first_k; /* 0: no point started yet */
    double first_s;
} kb_session_point;

typedef struct kb_session {
    bool print_stats; /* print a line per simulation when it is closed */
    FILE *stats_out;  /* where (stderr when NULL) */
    struct kb_trace_file *trace; /* --trace: every simulation writes its timeline here */
    FILE *oplog_out;             /* --op-log: JSON Lines, one record per operation */
    const char *oplog_spill_dir; /* where op-log records wait until their simulation closes */
    char *oplog_error;           /* the first op-log I/O error, reported at exit */
    FILE *config_out;            /* --dump-config: resolved topology configurations */
    bool ipcq_trace;             /* --ipcq-trace: a line per PE-to-PE message on stderr */
    struct kb_val *runs;         /* statistics of every closed simulation with a topology */
    bool keep_runs;              /* collect them (for --stats-json or the summary) */
    bool keep_requests;          /* runs list every request (for --stats-json) */
    char **configs_written;      /* --dump-config documents so far (each is written once) */
    size_t nconfigs;
    int sims_created;
    /* Stop flag and limits of every simulation of the state: raised by
     * the command line's signal handlers and --timeout, or by a run that
     * reaches --until or --max-events (kb_sim_control). */
    kb_sim_control ctl;
    /* Simulation runs in progress on the state: while one is, the main
     * thread's Lua code is left to the run's poll of the stop flag
     * (raising a Lua error from a hook would unwind the C event loop). */
    volatile sig_atomic_t runs_active;
    /* Stopping Lua code (stop.c): the state's main thread, the coroutine
     * running Lua code now (NULL: the main thread), and whether a
     * command-line call is under way (hooks raise only then). */
    lua_State *main;
    lua_State *volatile current;
    volatile sig_atomic_t in_call;
    char stopped_where[256]; /* where the hook first stopped Lua code ("file:line"), or "" */
    kb_session_point point; /* kb.progress */
    /* The command line's progress line (cli/progress.h), or NULL: whatever
     * the session writes on stderr or stdout clears it first
     * (kb_session_clear_line). */
    void (*clear_line)(void *ctx);
    void *clear_ctx;
} kb_session;

/* Makes `session` the state's (it must outlive the state). */
void kb_session_attach(lua_State *L, kb_session *session);

/* Puts a new simulation (number `serial`) under the session's stop flag
 * and limits. session may be NULL (nothing). */
void kb_session_watch(kb_session *session, kb_sim *sim, int serial);

/* For the sim module: numbering and close-time reporting. */
int kb_session_next_serial(lua_State *L);
kb_session *kb_session_of(lua_State *L); /* NULL when the state has none */
void kb_session_sim_closed(lua_State *L, int serial, const kb_sim_stats *st, uint64_t resumes);
/* Appends a resolved configuration to --dump-config, unless the same
 * document was written already. */
void kb_session_dump_config(kb_session *session, const char *yaml);
/* Takes the statistics of a closed simulation (kept in session->runs). */
void kb_session_add_run(lua_State *L, struct kb_val *stats);
/* Keeps the first op-log error (taken) for the report at exit. */
void kb_session_oplog_error(kb_session *session, char *err);
/* Clears the progress line, if any is shown (session may be NULL). */
void kb_session_clear_line(kb_session *session);
/* The module kernbench.progress_c: progress(k, n[, label]), which is
 * kb.progress (docs/lua-api.md). It validates its arguments and records
 * them in the state's session, if any; it writes nothing. */
int luaopen_kb_progress(lua_State *L);

/* ---- stopping Lua code (stop.c) ----
 * A stop (signal, limit) must also end Lua code that never returns to a
 * simulation run, such as `while true do end` in a kernel or a bench. The
 * session arms a count hook on the main thread and on the coroutine
 * running, and on every coroutine resumed or returned to while the stop
 * flag is up; the hook raises "interrupted" on every tick, so a pcall
 * that catches the error cannot keep the loop alive. */

/* Arms the hook on the main thread and the running coroutine.
 * Async-signal-safe (lua_sethook is). */
void kb_session_arm(kb_session *session);
/* Arms the hook on one thread (NULL: none). */
void kb_session_arm_thread(lua_State *L);
/* Around a resume of co (a process, a latency model, a user coroutine):
 * enter returns the coroutine to give back to leave. NULL session: no-op.
 * Inline: every process resume goes through them. */
static inline lua_State *kb_session_enter(kb_session *s, lua_State *co)
{
    if (!s)
        return NULL;
    lua_State *outer = s->current;
    s->current = co;
    if (s->ctl.stop)
        kb_session_arm_thread(co);
    return outer;
}

static inline void kb_session_leave(kb_session *s, lua_State *outer)
{
    if (!s)
        return;
    s->current = outer;
    if (s->ctl.stop)
        kb_session_arm_thread(outer ? outer : s->main);
}
/* Replaces coroutine.resume and coroutine.wrap in L with versions that
 * enter and leave the coroutines they run, and coroutine.resume and
 * coroutine.close with versions that refuse a simulation's own threads. */
void kb_session_track_coroutines(lua_State *L);
/* Marks the thread at the top of L's stack as the simulation's (a process,
 * a latency model's thread): only the simulation may resume or close it;
 * `owner` (an index, or 0) is what the refusal names. Kept in a table with
 * weak keys: the mark goes with the thread. */
void kb_session_own_thread(lua_State *L, int owner);
/* The message a stop gives ("interrupted (SIGINT)", "stopped: --until
 * reached", ...), and its short name ("sigint", "until", ...). */
const char *kb_stop_message(int stop);
const char *kb_stop_name(int stop);

#endif
