/* YAML tree built from libyaml's event stream, with positions and key paths. */
#include "topo/ydoc.h"

#include "core/util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

struct kb_ydoc {
    kb_ynode *root;
    char **sources; /* file name and override texts, referenced by marks */
    size_t nsources;
};

static const char *add_source(kb_ydoc *doc, const char *src)
{
    doc->sources = kb_xrealloc(doc->sources, (doc->nsources + 1) * sizeof *doc->sources);
    doc->sources[doc->nsources] = kb_xstrdup(src);
    return doc->sources[doc->nsources++];
}

static kb_ynode *node_new(kb_ytype type, kb_ymark mark)
{
    kb_ynode *n = kb_xcalloc(1, sizeof *n);
    n->type = type;
    n->mark = mark;
    return n;
}

static void node_free(kb_ynode *n)
{
    if (!n)
        return;
    for (size_t i = 0; i < n->n; i++) {
        free(n->items[i].key);
        node_free(n->items[i].val);
    }
    /* (merge_into leaves moved entries with NULL key and value) */
    for (size_t i = 0; i < n->nasked; i++)
        free(n->asked[i]);
    free(n->asked);
    free(n->items);
    free(n->text);
    free(n->path);
    free(n);
}

static kb_yentry *node_append(kb_ynode *n)
{
    if (n->n == n->cap) {
        n->cap = n->cap ? n->cap * 2 : 4;
        n->items = kb_xrealloc(n->items, n->cap * sizeof *n->items);
    }
    kb_yentry *e = &n->items[n->n++];
    memset(e, 0, sizeof *e);
    return e;
}

/* Sets the key path of n and, recursively, of its children. */
static void set_paths(kb_ynode *n, const char *path)
{
    free(n->path);
    n->path = kb_xstrdup(path);
    for (size_t i = 0; i < n->n; i++) {
        char *child = n->type == KB_Y_MAP
                          ? (path[0] ? kb_asprintf("%s.%s", path, n->items[i].key)
                                     : kb_xstrdup(n->items[i].key))
                          : kb_asprintf("%s[%zu]", path, i);
        set_paths(n->items[i].val, child);
        free(child);
    }
}

/* ---- parsing ---- */

typedef struct parse {
    yaml_parser_t parser;
    const char *src;
    char *err;
} parse;

static kb_ymark mark_of(const parse *p, yaml_mark_t m)
{
    return (kb_ymark){.src = p->src, .line = (int)m.line + 1, .col = (int)m.column + 1};
}

static bool next_event(parse *p, yaml_event_t *ev)
{
    if (yaml_parser_parse(&p->parser, ev))
        return true;
    const yaml_parser_t *y = &p->parser;
    yaml_mark_t m = y->problem_mark;
    if (y->context)
        p->err = kb_asprintf("%s:%zu:%zu: YAML syntax error: %s (%s)", p->src, m.line + 1,
                             m.column + 1, y->problem ? y->problem : "invalid input", y->context);
    else
        p->err = kb_asprintf("%s:%zu:%zu: YAML syntax error: %s", p->src, m.line + 1, m.column + 1,
                             y->problem ? y->problem : "invalid input");
    return false;
}

/* Builds the node that starts with `ev` (consumed), reading to its end. */
static kb_ynode *build(parse *p, yaml_event_t *ev)
{
    kb_ymark mark = mark_of(p, ev->start_mark);
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        kb_ynode *n = node_new(KB_Y_SCALAR, mark);
        n->text = kb_xstrdup((const char *)ev->data.scalar.value);
        n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
        return n;
    }
    case YAML_ALIAS_EVENT:
        p->err = kb_asprintf("%s:%d:%d: YAML aliases (*name) are not supported in topology files",
                             p->src, mark.line, mark.col);
        return NULL;
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        bool is_map = ev->type == YAML_MAPPING_START_EVENT;
        kb_ynode *n = node_new(is_map ? KB_Y_MAP : KB_Y_SEQ, mark);
        for (;;) {
            yaml_event_t child;
            if (!next_event(p, &child)) {
                node_free(n);
                return NULL;
            }
            if (child.type == YAML_SEQUENCE_END_EVENT || child.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&child);
                return n;
            }
            kb_yentry *e = node_append(n);
            if (is_map) {
                kb_ymark km = mark_of(p, child.start_mark);
                if (child.type != YAML_SCALAR_EVENT) {
                    p->err = kb_asprintf("%s:%d:%d: map keys must be plain names", p->src, km.line,
                                         km.col);
                    yaml_event_delete(&child);
                    node_free(n);
                    return NULL;
                }
                const char *key = (const char *)child.data.scalar.value;
                for (size_t i = 0; i + 1 < n->n; i++)
                    if (strcmp(n->items[i].key, key) == 0) {
                        p->err = kb_asprintf("%s:%d:%d: duplicate key '%s' (first at line %d)",
                                             p->src, km.line, km.col, key,
                                             n->items[i].key_mark.line);
                        yaml_event_delete(&child);
                        n->n--;
                        node_free(n);
                        return NULL;
                    }
                e->key = kb_xstrdup(key);
                e->key_mark = km;
                yaml_event_delete(&child);
                if (!next_event(p, &child)) {
                    node_free(n);
                    return NULL;
                }
            }
            e->val = build(p, &child);
            yaml_event_delete(&child);
            if (!e->val) {
                node_free(n);
                return NULL;
            }
        }
    }
    default:
        p->err = kb_asprintf("%s:%d:%d: unexpected YAML event", p->src, mark.line, mark.col);
        return NULL;
    }
}

