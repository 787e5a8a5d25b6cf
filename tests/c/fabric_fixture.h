/* Shared set-up for the fabric tests: load a topology from text or a file,
 * build a simulation and a fabric on it, and record completion times. */
#ifndef KB_TEST_FABRIC_FIXTURE_H
#define KB_TEST_FABRIC_FIXTURE_H

#include "comp/comp.h"
#include "comp/entry.h"
#include "core/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct fixture {
    kb_registry *reg;
    kb_topo *topo;
    kb_sim *sim;
    kb_fabric *fab;
} fixture;

typedef struct done_rec {
    kb_time at;
    kb_time start;
    int count;
} done_rec;

static inline void record_done(kb_txn *t, void *arg)
{
    done_rec *d = arg;
    d->at = kb_sim_now(kb_fabric_sim(t->fab));
    d->start = t->t_start;
    d->count++;
}

static inline void fixture_open(fixture *fx, const char *yaml, const char *file, const char *const *ov,
                         size_t nov)
{
    fx->reg = kb_registry_new();
    kb_comp_register_builtins(fx->reg);
    char *err = NULL;
    fx->topo = yaml ? kb_topo_load_string(yaml, "test.yaml", ov, nov, fx->reg, &err)
                    : kb_topo_load(file, ov, nov, fx->reg, &err);
    if (!fx->topo) {
        fprintf(stderr, "topology: %s\n", err);
        free(err);
        abort();
    }
    fx->sim = kb_sim_new();
    fx->fab = kb_fabric_new(fx->sim, fx->topo, &err);
    if (!fx->fab) {
        fprintf(stderr, "fabric: %s\n", err);
        abort();
    }
}

static inline void fixture_close(fixture *fx)
{
    kb_fabric_free(fx->fab);
    kb_sim_free(fx->sim);
    kb_topo_free(fx->topo);
    kb_registry_free(fx->reg);
}

static inline uint32_t node_of(const fixture *fx, const char *id)
{
    int64_t n = kb_topo_find(fx->topo, id);
    if (n < 0) {
        fprintf(stderr, "no node %s\n", id);
        abort();
    }
    return (uint32_t)n;
}

#endif
