/* YAML tree built from libyaml's event stream, with positions and key paths:
 * parsing, merging a file over its base, freeing. Overrides are applied by
 * ydoc_set.c, readers go through ydoc_read.c. */
#include "topo/ydoc_internal.h"

#include "core/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

const char *kb_ydoc_add_source(kb_ydoc *doc, const char *src)
{
    doc->sources = kb_xrealloc(doc->sources, (doc->nsources + 1) * sizeof *doc->sources);
    doc->sources[doc->nsources] = kb_xstrdup(src);
    return doc->sources[doc->nsources++];
}

kb_ynode *kb_ynode_new(kb_ytype type, kb_ymark mark)
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

kb_yentry *kb_ynode_append(kb_ynode *n)
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
void kb_ynode_set_paths(kb_ynode *n, const char *path)
{
    free(n->path);
    n->path = kb_xstrdup(path);
    for (size_t i = 0; i < n->n; i++) {
        char *child = n->type == KB_Y_MAP
                          ? (path[0] ? kb_asprintf("%s.%s", path, n->items[i].key)
                                     : kb_xstrdup(n->items[i].key))
                          : kb_asprintf("%s[%zu]", path, i);
        kb_ynode_set_paths(n->items[i].val, child);
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
        kb_ynode *n = kb_ynode_new(KB_Y_SCALAR, mark);
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
        kb_ynode *n = kb_ynode_new(is_map ? KB_Y_MAP : KB_Y_SEQ, mark);
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
            kb_yentry *e = kb_ynode_append(n);
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
        root = kb_ynode_new(KB_Y_MAP, (kb_ymark){.src = p->src, .line = 1, .col = 1});
    return root;
}

kb_ynode *kb_ydoc_parse_text(const char *text, size_t len, const char *src, char **err)
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
    const char *src = kb_ydoc_add_source(doc, name);
    doc->root = kb_ydoc_parse_text(text, strlen(text), src, err);
    if (!doc->root) {
        kb_ydoc_free(doc);
        return NULL;
    }
    kb_ynode_set_paths(doc->root, "");
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

void kb_ynode_free(kb_ynode *n) { node_free(n); }

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
            kb_yentry *ne = kb_ynode_append(dst);
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
    kb_ynode_set_paths(base->root, "");
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