/* Parses the single document of the stream into a node (an empty map for
 * an empty stream). */
static kb_ynode *parse_stream(parse *p)
{
    kb_ynode *root = NULL;
    for (;;) {
        yaml_event_t ev;
        if (!next_event(p, &ev)) {
            node_free(root);
            return NULL;
        }
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (t == YAML_DOCUMENT_START_EVENT) {
            if (root) {
                p->err = kb_asprintf("%s:%zu:%zu: only one YAML document is allowed", p->src,
                                     ev.start_mark.line + 1, ev.start_mark.column + 1);
                yaml_event_delete(&ev);
                node_free(root);
                return NULL;
            }
            yaml_event_delete(&ev);
            continue;
        }
        root = build(p, &ev);
        yaml_event_delete(&ev);
        if (!root)
            return NULL;
    }
    if (!root)
        root = node_new(KB_Y_MAP, (kb_ymark){.src = p->src, .line = 1, .col = 1});
    return root;
}

static kb_ynode *parse_text(const char *text, size_t len, const char *src, char **err)
{
    parse p = {.src = src};
    yaml_parser_initialize(&p.parser);
    yaml_parser_set_input_string(&p.parser, (const unsigned char *)text, len);
    kb_ynode *root = parse_stream(&p);
    yaml_parser_delete(&p.parser);
    if (!root)
        *err = p.err;
    else
        free(p.err);
    return root;
}

kb_ydoc *kb_ydoc_load_string(const char *text, const char *name, char **err)
{
    kb_ydoc *doc = kb_xcalloc(1, sizeof *doc);
    const char *src = add_source(doc, name);
    doc->root = parse_text(text, strlen(text), src, err);
    if (!doc->root) {
        kb_ydoc_free(doc);
        return NULL;
    }
    set_paths(doc->root, "");
    return doc;
}

kb_ydoc *kb_ydoc_load_file(const char *path, char **err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err = kb_asprintf("%s: cannot open topology file: %s", path, strerror(errno));
        return NULL;
    }
    kb_buf b = {0};
    char chunk[8192];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0)
        kb_buf_printf(&b, "%.*s", (int)got, chunk);
    bool bad = ferror(f) != 0;
    fclose(f);
    char *text = kb_buf_take(&b);
    kb_ydoc *doc = NULL;
    if (bad)
        *err = kb_asprintf("%s: read error", path);
    else
        doc = kb_ydoc_load_string(text, path, err);
    free(text);
    return doc;
}

void kb_ydoc_free(kb_ydoc *doc)
{
    if (!doc)
        return;
    if (doc->root)
        node_free(doc->root);
    for (size_t i = 0; i < doc->nsources; i++)
        free(doc->sources[i]);
    free(doc->sources);
    free(doc);
}

kb_ynode *kb_ydoc_root(kb_ydoc *doc) { return doc->root; }

/* ---- merging ---- */

static void merge_into(kb_ynode *dst, kb_ynode *src)
{
    for (size_t i = 0; i < src->n; i++) {
        kb_yentry *se = &src->items[i];
        kb_yentry *de = NULL;
        for (size_t k = 0; k < dst->n && !de; k++)
            if (strcmp(dst->items[k].key, se->key) == 0)
                de = &dst->items[k];
        if (de && de->val->type == KB_Y_MAP && se->val->type == KB_Y_MAP) {
            /* Errors about the merged map point where the user last wrote into it. */
            de->val->mark = se->val->mark;
            de->key_mark = se->key_mark;
            merge_into(de->val, se->val);
            continue;
        }
        if (de) {
            node_free(de->val);
            de->val = se->val;
            de->key_mark = se->key_mark;
        } else {
            kb_yentry *ne = node_append(dst);
            ne->key = se->key;
            ne->key_mark = se->key_mark;
            ne->val = se->val;
            se->key = NULL;
        }
        se->val = NULL;
    }
}

void kb_ydoc_merge(kb_ydoc *base, kb_ydoc *over)
{
    if (base->root->type == KB_Y_MAP && over->root->type == KB_Y_MAP) {
        merge_into(base->root, over->root);
    } else {
        node_free(base->root);
        base->root = over->root;
        over->root = NULL;
    }
    /* Marks point into over's source strings: keep them. */
    base->sources = kb_xrealloc(base->sources, (base->nsources + over->nsources) * sizeof *base->sources);
    for (size_t i = 0; i < over->nsources; i++)
        base->sources[base->nsources++] = over->sources[i];
    over->nsources = 0;
    kb_ydoc_free(over);
    set_paths(base->root, "");
}

