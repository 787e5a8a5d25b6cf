/* YAML tree built from libyaml's event stream, with positions and key paths:
 * parsing, merging a file over its base, freeing. Overrides are applied by
 * ydoc_set.c, readers go through ydoc_read.c. */
#include "topo/ydoc_internal.h"

#include "core/util.h"
#include "topo/strmap.h"

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

typedef struct path_seg {
    const char *key;
    size_t index;
} path_seg;

typedef struct parse {
    yaml_parser_t parser;
    const char *src;
    char *err;
    size_t nodes; /* values built so far (KB_YDOC_MAX_NODES) */
    /* The key path to the value being built, for errors found while
     * parsing: segment i is the key (or, when NULL, the list index) under
     * which the node at depth i + 1 sits. */
    path_seg seg[KB_YDOC_MAX_DEPTH + 1];
    const char *at; /* the key path of the root (an override's key), or NULL */
} parse;

/* "a.b[2].c" of the first `depth` segments (newly allocated). */
static char *parse_path(const parse *p, int depth)
{
    kb_buf b = {0};
    if (p->at && p->at[0])
        kb_buf_printf(&b, "%s", p->at);
    for (int i = 0; i < depth; i++) {
        if (p->seg[i].key)
            kb_buf_printf(&b, "%s%s", b.len ? "." : "", p->seg[i].key);
        else
            kb_buf_printf(&b, "[%zu]", p->seg[i].index);
    }
    return kb_buf_take(&b);
}

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

/* A tag on a value is refused: a topology value is typed by the key it sits
 * under, and a tag the loader ignored would be silently ignored
 * (docs/decisions.md). Anchors are harmless without aliases, which are
 * refused where they are used. Returns false with p->err set. */
static bool plain_value(parse *p, const yaml_event_t *ev, kb_ymark mark)
{
    const yaml_char_t *tag = NULL;
    if (ev->type == YAML_SCALAR_EVENT)
        tag = ev->data.scalar.tag;
    else if (ev->type == YAML_MAPPING_START_EVENT)
        tag = ev->data.mapping_start.tag;
    else if (ev->type == YAML_SEQUENCE_START_EVENT)
        tag = ev->data.sequence_start.tag;
    if (!tag)
        return true;
    /* Core-schema tags come resolved: show them as written (!!str). */
    const char *t = (const char *)tag, *core = "tag:yaml.org,2002:";
    bool is_core = strncmp(t, core, strlen(core)) == 0;
    p->err = kb_asprintf("%s:%d:%d: YAML tag '%s%.200s' is not supported in topology files (a value is "
                         "typed by its key; quote a value to make it a string)",
                         p->src, mark.line, mark.col, is_core ? "!!" : "", is_core ? t + strlen(core) : t);
    return false;
}

/* Counts a value against KB_YDOC_MAX_NODES. */
static bool count_node(parse *p, kb_ymark mark)
{
    if (++p->nodes <= KB_YDOC_MAX_NODES)
        return true;
    p->err = kb_asprintf("%s:%d:%d: more than %u values (scalars, maps and lists) in one document; "
                         "a topology file may have at most %u", p->src, mark.line, mark.col,
                         KB_YDOC_MAX_NODES, KB_YDOC_MAX_NODES);
    return false;
}

/* The code point of the control character at v[i] (n bytes), or -1: C0
 * controls but tab and line feed, DEL, C1 controls (NEL among them), and the
 * line and paragraph separators. YAML reads NEL, U+2028 and U+2029 as line
 * breaks, so the same text written back (a comment of --dump-config, a
 * quoted value) would not read back the same. */
static long control_at(const unsigned char *v, size_t i, size_t n)
{
    if ((v[i] < 0x20 && v[i] != '\t' && v[i] != '\n') || v[i] == 0x7f)
        return v[i];
    if (v[i] == 0xc2 && i + 1 < n && v[i + 1] >= 0x80 && v[i + 1] <= 0x9f)
        return v[i + 1];
    if (v[i] == 0xe2 && i + 2 < n && v[i + 1] == 0x80 && (v[i + 2] == 0xa8 || v[i + 2] == 0xa9))
        return 0x2000 + v[i + 2] - 0x80;
    return -1;
}

static bool no_control(parse *p, const unsigned char *v, size_t len, kb_ymark mark, int depth, bool is_key)
{
    for (size_t i = 0; i < len; i++) {
        long cp = control_at(v, i, len);
        if (cp < 0)
            continue;
        kb_buf shown = {0}; /* at most 80 bytes, controls as '?' */
        for (size_t j = 0; j < len && j < 80; j++)
            kb_buf_printf(&shown, "%c", v[j] < 0x20 || v[j] == 0x7f ? '?' : v[j]);
        char *text = kb_buf_take(&shown), *path = parse_path(p, depth);
        char *where = path[0] ? kb_asprintf("%s: ", path) : kb_xstrdup("");
        p->err = kb_asprintf("%s:%d:%d: %s%s \"%s%s\" contains the control character U+%04lX (byte %zu); a "
                             "topology string may hold tabs and line feeds but no other control character",
                             p->src, mark.line, mark.col, where, is_key ? "the key" : "the value", text,
                             len > 80 ? "..." : "", cp, i + 1);
        free(text);
        free(path);
        free(where);
        return false;
    }
    return true;
}

