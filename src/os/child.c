/* One child process (child.h). */
#include "os/child.h"

#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- checks made before anything starts ---- */

static bool executable(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

const char *kb_os_cannot_run(const char *argv0, char *buf, size_t n)
{
    if (!*argv0) {
        snprintf(buf, n, "the program name is empty");
        return buf;
    }
    if (strchr(argv0, '/')) {
        struct stat st;
        if (stat(argv0, &st) != 0)
            snprintf(buf, n, "cannot run '%s': %s", argv0, strerror(errno));
        else if (!S_ISREG(st.st_mode) || access(argv0, X_OK) != 0)
            snprintf(buf, n, "cannot run '%s': not an executable file", argv0);
        else
            return NULL;
        return buf;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char full[4096];
    for (const char *p = path;; p++) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        int w = len == 0 ? snprintf(full, sizeof full, "./%s", argv0)
                         : snprintf(full, sizeof full, "%.*s/%s", (int)len, p, argv0);
        if (w > 0 && (size_t)w < sizeof full && executable(full))
            return NULL;
        if (!colon)
            break;
        p = colon;
    }
    snprintf(buf, n, "cannot run '%s': no such program in PATH", argv0);
    return buf;
}

/* ---- starting ---- */

static int open_for(const char *path, char *err, size_t n, const char *what)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        snprintf(err, n, "cannot open the %s file '%s': %s", what, path, strerror(errno));
    return fd;
}

bool kb_os_child_start(kb_os_child *c, const sigset_t *mask, char *err, size_t n)
{
    sigset_t now;
    if (!mask) {
        sigprocmask(SIG_SETMASK, NULL, &now);
        mask = &now;
    }
    int fo = -1, fe = -1, fi = -1;
    bool ok = false;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    if (c->out && (fo = open_for(c->out, err, n, "stdout")) < 0)
        goto done;
    if (c->err && !(c->out && strcmp(c->err, c->out) == 0) && (fe = open_for(c->err, err, n, "stderr")) < 0)
        goto done;
    if (c->in && (fi = open(c->in, O_RDONLY | O_CLOEXEC)) < 0) {
        snprintf(err, n, "cannot open the stdin file '%s': %s", c->in, strerror(errno));
        goto done;
    }
    if (fi >= 0)
        posix_spawn_file_actions_adddup2(&fa, fi, STDIN_FILENO);
    if (fo >= 0)
        posix_spawn_file_actions_adddup2(&fa, fo, STDOUT_FILENO);
    if (c->err)
        posix_spawn_file_actions_adddup2(&fa, fe >= 0 ? fe : fo, STDERR_FILENO);
    /* the child starts with the mask the parent had before a pool (os/procpool.h) */
    posix_spawnattr_setsigmask(&at, mask);
    short flags = POSIX_SPAWN_SETSIGMASK;
    if (c->group) {
        posix_spawnattr_setpgroup(&at, 0);
        flags |= POSIX_SPAWN_SETPGROUP;
    }
    posix_spawnattr_setflags(&at, flags);
    pid_t pid;
    int e = strchr(c->argv[0], '/') ? posix_spawn(&pid, c->argv[0], &fa, &at, c->argv, environ)
                                     : posix_spawnp(&pid, c->argv[0], &fa, &at, c->argv, environ);
    if (e != 0) {
        snprintf(err, n, "cannot run '%s': %s", c->argv[0], strerror(e));
        goto done;
    }
    c->pid = pid;
    c->state = 1;
    ok = true;
done:
    if (fi >= 0)
        close(fi);
    if (fo >= 0)
        close(fo);
    if (fe >= 0)
        close(fe);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    return ok;
}

/* ---- ending ---- */

void kb_os_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Sends sig to pid's process group when pid leads one, else to pid. */
static void signal_child(pid_t pid, int sig)
{
    if (getpgid(pid) == pid)
        kill(-pid, sig);
    else
        kill(pid, sig);
}

void kb_os_child_terminate(pid_t pid)
{
    int ws;
    if (waitpid(pid, &ws, WNOHANG) != 0)
        return; /* ended now, or not (any more) our child */
    bool leader = getpgid(pid) == pid;
    signal_child(pid, SIGTERM);
    double t1 = kb_wall_seconds();
    bool killed = false;
    while (waitpid(pid, &ws, WNOHANG) == 0) {
        if (!killed && kb_wall_seconds() - t1 > KB_OS_TERM_GRACE_S) {
            signal_child(pid, SIGKILL);
            killed = true;
        }
        kb_os_sleep(0.01);
    }
    if (leader) /* the rest of its group */
        kill(-pid, SIGKILL);
}
