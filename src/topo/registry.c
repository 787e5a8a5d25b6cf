/* Implementation registry: a sorted array of borrowed kb_impl pointers. */
#include "topo/registry.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

struct kb_registry {
    const kb_impl **items; /* sorted by name */
    size_t n, cap;
    kb_impl_resolver resolver;
    void *resolver_ctx;
};

void kb_registry_set_resolver(kb_registry *reg, kb_impl_resolver fn, void *ctx)
{
    reg->resolver = fn;
    reg->resolver_ctx = ctx;
}

kb_registry *kb_registry_new(void) { return kb_xcalloc(1, sizeof(kb_registry)); }

void kb_registry_free(kb_registry *reg)
{
    if (!reg)
        return;
    free(reg->items);
    free(reg);
}

static size_t lower_bound(const kb_registry *reg, const char *name)
{
    size_t lo = 0, hi = reg->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(reg->items[mid]->name, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

bool kb_registry_add(kb_registry *reg, const kb_impl *impl)
{
    size_t at = lower_bound(reg, impl->name);
    if (at < reg->n && strcmp(reg->items[at]->name, impl->name) == 0)
        return false;
    if (reg->n == reg->cap) {
        reg->cap = reg->cap ? reg->cap * 2 : 32;
        reg->items = kb_xrealloc(reg->items, reg->cap * sizeof *reg->items);
    }
    memmove(&reg->items[at + 1], &reg->items[at], (reg->n - at) * sizeof *reg->items);
    reg->items[at] = impl;
    reg->n++;
    return true;
}

const kb_impl *kb_registry_find(const kb_registry *reg, const char *name)
{
    size_t at = lower_bound(reg, name);
    return at < reg->n && strcmp(reg->items[at]->name, name) == 0 ? reg->items[at] : NULL;
}

const kb_impl *kb_registry_lookup(const kb_registry *reg, const char *name, char **err)
{
    const kb_impl *impl = kb_registry_find(reg, name);
    if (!impl && reg->resolver)
        impl = reg->resolver(reg->resolver_ctx, name, err);
    return impl;
}

char *kb_registry_names(const kb_registry *reg)
{
    kb_buf b = {0};
    for (size_t i = 0; i < reg->n; i++)
        kb_buf_printf(&b, "%s%s", i ? ", " : "", reg->items[i]->name);
    return kb_buf_take(&b);
}

size_t kb_registry_count(const kb_registry *reg) { return reg->n; }

const kb_impl *kb_registry_at(const kb_registry *reg, size_t i)
{
    return i < reg->n ? reg->items[i] : NULL;
}

int kb_impl_attr_index(const kb_impl *impl, const char *name)
{
    for (size_t i = 0; i < impl->nattrs; i++)
        if (strcmp(impl->attrs[i].name, name) == 0)
            return (int)i;
    return -1;
}

bool kb_impl_serves(const kb_impl *impl, const char *kind)
{
    if (!impl->kinds)
        return true;
    size_t len = strlen(kind);
    for (const char *p = impl->kinds; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncmp(p, kind, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}
