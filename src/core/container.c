#include "core/container.h"

#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct container {
    double capacity, level;
} container;

static container *state(const kb_shared *sh) { return sh->ctx; }

/* SimPy's _do_put / _do_get: serve and go on, or stop at the first that
 * does not fit. */
static bool do_put(kb_shared *sh, kb_request *r)
{
    container *c = state(sh);
    if (c->capacity - c->level < r->key)
        return false;
    c->level += r->key;
    kb_shared_grant(sh, r, KB_ITEM_NONE);
    return true;
}

static bool do_get(kb_shared *sh, kb_request *r)
{
    container *c = state(sh);
    if (c->level < r->key)
        return false;
    c->level -= r->key;
    kb_shared_grant(sh, r, KB_ITEM_NONE);
    return true;
}

static void destroy(kb_shared *sh) { free(sh->ctx); }

static void describe(const kb_shared *sh, char *buf, size_t n)
{
    const container *c = state(sh);
    if (isinf(c->capacity))
        snprintf(buf, n, "level %.17g, unbounded", c->level);
    else
        snprintf(buf, n, "level %.17g of %.17g", c->level, c->capacity);
}

static const kb_shared_ops ops = {
    .what = "container",
    .put_noun = "put request",
    .put_prep = "to",
    .do_put = do_put,
    .do_get = do_get,
    .destroy = destroy,
    .describe = describe,
};

kb_shared *kb_container_new(kb_sim *sim, const char *name, double capacity, double init)
{
    container *c = kb_xcalloc(1, sizeof *c);
    c->capacity = capacity;
    c->level = init;
    return kb_shared_new(sim, &ops, name, c);
}

double kb_container_level(const kb_shared *sh) { return state(sh)->level; }

double kb_container_capacity(const kb_shared *sh) { return state(sh)->capacity; }

void kb_container_put(kb_shared *sh, kb_request *r, double amount)
{
    r->key = amount;
    kb_shared_put(sh, r);
}

void kb_container_get(kb_shared *sh, kb_request *r, double amount)
{
    r->key = amount;
    kb_shared_get(sh, r);
}
