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

/* The unknown keys found so far: the first KB_YDOC_MAX_REPORTED as lines
 * of the message, the rest only counted. */
typedef struct unknown_report {
    kb_buf msg;
    size_t count;
} unknown_report;

static bool asked_for(const kb_ynode *map, const char *key)
{
    for (size_t k = 0; k < map->nasked; k++)
        if (strcmp(map->asked[k], key) == 0)
            return true;
    return false;
}

static void unknown_in_map(const kb_ynode *map, unknown_report *r)
{
    char *known = NULL;
    for (size_t i = 0; i < map->n; i++) {
        const kb_yentry *e = &map->items[i];
        /* used, or known but deliberately not read: not an error */
        if (e->used || asked_for(map, e->key))
            continue;
        if (r->count++ >= KB_YDOC_MAX_REPORTED)
            continue;
        if (!known) {
            kb_buf b = {0};
            for (size_t k = 0; k < map->nasked; k++)
                kb_buf_printf(&b, "%s%s", k ? ", " : "", map->asked[k]);
            known = kb_buf_take(&b);
        }
        char where[512];
        kb_ymark_format(&e->key_mark, where, sizeof where);
        kb_buf_printf(&r->msg, "%s%s: %s: unknown key (%s%s)", r->msg.len ? "\n" : "", where, e->val->path,
                      map->nasked ? "known keys here: " : "nothing is expected here", known);
    }
    free(known);
}

static char *unknown_message(unknown_report *r)
{
    if (!r->count)
        return NULL;
    if (r->count > KB_YDOC_MAX_REPORTED)
        kb_buf_printf(&r->msg, "\n... and %zu more unknown keys (%zu in all)", r->count - KB_YDOC_MAX_REPORTED,
                      r->count);
    return kb_buf_take(&r->msg);
}

char *kb_ymap_unknown(const kb_ynode *map)
{
    if (!map || map->type != KB_Y_MAP)
        return NULL;
    unknown_report r = {0};
    unknown_in_map(map, &r);
    return unknown_message(&r);
}

/* Every map of the tree, in document order, without recursion (a tree is
 * at most KB_YDOC_MAX_DEPTH deep, but a stack costs nothing). */
static void unknown_in(const kb_ynode *root, unknown_report *r)
{
    typedef struct frame { const kb_ynode *n; size_t next; } frame;
    frame *stack = kb_xmalloc(sizeof *stack);
    size_t depth = 1, cap = 1;
    stack[0] = (frame){root, 0};
    if (root->type == KB_Y_MAP)
        unknown_in_map(root, r);
    while (depth) {
        frame *f = &stack[depth - 1];
        if (f->next == f->n->n) {
            depth--;
            continue;
        }
        const kb_yentry *e = &f->n->items[f->next++];
        /* Children of keys nobody consumed were reported with their key. */
        if (f->n->type == KB_Y_MAP && !e->used)
            continue;
        if (e->val->type == KB_Y_MAP)
            unknown_in_map(e->val, r);
        if (e->val->type == KB_Y_SCALAR)
            continue;
        if (depth == cap)
            stack = kb_xrealloc(stack, (cap *= 2) * sizeof *stack);
        stack[depth++] = (frame){e->val, 0};
    }
    free(stack);
}

char *kb_ydoc_unknown(const kb_ydoc *doc)
{
    unknown_report r = {0};
    unknown_in(doc->root, &r);
    return unknown_message(&r);
}

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
    /* 010 is 8 to strtoll and to YAML 1.1 but 10 to YAML 1.2 and to most
     * readers: a leading zero is refused rather than read one way. */
    const char *digits = n->type == KB_Y_SCALAR && n->text ? n->text + (n->text[0] == '-' || n->text[0] == '+') : "";
    if (n->type == KB_Y_SCALAR && n->plain && digits[0] == '0' && digits[1] >= '0' && digits[1] <= '9') {
        *err = kb_yerr(n, "'%s' has a leading zero (octal or decimal?); write the number without it", n->text);
        return false;
    }
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