/* A key or value fits the limit and holds no NUL. The text was checked for
 * raw NUL bytes (check_text), but an escape ("my\0topology", "\x00",
 * "\u0000") makes one inside a quoted scalar, and every reader takes the
 * text as a C string, so it would silently end there. `depth` is the
 * value's (its key path is the parse's first `depth` segments); a key is
 * named by its own text after that path. */
static bool scalar_fits(parse *p, const yaml_event_t *ev, kb_ymark mark, int depth, bool is_key)
{
    size_t len = ev->data.scalar.length;
    if (len > KB_YDOC_MAX_SCALAR) {
        p->err = kb_asprintf("%s:%d:%d: a key or value of %zu bytes; at most %u bytes are allowed", p->src,
                             mark.line, mark.col, len, KB_YDOC_MAX_SCALAR);
        return false;
    }
    const unsigned char *v = ev->data.scalar.value;
    if (!memchr(v, 0, len))
        return no_control(p, v, len, mark, depth, is_key);
    kb_buf shown = {0}; /* the text with its NULs written \0, at most 80 bytes of it */
    for (size_t i = 0; i < len && i < 80; i++)
        if (v[i])
            kb_buf_printf(&shown, "%c", v[i]);
        else
            kb_buf_printf(&shown, "%s", "\\0");
    char *text = kb_buf_take(&shown), *path = parse_path(p, depth);
    char *where = path[0] ? kb_asprintf("%s: ", path) : kb_xstrdup("");
    p->err = kb_asprintf("%s:%d:%d: %s%s \"%s%s\" contains a NUL character (an escape such as \\0 or "
                         "\\x00); a topology string may not (it would end the string there)", p->src, mark.line,
                         mark.col, where, is_key ? "the key" : "the value", text, len > 80 ? "..." : "");
    free(text);
    free(path);
    free(where);
    return false;
}

/* Duplicate keys of a map: a linear scan while it is small, then a hash
 * index (a map of 100,000 keys must not take 10^10 comparisons). Returns
 * the earlier entry with `key`, or NULL after recording it. */
#define DUP_SCAN 8
static kb_yentry *dup_key(kb_ynode *n, kb_strmap *idx, const char *key)
{
    size_t last = n->n - 1; /* the entry being added; its key is not set yet */
    if (last < DUP_SCAN) {
        for (size_t i = 0; i < last; i++)
            if (strcmp(n->items[i].key, key) == 0)
                return &n->items[i];
        return NULL;
    }
    if (last == DUP_SCAN)
        for (size_t i = 0; i < last; i++)
            kb_strmap_put(idx, n->items[i].key, (uint32_t)i);
    int64_t i = kb_strmap_get(idx, key);
    return i >= 0 ? &n->items[i] : NULL;
}

/* Builds the node that starts with `ev` (consumed), reading to its end;
 * `depth` is the nesting of the maps and lists around it. */
static kb_ynode *build(parse *p, yaml_event_t *ev, int depth)
{
    kb_ymark mark = mark_of(p, ev->start_mark);
    if (ev->type != YAML_ALIAS_EVENT && (!plain_value(p, ev, mark) || !count_node(p, mark)))
        return NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        if (!scalar_fits(p, ev, mark, depth, false))
            return NULL;
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
        if (depth >= KB_YDOC_MAX_DEPTH) {
            p->err = kb_asprintf("%s:%d:%d: maps and lists nested more than %d deep; a topology file "
                                 "may nest at most %d", p->src, mark.line, mark.col, KB_YDOC_MAX_DEPTH,
                                 KB_YDOC_MAX_DEPTH);
            return NULL;
        }
        bool is_map = ev->type == YAML_MAPPING_START_EVENT;
        kb_ynode *n = kb_ynode_new(is_map ? KB_Y_MAP : KB_Y_SEQ, mark);
        kb_strmap keys = {0};
        for (;;) {
            yaml_event_t child;
            if (!next_event(p, &child))
                break;
            if (child.type == YAML_SEQUENCE_END_EVENT || child.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&child);
                kb_strmap_free(&keys);
                return n;
            }
            kb_yentry *e = kb_ynode_append(n);
            if (is_map) {
                kb_ymark km = mark_of(p, child.start_mark);
                if (child.type != YAML_SCALAR_EVENT) {
                    p->err = kb_asprintf("%s:%d:%d: map keys must be plain names", p->src, km.line,
                                         km.col);
                    yaml_event_delete(&child);
                    break;
                }
                if (!plain_value(p, &child, km) || !scalar_fits(p, &child, km, depth, true)) {
                    yaml_event_delete(&child);
                    break;
                }
                const char *key = (const char *)child.data.scalar.value;
                const kb_yentry *first = dup_key(n, &keys, key);
                if (first) {
                    p->err = kb_asprintf("%s:%d:%d: duplicate key '%s' (first at line %d)", p->src,
                                         km.line, km.col, key, first->key_mark.line);
                    yaml_event_delete(&child);
                    break;
                }
                e->key = kb_xstrdup(key);
                e->key_mark = km;
                p->seg[depth].key = e->key;
                if (n->n > DUP_SCAN)
                    kb_strmap_put(&keys, e->key, (uint32_t)(n->n - 1));
                yaml_event_delete(&child);
                if (!next_event(p, &child))
                    break;
            }
            if (!is_map)
                p->seg[depth] = (path_seg){NULL, n->n - 1};
            e->val = build(p, &child, depth + 1);
            yaml_event_delete(&child);
            if (!e->val)
                break;
        }
        /* an error (the entry being added may lack its key or value: node_free copes) */
        kb_strmap_free(&keys);
        node_free(n);
        return NULL;
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
        root = build(p, &ev, 0);
        yaml_event_delete(&ev);
        if (!root)
            return NULL;
    }
    if (!root)
        root = kb_ynode_new(KB_Y_MAP, (kb_ymark){.src = p->src, .line = 1, .col = 1});
    return root;
}

