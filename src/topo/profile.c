/* Profiles (docs/fidelity.md): a named set of parameters and mechanisms
 * laid over whatever topology is loaded. A topology names one with
 * `profile: NAME` (or `--profile NAME` / `--set profile=NAME`); the file
 * `profiles/NAME.yaml` beside the shipped topologies holds
 *
 *     description: ...
 *     overlay: { cube: {...}, sip: {io_chiplets: {"*": {...}}}, ... }
 *
 * and its overlay is laid over the document after the `base:` chain and
 * before the `--set` overrides, so a user's --set still wins. `default`
 * names the default model itself (no overlay). */
#include "topo/profile.h"

#include "core/util.h"
#include "topo/build_internal.h"
#include "topo/ydoc_internal.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* "original, ..." : the profiles in dir, sorted (newly allocated). */
static char *list_profiles(const char *dir)
{
    kb_buf b = {0};
    DIR *d = dir ? opendir(dir) : NULL;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0) {
            names = kb_xrealloc(names, (n + 1) * sizeof *names);
            names[n++] = kb_asprintf("%.*s", (int)(len - 5), e->d_name);
        }
    }
    if (d)
        closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    kb_buf_printf(&b, "default");
    for (size_t i = 0; i < n; i++) {
        kb_buf_printf(&b, ", %s", names[i]);
        free(names[i]);
    }
    free(names);
    return b.data;
}

/* The file a profile value names: a path (it has a '/' or ends in .yaml),
 * relative to the topology file; else profiles/NAME.yaml among the shipped
 * topologies, then beside the topology file. NULL with *err when none. */
static char *profile_file(const char *value, const char *topo_path, const char *shipped, const char *where,
                          char **err)
{
    const char *slash = topo_path ? strrchr(topo_path, '/') : NULL;
    size_t n = strlen(value);
    bool is_path = strchr(value, '/') || (n > 5 && strcmp(value + n - 5, ".yaml") == 0);
    if (is_path) {
        char *full = value[0] == '/' || !slash ? kb_xstrdup(value)
                                               : kb_asprintf("%.*s/%s", (int)(slash - topo_path), topo_path, value);
        if (kb_topo_is_file(full))
            return full;
        *err = kb_asprintf("%s: profile: no profile file %s", where, full);
        free(full);
        return NULL;
    }
    char *in_shipped = shipped ? kb_asprintf("%s/profiles/%s.yaml", shipped, value) : NULL;
    if (in_shipped && kb_topo_is_file(in_shipped))
        return in_shipped;
    free(in_shipped);
    char *beside = slash ? kb_asprintf("%.*s/profiles/%s.yaml", (int)(slash - topo_path), topo_path, value)
                         : kb_asprintf("profiles/%s.yaml", value);
    if (kb_topo_is_file(beside))
        return beside;
    free(beside);
    char *dir = shipped ? kb_asprintf("%s/profiles", shipped) : NULL;
    char *names = list_profiles(dir);
    *err = kb_asprintf("%s: profile: no profile '%s' (profiles: %s)", where, value, names);
    free(names);
    free(dir);
    return NULL;
}

bool kb_topo_apply_profile(kb_ydoc *doc, const char *topo_path, const char *shipped, char **err)
{
    kb_ynode *root = kb_ydoc_root(doc);
    if (root->type != KB_Y_MAP)
        return true; /* the builder reports it */
    kb_ynode *v = NULL;
    for (size_t i = 0; i < root->n && !v; i++)
        if (strcmp(root->items[i].key, "profile") == 0)
            v = root->items[i].val;
    if (!v)
        return true;
    if (v->type != KB_Y_SCALAR || !v->text || !v->text[0]) {
        *err = kb_yerr(v, "expected a profile name (default, original, ...) or a profile file");
        return false;
    }
    if (strcmp(v->text, "default") == 0)
        return true;
    char where[512];
    kb_ymark_format(&v->mark, where, sizeof where);
    for (size_t i = 0; i < root->n; i++)
        if (strcmp(root->items[i].key, "graph") == 0) {
            *err = kb_asprintf("%s: profile: %s is a `graph:` topology; a profile is laid over a system "
                               "topology (system:, sip:, cube:)", where, topo_path ? topo_path : "this");
            return false;
        }
    char *file = profile_file(v->text, topo_path, shipped, where, err);
    if (!file)
        return false;
    char *perr = NULL;
    kb_ydoc *p = kb_ydoc_load_file(file, &perr);
    if (!p) {
        *err = kb_asprintf("%s: profile: %s", where, perr);
        free(perr);
        free(file);
        return false;
    }
    kb_ynode *proot = kb_ydoc_root(p);
    kb_ynode *overlay = NULL;
    bool ok = true;
    if (proot->type != KB_Y_MAP) {
        *err = kb_asprintf("%s: a profile is a map of `description:` and `overlay:`", file);
        ok = false;
    }
    for (size_t i = 0; ok && i < proot->n; i++) {
        kb_yentry *e = &proot->items[i];
        if (strcmp(e->key, "overlay") == 0 && e->val->type == KB_Y_MAP) {
            overlay = e->val;
        } else if (strcmp(e->key, "description") == 0 && e->val->type == KB_Y_SCALAR) {
            /* for people; `kernbench --profile` lists it */
        } else {
            *err = kb_yerr(e->val, "a profile has `description:` (text) and `overlay:` (a map of topology "
                                   "keys); '%s' is not one of them", e->key);
            ok = false;
        }
    }
    if (ok && overlay)
        ok = kb_ydoc_overlay(doc, overlay, p, err);
    kb_ydoc_free(p);
    free(file);
    return ok;
}
