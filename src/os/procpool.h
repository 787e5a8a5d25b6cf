/* A pool of child processes run at most N at once: the signal handling
 * while it runs, reaping only its own children, and terminating them all.
 * POSIX only (kb_os); the loop that starts the commands and reports each
 * one's end is kernbench.procpool's run (src/luasim/lprocpool.c).
 *
 * While a pool is installed, SIGINT, SIGTERM, SIGHUP and SIGALRM (the
 * command line's --timeout) only record that the pool is to stop, SIGCHLD
 * wakes kb_os_pool_pause, and all of them are blocked but inside it. A
 * pool does not nest. */
#ifndef KB_OS_PROCPOOL_H
#define KB_OS_PROCPOOL_H

#include "os/child.h"

#include <signal.h>
#include <stdbool.h>

#define KB_OS_NSTOP 4 /* the signals that stop a pool */

typedef struct kb_os_pool {
    kb_os_child *cmds;
    int n;
    struct sigaction old_act[KB_OS_NSTOP], old_chld;
    bool handled[KB_OS_NSTOP];
    sigset_t old_mask, blocked; /* old_mask: the mask before the pool, the children's */
    bool installed;
} kb_os_pool;

/* Installs the pool's handlers and blocks their signals. An ignored stop
 * signal stays ignored. */
void kb_os_pool_install(kb_os_pool *p);
/* Restores the handlers and the mask; a stop signal caught is raised again
 * for the previous handler (the command line's: it sets the session's stop
 * flag) or the default action. Nothing if not installed. */
void kb_os_pool_uninstall(kb_os_pool *p);

/* Whether a pool is installed (one runs). */
bool kb_os_pool_active(void);
/* The stop signal caught while the pool runs, 0: none. */
int kb_os_pool_stopped(void);

/* Unblocks the signals (the handlers stay: a stop signal is recorded) for
 * a callback of the caller's, and blocks them again after it. */
void kb_os_pool_unblock(const kb_os_pool *p);
void kb_os_pool_block(const kb_os_pool *p);
/* Waits at most `s` seconds (below 1) for a child's end or a signal, with the
 * signals unblocked. */
void kb_os_pool_pause(const kb_os_pool *p, double s);

/* The next child of the pool that has ended (reaped), or NULL: only the
 * pool's own children are waited for (not, say, an io.popen's). */
kb_os_child *kb_os_pool_reap(kb_os_pool *p);
/* Children of the pool running now. */
int kb_os_pool_running(const kb_os_pool *p);
/* Terminates every running child (SIGTERM; SIGKILL after
 * KB_OS_TERM_GRACE_S) and reaps it: none outlives the pool. */
void kb_os_pool_terminate(kb_os_pool *p);

#endif
