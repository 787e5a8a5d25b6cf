/* One child process: whether a program can be run, starting it with its
 * standard streams on files and, if asked, a process group of its own,
 * and ending it. POSIX only: no Lua, nothing of the model (kb_os; the Lua
 * side is kernbench.procpool, src/luasim/lprocpool.c). */
#ifndef KB_OS_CHILD_H
#define KB_OS_CHILD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define KB_OS_TERM_GRACE_S 5.0 /* SIGTERM, then SIGKILL after this long */

typedef struct kb_os_child {
    char **argv;      /* the program and its arguments, NULL-terminated (the caller's) */
    const char *out;  /* NULL: inherited */
    const char *err;  /* NULL: inherited; equal to out: the same file */
    const char *in;   /* NULL: inherited */
    bool group;       /* a process group of its own */
    pid_t pid;        /* > 0 while running */
    int state;        /* 0 waiting, 1 running, 2 done */
    int wstatus;      /* waitpid's, once done */
} kb_os_child;

/* NULL if argv0 can be run (a path to an executable file, or a program
 * found in PATH), else why not, in buf. */
const char *kb_os_cannot_run(const char *argv0, char *buf, size_t n);

/* Starts c (posix_spawn, or posix_spawnp for a name without '/') with the
 * signal mask `mask` (NULL: the caller's mask now); its stdout and stderr
 * files are created or truncated. False with a message in err. */
bool kb_os_child_start(kb_os_child *c, const sigset_t *mask, char *err, size_t n);

/* Terminates the child pid if it has not been reaped (its process group
 * if it leads one: SIGTERM, SIGKILL after KB_OS_TERM_GRACE_S) and reaps
 * it. */
void kb_os_child_terminate(pid_t pid);

/* Sleeps `s` seconds at most: a signal ends it early. */
void kb_os_sleep(double s);

#endif