char *kb_ydoc_take_scalar(kb_ydoc *doc, const char *key, kb_ymark *mark)
{
    kb_ynode *r = doc->root;
    if (r->type != KB_Y_MAP)
        return NULL;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->items[i].key, key) != 0)
            continue;
        kb_ynode *v = r->items[i].val;
        char *text = v->type == KB_Y_SCALAR ? kb_xstrdup(v->text) : NULL;
        if (mark)
            *mark = v->mark;
        free(r->items[i].key);
        node_free(v);
        memmove(&r->items[i], &r->items[i + 1], (r->n - i - 1) * sizeof *r->items);
        r->n--;
        return text ? text : kb_xstrdup("");
    }
    return NULL;
}

/* ---- overrides ---- */

static bool parse_index(const char *s, size_t *out)
{
    if (!*s)
        return false;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || errno || s[0] == '-' || s[0] == '+')
        return false;
    *out = v;
    return true;
}

static void mark_all(kb_ynode *n, kb_ymark mark)
{
    n->mark = mark;
    for (size_t i = 0; i < n->n; i++) {
        n->items[i].key_mark = mark;
        mark_all(n->items[i].val, mark);
    }
}

static bool is_null_scalar(const kb_ynode *n)
{
    if (!n->plain)
        return false;
    const char *t = n->text ? n->text : "";
    return !*t || strcmp(t, "~") == 0 || strcmp(t, "null") == 0 || strcmp(t, "Null") == 0 ||
           strcmp(t, "NULL") == 0;
}

bool kb_ydoc_set(kb_ydoc *doc, const char *assignment, char **err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        *err = kb_asprintf("--set %s: expected key.path=value", assignment);
        return false;
    }
    char *src_text = kb_asprintf("--set %s", assignment);
    const char *src = add_source(doc, src_text);
    free(src_text);
    kb_ymark mark = {.src = src};

    char *value_err = NULL;
    const char *value = eq + 1;
    kb_ynode *val = parse_text(value, strlen(value), src, &value_err);
    if (!val) {
        *err = value_err;
        return false;
    }
    /* A bare word or number parses as a scalar; an empty value is an empty string. */
    if (val->type == KB_Y_MAP && val->n == 0 && !*value) {
        node_free(val);
        val = node_new(KB_Y_SCALAR, mark);
        val->text = kb_xstrdup("");
    }
    /* Every node of the override carries the override as its source. */
    mark_all(val, mark);

    char *keys = kb_xstrdup(assignment);
    keys[eq - assignment] = '\0';
    kb_ynode *cur = doc->root;
    char *save = NULL;
    char *tok = strtok_r(keys, ".", &save);
    bool ok = true;
    while (tok) {
        char *next = strtok_r(NULL, ".", &save);
        kb_ynode **slot = NULL;
        if (cur->type == KB_Y_MAP) {
            for (size_t i = 0; i < cur->n && !slot; i++)
                if (strcmp(cur->items[i].key, tok) == 0)
                    slot = &cur->items[i].val;
            if (!slot) {
                kb_yentry *e = node_append(cur);
                e->key = kb_xstrdup(tok);
                e->key_mark = mark;
                e->val = node_new(KB_Y_MAP, mark);
                slot = &e->val;
            }
        } else if (cur->type == KB_Y_SEQ) {
            size_t idx;
            if (!parse_index(tok, &idx) || idx >= cur->n) {
                *err = kb_asprintf("%s: '%s' is not an index of %s (a list of %zu)", src, tok,
                                   cur->path[0] ? cur->path : "the document", cur->n);
                ok = false;
                break;
            }
            slot = &cur->items[idx].val;
        } else {
            *err = kb_asprintf("%s: %s is a single value (at %s:%d:%d), it has no key '%s'", src,
                               cur->path, cur->mark.src, cur->mark.line, cur->mark.col, tok);
            ok = false;
            break;
        }
        if (!next) {
            node_free(*slot);
            *slot = val;
            val = NULL;
        } else if ((*slot)->type == KB_Y_SCALAR) {
            /* Only a key written empty/null may grow keys; a real value is never replaced. */
            if (!is_null_scalar(*slot)) {
                *err = kb_asprintf("%s: %s is a single value (at %s:%d:%d), it has no key '%s'",
                                   src, (*slot)->path, (*slot)->mark.src, (*slot)->mark.line,
                                   (*slot)->mark.col, next);
                ok = false;
                break;
            }
            node_free(*slot);
            *slot = node_new(KB_Y_MAP, mark);
        }
        cur = *slot;
        tok = next;
    }
    free(keys);
    node_free(val);
    set_paths(doc->root, "");
    return ok;
}

/* ---- reading ---- */

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
    kb_ynode *n = node_new(KB_Y_MAP, parent ? parent->mark : (kb_ymark){.src = ""});
    n->absent = true;
    n->path = parent && parent->path && parent->path[0] ? kb_asprintf("%s.%s", parent->path, key)
                                                         : kb_xstrdup(key);
    return n;
}

void kb_ynode_free(kb_ynode *n) { node_free(n); }

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
