/* Processes: named, long-lived actors of a simulation.
 *
 * A process is whatever code waits on events: a builtin component written
 * as C callbacks, or a Lua coroutine. The core does not run them; it keeps
 * a list of the live ones and what each is blocked on, so that a run that
 * ends with processes still waiting can say who waits on what.
 *
 * Daemon processes (service loops such as a router's worker) are expected
 * to wait forever and are left out of quiescence reports. */
#ifndef KB_CORE_PROC_H
#define KB_CORE_PROC_H

#include "core/list.h"
#include "core/types.h"

enum { KB_PROC_DAEMON = 1u << 0 };

struct kb_proc {
    kb_link link; /* in the simulation's live list */
    kb_sim *sim;
    uint64_t id;
    char *name; /* owned */
    unsigned flags;
    const kb_waitable *wait_on; /* NULL unless blocked */
    const char *wait_op;        /* "on", "to get from", "to put to", "to acquire" */
    /* Optional: writes where the process is blocked (e.g. "bench.lua:12"). */
    void (*where)(const kb_proc *proc, char *buf, size_t n);
};

/* Registers a live process; name is copied (NULL gives "proc#<id>"). */
void kb_proc_start(kb_sim *sim, kb_proc *proc, const char *name, unsigned flags);
/* Unregisters it; the struct may be freed afterwards. */
void kb_proc_end(kb_proc *proc);
bool kb_proc_live(const kb_proc *proc);

void kb_proc_set_wait(kb_proc *proc, const kb_waitable *on, const char *op);
void kb_proc_clear_wait(kb_proc *proc);

/* Live non-daemon processes that are blocked. */
size_t kb_proc_waiting_count(const kb_sim *sim);

/* "process 'name' #3 (x.lua:9) waiting to get from store 'q' (...)" */
void kb_proc_describe(const kb_proc *proc, char *buf, size_t n);

#endif
