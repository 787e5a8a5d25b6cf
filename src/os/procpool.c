/* A pool of child processes (procpool.h). */
#include "os/procpool.h"

#include "core/util.h"

#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <time.h>

/* The signals that stop the pool; each is re-raised once the children are
 * gone, so the command line's own handling (or the default action) follows. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM};
_Static_assert(sizeof stop_signals / sizeof *stop_signals == KB_OS_NSTOP, "KB_OS_NSTOP");

/* Set by the handlers while a pool runs (a pool does not nest:
 * kernbench.procpool refuses run inside an on_done callback). */
static volatile sig_atomic_t pool_stop;
static volatile sig_atomic_t pool_running;

static void on_stop(int sig)
{
    if (!pool_stop)
        pool_stop = sig;
}

static void on_child(int sig) { (void)sig; /* wakes pselect */ }

bool kb_os_pool_active(void) { return pool_running; }
int kb_os_pool_stopped(void) { return pool_stop; }

/* ---- signals ---- */

void kb_os_pool_install(kb_os_pool *p)
{
    sigemptyset(&p->blocked);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < KB_OS_NSTOP; i++) {
        sigaction(stop_signals[i], NULL, &p->old_act[i]);
        /* an ignored signal stays ignored */
        p->handled[i] = p->old_act[i].sa_handler != SIG_IGN;
        if (p->handled[i]) {
            sa.sa_handler = on_stop;
            sigaction(stop_signals[i], &sa, NULL);
            sigaddset(&p->blocked, stop_signals[i]);
        }
    }
    sa.sa_handler = on_child;
    sa.sa_flags = SA_NOCLDSTOP;
    sigaction(SIGCHLD, &sa, &p->old_chld);
    sigaddset(&p->blocked, SIGCHLD);
    sigprocmask(SIG_BLOCK, &p->blocked, &p->old_mask);
    pool_stop = 0;
    pool_running = 1;
    p->installed = true;
}

void kb_os_pool_uninstall(kb_os_pool *p)
{
    if (!p->installed)
        return;
    p->installed = false;
    for (int i = 0; i < KB_OS_NSTOP; i++)
        if (p->handled[i])
            sigaction(stop_signals[i], &p->old_act[i], NULL);
    sigaction(SIGCHLD, &p->old_chld, NULL);
    int sig = pool_stop;
    pool_running = 0;
    pool_stop = 0;
    if (sig)
        raise(sig); /* pending while blocked: delivered by the sigprocmask below */
    sigprocmask(SIG_SETMASK, &p->old_mask, NULL);
}

void kb_os_pool_unblock(const kb_os_pool *p) { sigprocmask(SIG_SETMASK, &p->old_mask, NULL); }
void kb_os_pool_block(const kb_os_pool *p) { sigprocmask(SIG_BLOCK, &p->blocked, NULL); }

void kb_os_pool_pause(const kb_os_pool *p, double s)
{
    struct timespec ts = {0, (long)(s * 1e9)};
    pselect(0, NULL, NULL, NULL, &ts, &p->old_mask);
}

/* ---- children ---- */

kb_os_child *kb_os_pool_reap(kb_os_pool *p)
{
    for (int i = 0; i < p->n; i++) {
        kb_os_child *c = &p->cmds[i];
        int ws;
        if (c->state == 1 && waitpid(c->pid, &ws, WNOHANG) == c->pid) {
            c->state = 2;
            c->wstatus = ws;
            return c;
        }
    }
    return NULL;
}

int kb_os_pool_running(const kb_os_pool *p)
{
    int k = 0;
    for (int i = 0; i < p->n; i++)
        k += p->cmds[i].state == 1;
    return k;
}

void kb_os_pool_terminate(kb_os_pool *p)
{
    for (int i = 0; i < p->n; i++)
        if (p->cmds[i].state == 1)
            kill(p->cmds[i].pid, SIGTERM);
    double t0 = kb_wall_seconds();
    bool killed = false;
    while (kb_os_pool_running(p) > 0) {
        if (kb_os_pool_reap(p))
            continue;
        if (!killed && kb_wall_seconds() - t0 > KB_OS_TERM_GRACE_S) {
            for (int i = 0; i < p->n; i++)
                if (p->cmds[i].state == 1)
                    kill(p->cmds[i].pid, SIGKILL);
            killed = true;
        }
        kb_os_sleep(0.01);
    }
}
