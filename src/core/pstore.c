#include "core/pstore.h"

#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pitem {
    double key;
    kb_item item;
} pitem;

typedef struct pstore {
    size_t capacity; /* 0: unbounded */
    pitem *a;
    size_t n, cap;
    kb_pstore_match match; /* filter stores */
    void *match_ctx;
} pstore;

static pstore *state(const kb_shared *sh) { return sh->ctx; }

static void push_back(pstore *s, pitem it)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 16;
        s->a = kb_xrealloc(s->a, s->cap * sizeof *s->a);
    }
    s->a[s->n++] = it;
}

static bool full(const pstore *s) { return s->capacity && s->n >= s->capacity; }

/* ---- Python's heapq, step for step (_siftdown, _siftup, heappush, heappop) ---- */

static void siftdown(pitem *h, size_t start, size_t pos)
{
    pitem newitem = h[pos];
    while (pos > start) {
        size_t parent = (pos - 1) >> 1;
        if (newitem.key < h[parent].key) {
            h[pos] = h[parent];
            pos = parent;
            continue;
        }
        break;
    }
    h[pos] = newitem;
}

static void siftup(pitem *h, size_t n, size_t pos)
{
    size_t start = pos;
    pitem newitem = h[pos];
    size_t child = 2 * pos + 1;
    while (child < n) {
        size_t right = child + 1;
        if (right < n && !(h[child].key < h[right].key))
            child = right;
        h[pos] = h[child];
        pos = child;
        child = 2 * pos + 1;
    }
    h[pos] = newitem;
    siftdown(h, start, pos);
}

static void heappush(pstore *s, pitem it)
{
    push_back(s, it);
    siftdown(s->a, 0, s->n - 1);
}

static pitem heappop(pstore *s)
{
    pitem last = s->a[--s->n];
    if (s->n == 0)
        return last;
    pitem top = s->a[0];
    s->a[0] = last;
    siftup(s->a, s->n, 0);
    return top;
}

/* ---- the kinds' do_put / do_get (SimPy's) ---- */

static bool priority_put(kb_shared *sh, kb_request *r)
{
    pstore *s = state(sh);
    if (!full(s)) {
        heappush(s, (pitem){r->key, r->qw.item});
        kb_shared_grant(sh, r, KB_ITEM_NONE);
    }
    return false;
}

static bool priority_get(kb_shared *sh, kb_request *r)
{
    pstore *s = state(sh);
    if (s->n)
        kb_shared_grant(sh, r, heappop(s).item);
    return false;
}

static bool filter_put(kb_shared *sh, kb_request *r)
{
    pstore *s = state(sh);
    if (!full(s)) {
        push_back(s, (pitem){0, r->qw.item});
        kb_shared_grant(sh, r, KB_ITEM_NONE);
    }
    return false;
}

/* Every waiting get is tried (SimPy's FilterStore returns True). */
static bool filter_get(kb_shared *sh, kb_request *r)
{
    pstore *s = state(sh);
    for (size_t i = 0; i < s->n; i++) {
        if (s->match(s->match_ctx, r, s->a[i].item)) {
            kb_item item = s->a[i].item;
            memmove(&s->a[i], &s->a[i + 1], (s->n - i - 1) * sizeof *s->a);
            s->n--;
            kb_shared_grant(sh, r, item);
            break;
        }
    }
    return true;
}

static void destroy(kb_shared *sh)
{
    free(state(sh)->a);
    free(sh->ctx);
}

static void describe(const kb_shared *sh, char *buf, size_t n)
{
    const pstore *s = state(sh);
    if (s->capacity)
        snprintf(buf, n, "%zu items, capacity %zu", s->n, s->capacity);
    else
        snprintf(buf, n, "%zu items, unbounded", s->n);
}

static const kb_shared_ops priority_ops = {
    .what = "priority store", .put_noun = "put request", .put_prep = "to",
    .do_put = priority_put, .do_get = priority_get, .destroy = destroy, .describe = describe,
};

static const kb_shared_ops filter_ops = {
    .what = "filter store", .put_noun = "put request", .put_prep = "to",
    .do_put = filter_put, .do_get = filter_get, .destroy = destroy, .describe = describe,
};

kb_shared *kb_pstore_new_priority(kb_sim *sim, const char *name, size_t capacity)
{
    pstore *s = kb_xcalloc(1, sizeof *s);
    s->capacity = capacity;
    return kb_shared_new(sim, &priority_ops, name, s);
}

kb_shared *kb_pstore_new_filter(kb_sim *sim, const char *name, size_t capacity,
                                kb_pstore_match match, void *match_ctx)
{
    pstore *s = kb_xcalloc(1, sizeof *s);
    s->capacity = capacity;
    s->match = match;
    s->match_ctx = match_ctx;
    return kb_shared_new(sim, &filter_ops, name, s);
}

void kb_pstore_put(kb_shared *sh, kb_request *r, kb_item item, double key)
{
    r->qw.item = item;
    r->key = key;
    kb_shared_put(sh, r);
}

void kb_pstore_get(kb_shared *sh, kb_request *r) { kb_shared_get(sh, r); }

size_t kb_pstore_count(const kb_shared *sh) { return state(sh)->n; }

size_t kb_pstore_capacity(const kb_shared *sh) { return state(sh)->capacity; }

kb_item kb_pstore_item(const kb_shared *sh, size_t i) { return state(sh)->a[i].item; }

bool kb_pstore_is_filter(const kb_shared *sh) { return sh->ops == &filter_ops; }
