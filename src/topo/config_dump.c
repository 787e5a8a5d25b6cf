/* The resolved configuration of a topology, writing side: the records the
 * readers left (config.c, kb_cfg_note) as a YAML topology file with the
 * source of every value in a comment (--dump-config, t:config()).
 * Reference: docs/topology.md "Resolved configuration". */
#include "topo/build_internal.h"

#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Records -> a tree of key paths (children in the order the readers first
 * reached them) -> YAML. */
typedef struct cnode {
    char *seg; /* map key, or "[i]" for a list element */
    const kb_cfgrec *rec;
    struct cnode **kids;
    size_t n, cap;
    kb_strmap index; /* seg -> kids[i], once there are many (a 100,000-node graph) */
} cnode;

#define CHILD_SCAN 16

static cnode *child(cnode *p, const char *seg, size_t len, bool index)
{
    (void)index; /* a list element's segment starts with '[', which no key does */
    char *key = kb_asprintf("%.*s", (int)len, seg);
    if (p->n > CHILD_SCAN) {
        int64_t i = kb_strmap_get(&p->index, key);
        if (i >= 0) {
            free(key);
            return p->kids[i];
        }
    } else {
        for (size_t i = 0; i < p->n; i++)
            if (strcmp(p->kids[i]->seg, key) == 0) {
                free(key);
                return p->kids[i];
            }
    }
    cnode *c = kb_xcalloc(1, sizeof *c);
    c->seg = key;
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 4;
        p->kids = kb_xrealloc(p->kids, p->cap * sizeof *p->kids);
    }
    p->kids[p->n++] = c;
    if (p->n == CHILD_SCAN + 1)
        for (size_t i = 0; i < p->n; i++)
            kb_strmap_put(&p->index, p->kids[i]->seg, (uint32_t)i);
    else if (p->n > CHILD_SCAN + 1)
        kb_strmap_put(&p->index, c->seg, (uint32_t)(p->n - 1));
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
        bool index = *p == '[';
        size_t len = index ? strcspn(p, "]") + (p[strcspn(p, "]")] ? 1 : 0) : strcspn(p, ".[");
        cur = child(cur, p, len, index);
        p += len;
    }
    cur->rec = r;
}

static void free_kids(cnode *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free_kids(c->kids[i]);
        free(c->kids[i]->seg);
        free(c->kids[i]);
    }
    free(c->kids);
    kb_strmap_free(&c->index);
}

/* Text inside a comment line: line breaks and other controls become '?',
 * NEL (C2 85) and the line and paragraph separators (E2 80 A8/A9) too:
 * YAML ends a comment at them (a file path may hold any byte). */
static void comment_text(kb_buf *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (p[0] == 0xc2 && p[1] == 0x85) {
            p++;
            kb_buf_printf(out, "?");
        } else if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
            p += 2;
            kb_buf_printf(out, "?");
        } else {
            kb_buf_printf(out, "%c", *p < 0x20 || *p == 0x7f ? '?' : *p);
        }
    }
}

static void emit(kb_buf *out, const cnode *c, int indent, bool first_inline);

/* A key or list element at `indent`; `first_inline`: the line already
 * holds the "- " of the list element this entry opens. */
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
        kb_buf_printf(out, "%s%s  # ", elem ? "" : " ", c->rec->value);
        comment_text(out, c->rec->source);
        kb_buf_printf(out, "\n");
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

/* What the loader computed from the parameters: comments only, so that
 * loading the dump does not see them as keys. */
static void emit_derived(kb_buf *out, const kb_topo *t)
{
    const kb_topo_params *p = &t->p;
    kb_buf_printf(out, "# Derived by the loader (not parameters):\n");
    kb_buf_printf(out, "#   nodes: %zu\n#   edges: %zu\n", t->nnodes, t->nedges);
    if (p->cubes_per_sip == 0) /* graph form */
        return;
    if (p->sip_grid_w)
        kb_buf_printf(out, "#   sip_grid: %dx%d\n", p->sip_grid_w, p->sip_grid_h);
    kb_buf_printf(out, "#   cubes_per_sip: %d\n#   pes_per_cube: %d\n#   io_chiplets_per_sip: %d\n",
                  p->cubes_per_sip, p->pes_per_cube, p->io_per_sip);
    kb_buf_printf(out, "#   hbm_slice_bytes: %llu\n", (unsigned long long)p->hbm_slice_bytes);
    for (size_t i = 0; i < t->nedges; i++)
        if (t->edges[i].kind == KB_EK_ROUTER_TO_HBM) {
            char bw[40];
            kb_cfg_num_text(t->edges[i].bw_gbs, bw, sizeof bw);
            kb_buf_printf(out, "#   router_to_hbm_bw_gbs: %s\n", bw);
            break;
        }
}

char *kb_topo_config_yaml(const kb_topo *t)
{
    kb_buf out = {0};
    kb_buf_printf(&out, "# Resolved configuration of topology '");
    comment_text(&out, t->name);
    kb_buf_printf(&out, "' (");
    comment_text(&out, t->path);
    kb_buf_printf(&out, ")\n");
    for (size_t i = 0; i < t->noverrides; i++) {
        kb_buf_printf(&out, "# override: --set ");
        comment_text(&out, t->overrides[i]);
        kb_buf_printf(&out, "\n");
    }
    kb_buf_printf(&out, "# Every value the simulator used, with its source: file:line:column,\n"
                        "# the override that set it, or 'default'. Loading this file rebuilds\n"
                        "# the same topology.\n");
    cnode root = {0};
    for (size_t i = 0; i < t->ncfg; i++)
        insert(&root, &t->cfg[i]);
    emit(&out, &root, 0, false);
    free_kids(&root);
    emit_derived(&out, t);
    return kb_buf_take(&out);
}
