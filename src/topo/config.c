/* The resolved configuration of a topology, recording side: every value the
 * readers resolve, with where it came from (--dump-config, t:config()).
 * config_dump.c writes the records back as a YAML topology file.
 * Reference: docs/topology.md "Resolved configuration". */
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

/* Whether a plain scalar can be written back unquoted: always where it came
 * from (a block value), except that no plain scalar can hold a line break
 * and a flow list ([a, b]) cannot hold flow indicators or an empty value. */
static bool plain_ok(const char *s, bool flow)
{
    if (strchr(s, '\n'))
        return false;
    return !flow || (s[0] && !strpbrk(s, ",[]{}"));
}

static void quoted(kb_buf *out, const char *s)
{
    kb_buf_printf(out, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            kb_buf_printf(out, "\\%c", *p);
        else if (*p == '\n')
            kb_buf_printf(out, "\\n");
        else if (*p == '\t')
            kb_buf_printf(out, "\\t");
        else if (*p < 0x20 || *p == 0x7f)
            kb_buf_printf(out, "\\x%02x", *p);
        else
            kb_buf_printf(out, "%c", *p);
    }
    kb_buf_printf(out, "\"");
}

/* YAML text of a value node: scalars as written (quoted if they were, or
 * if they cannot stand unquoted here), lists and maps of scalars in flow
 * style. */
static void render(kb_buf *out, const kb_ynode *n, bool flow)
{
    if (n->type == KB_Y_SCALAR) {
        const char *text = n->text ? n->text : "";
        if (n->plain && plain_ok(text, flow))
            kb_buf_printf(out, "%s", text);
        else
            quoted(out, text);
        return;
    }
    kb_buf_printf(out, n->type == KB_Y_SEQ ? "[" : "{");
    for (size_t i = 0; i < n->n; i++) {
        if (i)
            kb_buf_printf(out, ", ");
        if (n->type == KB_Y_MAP)
            kb_buf_printf(out, "%s: ", n->items[i].key);
        render(out, n->items[i].val, true);
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
    if (kb_strmap_get(&t->cfg_index, path) >= 0) { /* read twice: keep the first */
        free(path);
        return;
    }
    kb_buf v = {0};
    char where[512];
    if (n) {
        render(&v, n, false);
        kb_ymark_format(&n->mark, where, sizeof where);
    } else {
        kb_buf_printf(&v, "%s", dflt);
        snprintf(where, sizeof where, "default");
    }
    if (t->ncfg == t->cap_cfg) {
        t->cap_cfg = t->cap_cfg ? 2 * t->cap_cfg : 128;
        t->cfg = kb_xrealloc(t->cfg, t->cap_cfg * sizeof *t->cfg);
    }
    kb_strmap_put(&t->cfg_index, path, (uint32_t)t->ncfg);
    t->cfg[t->ncfg++] = (kb_cfgrec){path, kb_buf_take(&v), kb_xstrdup(where)};
}

void kb_cfg_note_default_string(kb_builder *b, const kb_ynode *map, const char *key, const char *s)
{
    bool plain = s[0] != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                *p == '_' || *p == '-' || *p == '.';
    kb_buf v = {0};
    if (plain)
        kb_buf_printf(&v, "%s", s);
    else
        quoted(&v, s);
    char *text = kb_buf_take(&v);
    kb_cfg_note(b, map, key, NULL, text);
    free(text);
}

void kb_cfg_free(kb_topo *t)
{
    for (size_t i = 0; i < t->ncfg; i++) {
        free(t->cfg[i].path);
        free(t->cfg[i].value);
        free(t->cfg[i].source);
    }
    free(t->cfg);
    kb_strmap_free(&t->cfg_index);
    for (size_t i = 0; i < t->noverrides; i++)
        free(t->overrides[i]);
    free(t->overrides);
}
