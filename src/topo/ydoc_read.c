/* Reading the YAML tree: map lookups that record what was asked for (so an
 * unknown key can list the known ones), errors that name file:line:col and
 * the key path, the search for keys no reader consumed, and typed views of
 * a node. The topology's readers (read.c) are built on these. */
#include "topo/ydoc_internal.h"

#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void know(kb_ynode *map, const char *key)
{
    for (size_t i = 0; i < map->nasked; i++)
        if (strcmp(map->asked[i], key) == 0)
            return;
    map->asked = kb_xrealloc(map->asked, (map->nasked + 1) * sizeof *map->asked);
    map->asked[map->nasked++] = kb_xstrdup(key);
}

void kb_ymap_know(kb_ynode *map, const char *key)
{
    if (map && map->type == KB_Y_MAP)
        know(map, key);
}

kb_ynode *kb_ymap_get(kb_ynode *map, const char *key)
{
    if (!map || map->type != KB_Y_MAP)
        return NULL;
    know(map, key);
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->items[i].key, key) == 0) {
            map->items[i].used = true;
            return map->items[i].val;
        }
    return NULL;
}

kb_ynode *kb_ynode_absent(const kb_ynode *parent, const char *key)
{
    kb_ynode *n = kb_ynode_new(KB_Y_MAP, parent ? parent->mark : (kb_ymark){.src = ""});
    n->absent = true;
    n->path = parent && parent->path && parent->path[0] ? kb_asprintf("%s.%s", parent->path, key)
                                                         : kb_xstrdup(key);
    return n;
}

void kb_ymark_format(const kb_ymark *m, char *buf, size_t n)
{
    if (m->line > 0)
        snprintf(buf, n, "%s:%d:%d", m->src, m->line, m->col);
    else
        snprintf(buf, n, "%s", m->src);
}

static char *verr(const kb_ymark *m, const char *path, const char *fmt, va_list ap)
{
    char where[512];
    kb_ymark_format(m, where, sizeof where);
    char *msg = kb_vasprintf(fmt, ap);
    char *out = path && path[0] ? kb_asprintf("%s: %s: %s", where, path, msg)
                                : kb_asprintf("%s: %s", where, msg);
    free(msg);
    return out;
}

char *kb_yerr(const kb_ynode *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *out = verr(&n->mark, n->path, fmt, ap);
    va_end(ap);
    return out;
}

char *kb_yerr_key(const kb_ynode *map, const char *key, const char *fmt, ...)
{
    char *path = map->path && map->path[0] ? kb_asprintf("%s.%s", map->path, key) : kb_xstrdup(key);
    va_list ap;
    va_start(ap, fmt);
    char *out = verr(&map->mark, path, fmt, ap);
    va_end(ap);
    free(path);
    return out;
}

char *kb_ymap_unknown(const kb_ynode *map)
{
    if (!map || map->type != KB_Y_MAP)
        return NULL;
    for (size_t i = 0; i < map->n; i++) {
        const kb_yentry *e = &map->items[i];
        if (e->used)
            continue;
        bool asked = false;
        for (size_t k = 0; k < map->nasked && !asked; k++)
            asked = strcmp(map->asked[k], e->key) == 0;
        if (asked) /* known but deliberately not read: not an error */
            continue;
        kb_buf b = {0};
        for (size_t k = 0; k < map->nasked; k++)
            kb_buf_printf(&b, "%s%s", k ? ", " : "", map->asked[k]);
        char *known = kb_buf_take(&b);
        char where[512];
        kb_ymark_format(&e->key_mark, where, sizeof where);
        char *out = map->nasked
                        ? kb_asprintf("%s: %s: unknown key (known keys here: %s)", where,
                                      e->val->path, known)
                        : kb_asprintf("%s: %s: unknown key (nothing is expected here)", where,
                                      e->val->path);
        free(known);
        return out;
    }
    return NULL;
}

