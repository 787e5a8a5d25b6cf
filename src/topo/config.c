/* The resolved configuration of a topology: every value the readers
 * resolved, with where it came from, written back as a YAML topology file
 * (--dump-config, t:config()). Reference: docs/topology.md. */
#include "topo/build_internal.h"

#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kb_cfg_num_text(double v, char *buf, size_t n)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, n, "%.1f", v);
        return;
    }
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* YAML text of a value node: scalars as written (quoted if they were),
 * lists of scalars as flow lists. */
static void render(kb_buf *out, const kb_ynode *n)
{
    if (n->type == KB_Y_SCALAR) {
        if (n->plain) {
            kb_buf_printf(out, "%s", n->text ? n->text : "");
            return;
        }
        kb_buf_printf(out, "\"");
        for (const char *p = n->text ? n->text : ""; *p; p++) {
            if (*p == '"' || *p == '\\')
                kb_buf_printf(out, "\\%c", *p);
            else if (*p == '\n')
                kb_buf_printf(out, "\\n");
            else
                kb_buf_printf(out, "%c", *p);
        }
        kb_buf_printf(out, "\"");
        return;
    }
    kb_buf_printf(out, n->type == KB_Y_SEQ ? "[" : "{");
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            kb_buf_printf(out, ", ");
        if (n->type == KB_Y_MAP)
            kb_buf_printf(out, "%s: ", n->items[i].key);
        render(out, n->items[i].val);
    }
    kb_buf_printf(out, n->type == KB_Y_SEQ ? "]" : "}");
}

void kb_cfg_note(kb_builder *b, const kb_ynode *map, const char *key, const kb_ynode *n,
                 const char *dflt)
{
    if (b->err || (!n && !dflt))
        return;
    kb_topo *t = b->t;
    char *path;
    if (n && n->path && n->path[0])
        path = kb_xstrdup(n->path);
    else
        path = map && map->path && map->path[0] ? kb_asprintf("%s.%s", map->path, key)
                                                : kb_xstrdup(key);
    for (size_t i = 0; i < t->ncfg; i++)
        if (strcmp(t->cfg[i].path, path) == 0) { /* read twice: keep the first */
            free(path);
            return;
        }
    kb_buf v = {0};
    char where[512];
    if (n) {
        render(&v, n);
        kb_ymark_format(&n->mark, where, sizeof where);
    } else {
        kb_buf_printf(&v, "%s", dflt);
        snprintf(where, sizeof where, "default");
    }
    if (t->ncfg == t->cap_cfg) {
        t->cap_cfg = t->cap_cfg ? 2 * t->cap_cfg : 128;
        t->cfg = kb_xrealloc(t->cfg, t->cap_cfg * sizeof *t->cfg);
    }
    t->cfg[t->ncfg++] = (kb_cfgrec){path, kb_buf_take(&v), kb_xstrdup(where)};
}

void kb_cfg_free(kb_topo *t)
{
    for (size_t i = 0; i < t->ncfg; i++) {
        free(t->cfg[i].path);
        free(t->cfg[i].value);
        free(t->cfg[i].source);
    }
    free(t->cfg);
    for (size_t i = 0; i < t->noverrides; i++)
        free(t->overrides[i]);
    free(t->overrides);
}

/* ---- writing: records -> a tree of key paths -> YAML ---- */

typedef struct cnode {
    char *seg;  /* key, or NULL for a list element */
    const kb_cfgrec *rec;
    struct cnode **kids;
    size_t n;
} cnode;

static cnode *child(cnode *p, const char *seg, size_t len, bool index)
{
    for (size_t i = 0; i < p->n; i++) {
        cnode *c = p->kids[i];
        if (strlen(c->seg) == len && strncmp(c->seg, seg, len) == 0 && (c->seg[0] == '[') == index)
            return c;
    }
    cnode *c = kb_xcalloc(1, sizeof *c);
    c->seg = kb_asprintf("%.*s", (int)len, seg);
    p->kids = kb_xrealloc(p->kids, (p->n + 1) * sizeof *p->kids);
    p->kids[p->n++] = c;
    return c;
}

/* Splits "a.b[2].c" into a, b, [2], c. */
static void insert(cnode *root, const kb_cfgrec *r)
{
    cnode *cur = root;
    const char *p = r->path;
    while (*p) {
        if (*p == '.') {
            p++;
            continue;
        }
        size_t len;
        bool index = *p == '[';
        if (index)
            len = strcspn(p, "]") + 1;
        else
            len = strcspn(p, ".[");
        cur = child(cur, p, len, index);
        p += len;
    }
    cur->rec = r;
}

static void free_tree(cnode *c)
{
    for (size_t i = 0; i < c->n; i++)
        free_tree(c->kids[i]);
    free(c->kids);
    free(c->seg);
    free(c);
}

static void emit(kb_buf *out, const cnode *c, int indent, bool first_inline);

/* A key or list element at `indent`; `first_inline`: the line already holds "- ". */
static void emit_entry(kb_buf *out, const cnode *c, int indent, bool first_inline)
{
    bool elem = c->seg[0] == '[';
    if (!first_inline)
        kb_buf_printf(out, "%*s", indent, "");
    if (elem)
        kb_buf_printf(out, "- ");
    else
        kb_buf_printf(out, "%s:", c->seg);
    if (c->rec) {
        kb_buf_printf(out, "%s%s  # %s\n", elem ? "" : " ", c->rec->value, c->rec->source);
        return;
    }
    if (elem) {
        emit(out, c, indent + 2, true);
        return;
    }
    kb_buf_printf(out, "\n");
    emit(out, c, indent + 2, false);
}

static void emit(kb_buf *out, const cnode *c, int indent, bool first_inline)
{
    for (size_t i = 0; i < c->n; i++)
        emit_entry(out, c->kids[i], indent, first_inline && i == 0);
}

char *kb_topo_config_yaml(const kb_topo *t)
{
    kb_buf out = {0};
    kb_buf_printf(&out, "# Resolved configuration of topology '%s' (%s)\n", t->name, t->path);
    for (size_t i = 0; i < t->noverrides; i++)
        kb_buf_printf(&out, "# override: --set %s\n", t->overrides[i]);
    kb_buf_printf(&out, "# Every value the simulator used, with its source: file:line:column,\n"
                        "# the override that set it, or 'default'. Loading this file rebuilds\n"
                        "# the same topology.\n");
    cnode root = {0};
    for (size_t i = 0; i < t->ncfg; i++)
        insert(&root, &t->cfg[i]);
    emit(&out, &root, 0, false);
    for (size_t i = 0; i < root.n; i++)
        free_tree(root.kids[i]);
    free(root.kids);
    return kb_buf_take(&out);
}
