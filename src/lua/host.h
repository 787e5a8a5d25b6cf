/* The Lua host: creates a Lua state with everything kernbench preloads,
 * and collects what the command line reports at exit.
 *
 * Preloaded: the standard libraries; `sim` (global and require "sim");
 * package.path extended with the kernbench Lua library directory; and the
 * global `kb` = require "kernbench". */
#ifndef KB_LUA_HOST_H
#define KB_LUA_HOST_H

#include "core/sim.h"

#include <lua.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>

struct kb_trace_file;
struct kb_val;

typedef struct kb_host {
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
} kb_host;

/* Returns a new state, or NULL with a message in err (size errn). The
 * host must outlive the state. lua_dir may be NULL (no library). */
lua_State *kb_host_open(kb_host *host, const char *lua_dir, char *err, size_t errn);
/* Closes the state: every simulation still open is closed (and reported). */
void kb_host_close(lua_State *L);

/* The `sim` module opener. */
int luaopen_sim(lua_State *L);

/* For the sim module: numbering and close-time reporting. */
int kb_host_next_sim_serial(lua_State *L);
kb_host *kb_host_of(lua_State *L); /* NULL when the state has no host */
void kb_host_sim_closed(lua_State *L, int serial, const kb_sim_stats *st, uint64_t resumes);
/* Appends a resolved configuration to --dump-config, unless the same
 * document was written already. */
void kb_host_dump_config(kb_host *h, const char *yaml);
/* Takes the statistics of a closed simulation (kept in host->runs). */
void kb_host_add_run(lua_State *L, struct kb_val *stats);

#endif
