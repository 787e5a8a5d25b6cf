/* The session a Lua state serves: what the command line asked of its
 * simulations (statistics lines, a trace file, op log and configuration
 * outputs, the interrupt flag of Ctrl-C) and what it collects from them
 * (their statistics at close). A state holds at most one; the `sim` module
 * and the bindings find it with kb_session_of. */
#ifndef KB_LUASIM_SESSION_H
#define KB_LUASIM_SESSION_H

#include "core/sim.h"

#include <lua.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

struct kb_trace_file;
struct kb_val;

typedef struct kb_session {
    bool print_stats; /* print a line per simulation when it is closed */
    FILE *stats_out;  /* where (stderr when NULL) */
    struct kb_trace_file *trace; /* --trace: every simulation writes its timeline here */
    FILE *oplog_out;             /* --op-log: JSON Lines, one record per operation */
    FILE *config_out;            /* --dump-config: resolved topology configurations */
    struct kb_val *runs;         /* statistics of every closed simulation with a topology */
    bool keep_requests;          /* runs list every request (for --stats-json) */
    char **configs_written;      /* --dump-config documents so far (each is written once) */
    size_t nconfigs;
    int sims_created;
    /* Raised by the command line's SIGINT handler; every simulation of the
     * state polls it and stops its run (see kb_sim_set_interrupt). */
    volatile sig_atomic_t interrupt;
    /* Simulation runs in progress on the state: while one is, Ctrl-C is
     * left to the run's poll of `interrupt` (raising a Lua error from a
     * hook would unwind the C event loop). */
    volatile sig_atomic_t runs_active;
} kb_session;

/* Makes `session` the state's (it must outlive the state). */
void kb_session_attach(lua_State *L, kb_session *session);

/* For the sim module: numbering and close-time reporting. */
int kb_session_next_serial(lua_State *L);
kb_session *kb_session_of(lua_State *L); /* NULL when the state has none */
void kb_session_sim_closed(lua_State *L, int serial, const kb_sim_stats *st, uint64_t resumes);
/* Appends a resolved configuration to --dump-config, unless the same
 * document was written already. */
void kb_session_dump_config(kb_session *session, const char *yaml);
/* Takes the statistics of a closed simulation (kept in session->runs). */
void kb_session_add_run(lua_State *L, struct kb_val *stats);

#endif