/* Length of the UTF-8 sequence starting at s (at most `left` bytes), or 0
 * if it is not one: overlong forms, surrogates and code points above
 * U+10FFFF are invalid (RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t left)
{
    unsigned c = s[0];
    size_t n;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef)
        n = 3, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    return n;
}

/* The text of a topology is UTF-8 without NUL bytes (libyaml would stop at
 * a NUL or guess another encoding); the error names line:column, counting
 * columns in characters as the YAML parser does. */
static bool check_text(const char *text, size_t len, const char *src, char **err)
{
    const unsigned char *s = (const unsigned char *)text;
    int line = 1, col = 1;
    for (size_t i = 0; i < len;) {
        if (s[i] == 0) {
            *err = kb_asprintf("%s:%d:%d: NUL byte: a topology file is UTF-8 text", src, line, col);
            return false;
        }
        size_t n = utf8_len(s + i, len - i);
        if (!n) {
            *err = kb_asprintf("%s:%d:%d: invalid UTF-8 (byte 0x%02x): a topology file is UTF-8 text", src,
                               line, col, s[i]);
            return false;
        }
        if (s[i] == '\n' || (s[i] == '\r' && (i + 1 == len || s[i + 1] != '\n')))
            line++, col = 1;
        else if (s[i] != '\r')
            col++;
        i += n;
    }
    return true;
}

kb_ynode *kb_ydoc_parse_text(const char *text, size_t len, const char *src, const char *at, char **err)
{
    if (len > KB_YDOC_MAX_FILE_BYTES) {
        *err = kb_asprintf("%s: %zu bytes of YAML; at most %u (32 MiB) are allowed", src, len,
                           KB_YDOC_MAX_FILE_BYTES);
        return NULL;
    }
    if (!check_text(text, len, src, err))
        return NULL;
    parse p = {.src = src, .at = at};
    yaml_parser_initialize(&p.parser);
    yaml_parser_set_input_string(&p.parser, (const unsigned char *)text, len);
    yaml_parser_set_encoding(&p.parser, YAML_UTF8_ENCODING);
    kb_ynode *root = parse_stream(&p);
    yaml_parser_delete(&p.parser);
    if (!root)
        *err = p.err;
    else
        free(p.err);
    return root;
}

static kb_ydoc *load_text(const char *text, size_t len, const char *name, char **err)
{
    kb_ydoc *doc = kb_xcalloc(1, sizeof *doc);
    const char *src = kb_ydoc_add_source(doc, name);
    doc->root = kb_ydoc_parse_text(text, len, src, NULL, err);
    if (!doc->root) {
        kb_ydoc_free(doc);
        return NULL;
    }
    kb_ynode_set_paths(doc->root, "");
    return doc;
}

kb_ydoc *kb_ydoc_load_string(const char *text, const char *name, char **err)
{
    return load_text(text, strlen(text), name, err);
}

kb_ydoc *kb_ydoc_load_file(const char *path, char **err)
{
    size_t len = 0;
    char *text = kb_ydoc_read_file(path, &len, err);
    if (!text)
        return NULL;
    kb_ydoc *doc = load_text(text, len, path, err);
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

/* Lays the entries of map src over map dst. Keys are found through a hash
 * index, so merging maps of many keys stays linear. */
static void merge_into(kb_ynode *dst, kb_ynode *src)
{
    kb_strmap idx = {0};
    for (size_t k = 0; k < dst->n; k++)
        kb_strmap_put(&idx, dst->items[k].key, (uint32_t)k);
    for (size_t i = 0; i < src->n; i++) {
        kb_yentry *se = &src->items[i];
        int64_t k = kb_strmap_get(&idx, se->key);
        kb_yentry *de = k >= 0 ? &dst->items[k] : NULL;
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
            kb_strmap_put(&idx, ne->key, (uint32_t)(dst->n - 1));
        }
        se->val = NULL;
    }
    kb_strmap_free(&idx);
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
