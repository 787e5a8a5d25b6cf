/* Overlays: a map laid over a document wherever it is, as a profile does
 * (src/topo/profile.c). Like a base file's merge, maps merge key by key
 * and anything else replaces; unlike it, the overlay is copied rather than
 * moved, and a key `*` stands for every element of a list, so one overlay
 * reaches every IO chiplet of any topology (`sip.io_chiplets.*.links`). */
#include "topo/ydoc_internal.h"

#include "core/util.h"

#include <stdlib.h>
#include <string.h>

/* The overlay's document and where its source strings live in the target
 * document (the copies' marks must point into the target's). */
typedef struct overlay {
    const kb_ydoc *owner;
    const char **kept; /* kept[i]: the target's copy of owner->sources[i] */
} overlay;

static kb_ymark moved(const overlay *o, kb_ymark m)
{
    for (size_t i = 0; i < o->owner->nsources; i++)
        if (m.src == o->owner->sources[i])
            m.src = o->kept[i];
    return m;
}

static kb_ynode *copy_node(const overlay *o, const kb_ynode *n)
{
    kb_ynode *c = kb_ynode_new(n->type, moved(o, n->mark));
    c->text = n->text ? kb_xstrdup(n->text) : NULL;
    c->plain = n->plain;
    for (size_t i = 0; i < n->n; i++) {
        kb_yentry *e = kb_ynode_append(c);
        e->key = n->items[i].key ? kb_xstrdup(n->items[i].key) : NULL;
        e->key_mark = moved(o, n->items[i].key_mark);
        e->val = copy_node(o, n->items[i].val);
    }
    return c;
}

static bool lay(const overlay *o, kb_ynode *dst, const kb_ynode *over, char **err);

/* Lays `over` on the value in *slot: maps merge, anything else replaces. */
static bool lay_value(const overlay *o, kb_ynode **slot, const kb_ynode *over, char **err)
{
    if ((*slot)->type == KB_Y_MAP && over->type == KB_Y_MAP)
        return lay(o, *slot, over, err);
    if ((*slot)->type == KB_Y_SEQ && over->type == KB_Y_MAP && over->n == 1 &&
        strcmp(over->items[0].key, "*") == 0)
        return lay(o, *slot, over, err);
    kb_ynode_free(*slot);
    if (over->type == KB_Y_MAP) {
        /* a new map: its `*` keys have no list to reach, so only the rest is copied */
        *slot = kb_ynode_new(KB_Y_MAP, moved(o, over->mark));
        return lay(o, *slot, over, err);
    }
    *slot = copy_node(o, over);
    return true;
}

/* Lays the map `over` on dst (a map, or a list when over is `{*: ...}`). */
static bool lay(const overlay *o, kb_ynode *dst, const kb_ynode *over, char **err)
{
    for (size_t i = 0; i < over->n; i++) {
        const kb_yentry *oe = &over->items[i];
        if (strcmp(oe->key, "*") == 0) {
            if (dst->type == KB_Y_MAP && dst->n == 0)
                continue; /* a list the document does not have: nothing to reach */
            if (dst->type != KB_Y_SEQ) {
                char where[512];
                kb_ymark_format(&oe->key_mark, where, sizeof where);
                *err = kb_asprintf("%s: %s.*: `*` stands for every element of a list, but %s is not a list",
                                   where, dst->path && dst->path[0] ? dst->path : "(the document)",
                                   dst->path && dst->path[0] ? dst->path : "the document");
                return false;
            }
            for (size_t k = 0; k < dst->n; k++)
                if (!lay_value(o, &dst->items[k].val, oe->val, err))
                    return false;
            continue;
        }
        if (dst->type != KB_Y_MAP) {
            char where[512];
            kb_ymark_format(&oe->key_mark, where, sizeof where);
            *err = kb_asprintf("%s: %s: a list's elements are reached with `*`, not '%s'", where,
                               dst->path && dst->path[0] ? dst->path : "(the document)", oe->key);
            return false;
        }
        kb_yentry *de = NULL;
        for (size_t k = 0; k < dst->n && !de; k++)
            if (strcmp(dst->items[k].key, oe->key) == 0)
                de = &dst->items[k];
        if (!de) {
            de = kb_ynode_append(dst);
            de->key = kb_xstrdup(oe->key);
            de->val = kb_ynode_new(KB_Y_MAP, moved(o, oe->val->mark));
        }
        de->key_mark = moved(o, oe->key_mark);
        if (!lay_value(o, &de->val, oe->val, err))
            return false;
    }
    return true;
}

bool kb_ydoc_overlay(kb_ydoc *doc, const kb_ynode *over, const kb_ydoc *owner, char **err)
{
    overlay o = {owner, kb_xcalloc(owner->nsources ? owner->nsources : 1, sizeof(char *))};
    for (size_t i = 0; i < owner->nsources; i++)
        o.kept[i] = kb_ydoc_add_source(doc, owner->sources[i]);
    bool ok = over->type != KB_Y_MAP || lay(&o, doc->root, over, err);
    free(o.kept);
    kb_ynode_set_paths(doc->root, "");
    return ok;
}
