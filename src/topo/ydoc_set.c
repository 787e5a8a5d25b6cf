/* Overrides: `--set key.path=value` applied to a parsed document before the
 * builders read it. The value is YAML, every node it adds carries the
 * override as its source, and the path may grow keys only where the file
 * wrote none (or wrote null). */
#include "topo/ydoc_internal.h"

#include "core/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    /* Every segment of the key path is a name: no empty segment (".", "a..b",
     * a leading or trailing dot), which strtok would silently skip. */
    size_t klen = (size_t)(eq - assignment);
    for (size_t i = 0, seg = 0; i <= klen; i++) {
        if (i < klen && assignment[i] != '.')
            continue;
        if (i == seg) {
            *err = kb_asprintf("--set %s: key path '%.*s' has an empty segment%s; a key path is names "
                               "joined by single dots (cube.links.router_link_bw_gbs, "
                               "sip.io_chiplets.0.id)", assignment, (int)klen, assignment,
                               i == 0 ? " at its start" : i == klen ? " at its end" : "");
            return false;
        }
        seg = i + 1;
    }
    char *src_text = kb_asprintf("--set %s", assignment);
    const char *src = kb_ydoc_add_source(doc, src_text);
    free(src_text);
    kb_ymark mark = {.src = src};

    char *value_err = NULL;
    const char *value = eq + 1;
    char *at = kb_asprintf("%.*s", (int)(eq - assignment), assignment);
    kb_ynode *val = kb_ydoc_parse_text(value, strlen(value), src, at, &value_err);
    free(at);
    if (!val) {
        *err = value_err;
        return false;
    }
    /* A bare word or number parses as a scalar; an empty value is an empty string. */
    if (val->type == KB_Y_MAP && val->n == 0 && !*value) {
        kb_ynode_free(val);
        val = kb_ynode_new(KB_Y_SCALAR, mark);
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
                kb_yentry *e = kb_ynode_append(cur);
                e->key = kb_xstrdup(tok);
                e->key_mark = mark;
                e->val = kb_ynode_new(KB_Y_MAP, mark);
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
            kb_ynode_free(*slot);
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
            kb_ynode_free(*slot);
            *slot = kb_ynode_new(KB_Y_MAP, mark);
        }
        cur = *slot;
        tok = next;
    }
    free(keys);
    kb_ynode_free(val);
    kb_ynode_set_paths(doc->root, "");
    return ok;
}