static char *unknown_in(const kb_ynode *n)
{
    if (n->type == KB_Y_MAP) {
        char *e = kb_ymap_unknown(n);
        if (e)
            return e;
    }
    for (size_t i = 0; i < n->n; i++) {
        /* Children of keys nobody consumed were reported above. */
        if (n->type == KB_Y_MAP && !n->items[i].used)
            continue;
        char *e = unknown_in(n->items[i].val);
        if (e)
            return e;
    }
    return NULL;
}

char *kb_ydoc_unknown(const kb_ydoc *doc) { return unknown_in(doc->root); }

static const char *type_name(const kb_ynode *n)
{
    switch (n->type) {
    case KB_Y_MAP: return "a map";
    case KB_Y_SEQ: return "a list";
    default: return "a value";
    }
}

bool kb_yas_number(const kb_ynode *n, double *out, char **err)
{
    if (n->type == KB_Y_SCALAR && n->plain && n->text[0]) {
        char *end;
        errno = 0;
        double v = strtod(n->text, &end);
        if (!*end && errno == 0 && isfinite(v)) {
            *out = v;
            return true;
        }
    }
    if (n->type == KB_Y_SCALAR)
        *err = kb_yerr(n, "expected a number, got '%s'", n->text);
    else
        *err = kb_yerr(n, "expected a number, got %s", type_name(n));
    return false;
}

bool kb_yas_int(const kb_ynode *n, int64_t *out, char **err)
{
    if (n->type == KB_Y_SCALAR && n->plain && n->text[0]) {
        char *end;
        errno = 0;
        long long v = strtoll(n->text, &end, 0);
        if (!*end && errno == 0) {
            *out = v;
            return true;
        }
    }
    if (n->type == KB_Y_SCALAR)
        *err = kb_yerr(n, "expected an integer, got '%s'", n->text);
    else
        *err = kb_yerr(n, "expected an integer, got %s", type_name(n));
    return false;
}

bool kb_yas_bool(const kb_ynode *n, bool *out, char **err)
{
    if (n->type == KB_Y_SCALAR && n->plain) {
        if (strcmp(n->text, "true") == 0) {
            *out = true;
            return true;
        }
        if (strcmp(n->text, "false") == 0) {
            *out = false;
            return true;
        }
    }
    *err = n->type == KB_Y_SCALAR ? kb_yerr(n, "expected true or false, got '%s'", n->text)
                                  : kb_yerr(n, "expected true or false, got %s", type_name(n));
    return false;
}

bool kb_yas_string(const kb_ynode *n, const char **out, char **err)
{
    if (n->type == KB_Y_SCALAR) {
        *out = n->text;
        return true;
    }
    *err = kb_yerr(n, "expected a string, got %s", type_name(n));
    return false;
}

bool kb_yas_map(const kb_ynode *n, char **err)
{
    if (n->type == KB_Y_MAP)
        return true;
    /* `key:` with nothing after it reads as an empty map. */
    if (n->type == KB_Y_SCALAR && n->plain && (!n->text[0] || strcmp(n->text, "~") == 0 ||
                                               strcmp(n->text, "null") == 0)) {
        kb_ynode *m = (kb_ynode *)n;
        free(m->text);
        m->text = NULL;
        m->type = KB_Y_MAP;
        return true;
    }
    *err = n->type == KB_Y_SCALAR ? kb_yerr(n, "expected a map (key: value ...), got '%s'", n->text)
                                  : kb_yerr(n, "expected a map (key: value ...), got %s", type_name(n));
    return false;
}

bool kb_yas_seq(const kb_ynode *n, char **err)
{
    if (n->type == KB_Y_SEQ)
        return true;
    *err = n->type == KB_Y_SCALAR ? kb_yerr(n, "expected a list, got '%s'", n->text)
                                  : kb_yerr(n, "expected a list, got %s", type_name(n));
    return false;
}
