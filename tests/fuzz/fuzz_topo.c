/* Fuzz harness: the YAML topology loader with --set overrides
 * (kb_topo_load, src/topo/).
 *
 * Input: a topology file, optionally followed by a line "#set" and then one
 * `--set` assignment per line (at most MAX_OVERRIDES):
 *
 *   base: default.yaml
 *   sip: { cube_mesh: { w: 1, h: 1 } }
 *   #set
 *   cube.links.router_link_bw_gbs=128
 *
 * The file part is written to a scratch directory and loaded by path, as
 * `kernbench -t FILE` does, so `base:` files resolve: the directory holds
 * links to every file of topologies/ and tests/topologies/bad/, and sits
 * at tests/topologies/bad/ of a tree whose topologies/ is the repository's
 * (the seeds' `base: ../../../topologies/default.yaml` works too).
 *
 * Findings, besides crashes and sanitizer reports: a failure without a
 * message, a loaded topology whose node index disagrees with its ids, and
 * a resolved configuration (kb_topo_config_yaml) that does not load back
 * as the same topology or dumps differently (topo.h promises both).
 * KB_FUZZ_PRINT=1 prints each load's outcome (to read a reproducer). */
#define _GNU_SOURCE /* memmem, mkdtemp, symlink */

#include "fuzz.h"

#include "comp/comp.h"
#include "core/util.h"
#include "topo/topo.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OVERRIDES 8
#define SET_MARKER "\n#set\n"

/* libFuzzer's entry point takes no context, so the setup made on the first
 * call (the registry, the scratch directory) lives here for the process. */
static struct {
    kb_registry *reg;
    char *root;        /* the scratch tree */
    char *dir;         /* root/tests/topologies/bad: the input and the links */
    char *input;       /* dir/fuzz.yaml */
    bool print;        /* KB_FUZZ_PRINT */
    char **made;       /* everything created under root, removed at exit */
    size_t nmade;
} fz;

static void remember(const char *path)
{
    fz.made = kb_xrealloc(fz.made, (fz.nmade + 1) * sizeof *fz.made);
    fz.made[fz.nmade++] = kb_xstrdup(path);
}

static void remove_scratch(void)
{
    unlink(fz.input);
    for (size_t i = fz.nmade; i-- > 0;) {
        if (remove(fz.made[i]) != 0)
            fprintf(stderr, "fuzz_topo: cannot remove %s\n", fz.made[i]);
        free(fz.made[i]);
    }
    free(fz.made);
    free(fz.input);
    free(fz.dir);
    free(fz.root);
    kb_registry_free(fz.reg);
}

static void make_dir(const char *path)
{
    FUZZ_CHECK(mkdir(path, 0700) == 0, "cannot create %s", path);
    remember(path);
}

/* Links every *.yaml of src_dir into fz.dir (a name taken already is left). */
static void link_yaml_files(const char *src_dir)
{
    DIR *d = opendir(src_dir);
    FUZZ_CHECK(d, "cannot list %s", src_dir);
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n < 6 || strcmp(e->d_name + n - 5, ".yaml") != 0)
            continue;
        char *from = kb_asprintf("%s/%s", src_dir, e->d_name);
        char *to = kb_asprintf("%s/%s", fz.dir, e->d_name);
        if (symlink(from, to) == 0)
            remember(to);
        free(from);
        free(to);
    }
    closedir(d);
}

static void setup(void)
{
    fz.reg = kb_registry_new();
    kb_comp_register_builtins(fz.reg);
    const char *tmp = getenv("KB_FUZZ_TMPDIR");
    if (!tmp || !*tmp)
        tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char *templ = kb_asprintf("%s/kb-fuzz-topo-XXXXXX", tmp);
    FUZZ_CHECK(mkdtemp(templ), "cannot create a scratch directory under %s", tmp);
    fz.root = templ;
    remember(fz.root); /* made[] is undone in reverse: the root goes last */
    char *topos = kb_asprintf("%s/topologies", fz.root);
    FUZZ_CHECK(symlink(KB_FUZZ_SOURCE_DIR "/topologies", topos) == 0, "cannot link %s", topos);
    remember(topos);
    free(topos);
    char *tests = kb_asprintf("%s/tests", fz.root);
    char *tt = kb_asprintf("%s/topologies", tests);
    fz.dir = kb_asprintf("%s/bad", tt);
    make_dir(tests);
    make_dir(tt);
    make_dir(fz.dir);
    free(tests);
    free(tt);
    link_yaml_files(KB_FUZZ_SOURCE_DIR "/topologies");
    link_yaml_files(KB_FUZZ_SOURCE_DIR "/tests/topologies/bad");
    fz.input = kb_asprintf("%s/fuzz.yaml", fz.dir);
    const char *p = getenv("KB_FUZZ_PRINT");
    fz.print = p && *p && strcmp(p, "0") != 0;
    atexit(remove_scratch);
}

/* The dump without its comments (the sources), as test_config_dump.c
 * compares two dumps. */
static char *values_only(const char *yaml)
{
    char *out = kb_xmalloc(strlen(yaml) + 1), *w = out;
    const char *line = yaml;
    while (*line) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (line[0] != '#') {
            const char *hash = strstr(line, "  # ");
            size_t keep = hash && hash < line + len ? (size_t)(hash - line) : len;
            memcpy(w, line, keep);
            w += keep;
            *w++ = '\n';
        }
        line += len + (end ? 1 : 0);
    }
    *w = '\0';
    return out;
}

/* Same values compare equal; so do two NaNs (the dump must keep them). */
static bool same_number(double a, double b) { return a == b || (a != a && b != b); }

static void check_same_topology(const kb_topo *a, const kb_topo *b, const char *dump)
{
    FUZZ_CHECK(strcmp(kb_topo_name(a), kb_topo_name(b)) == 0, "name %s became %s\n%s", kb_topo_name(a),
               kb_topo_name(b), dump);
    FUZZ_CHECK(kb_topo_node_count(a) == kb_topo_node_count(b) && kb_topo_edge_count(a) == kb_topo_edge_count(b),
               "%zu nodes, %zu edges became %zu, %zu\n%s", kb_topo_node_count(a), kb_topo_edge_count(a),
               kb_topo_node_count(b), kb_topo_edge_count(b), dump);
    const kb_topo_params *p = kb_topo_params_of(a), *q = kb_topo_params_of(b);
    FUZZ_CHECK(same_number(p->ns_per_mm, q->ns_per_mm) && p->flit_bytes == q->flit_bytes && p->sips == q->sips &&
                   p->cubes_per_sip == q->cubes_per_sip && p->pes_per_cube == q->pes_per_cube &&
                   p->io_per_sip == q->io_per_sip && p->hbm_slice_bytes == q->hbm_slice_bytes &&
                   same_number(p->hbm_channel_bw_gbs, q->hbm_channel_bw_gbs) &&
                   same_number(p->hbm_total_gb_per_cube, q->hbm_total_gb_per_cube),
               "system parameters differ after the round trip\n%s", dump);
    for (uint32_t i = 0; i < kb_topo_node_count(a); i++) {
        const kb_node *m = kb_topo_node(a, i), *n = kb_topo_node(b, i);
        FUZZ_CHECK(strcmp(m->id, n->id) == 0 && m->spec->impl == n->spec->impl, "node %u: %s became %s\n%s", i,
                   m->id, n->id, dump);
        for (size_t k = 0; k < m->spec->impl->nattrs; k++)
            FUZZ_CHECK(same_number(m->spec->vals[k], n->spec->vals[k]), "%s: attribute %s: %.17g became %.17g\n%s",
                       m->id, m->spec->impl->attrs[k].name, m->spec->vals[k], n->spec->vals[k], dump);
    }
    for (uint32_t i = 0; i < kb_topo_edge_count(a); i++) {
        const kb_edge *e = kb_topo_edge(a, i), *f = kb_topo_edge(b, i);
        FUZZ_CHECK(e->src == f->src && e->dst == f->dst && e->kind == f->kind && same_number(e->bw_gbs, f->bw_gbs) &&
                       same_number(e->mm, f->mm) && same_number(e->routing_mm, f->routing_mm),
                   "edge %u differs after the round trip\n%s", i, dump);
    }
}

static void check_loaded(const kb_topo *t)
{
    size_t nn = kb_topo_node_count(t);
    FUZZ_CHECK(nn > 0, "a topology without nodes loaded");
    for (uint32_t i = 0; i < nn; i++) {
        const kb_node *n = kb_topo_node(t, i);
        FUZZ_CHECK(n->id && kb_topo_find(t, n->id) == i, "node %u (%s) is not found by its id", i, n->id);
        FUZZ_CHECK(kb_topo_by_rank(t, kb_topo_rank(t, i)) == i, "node %u: rank and order disagree", i);
    }
    for (uint32_t i = 0; i < kb_topo_edge_count(t); i++) {
        const kb_edge *e = kb_topo_edge(t, i);
        FUZZ_CHECK(e->src < nn && e->dst < nn, "edge %u: %u -> %u with %zu nodes", i, e->src, e->dst, nn);
    }
    free(kb_topo_summary(t));

    char *dump = kb_topo_config_yaml(t);
    char *err = NULL;
    kb_topo *t2 = kb_topo_load_string(dump, "dump.yaml", NULL, 0, fz.reg, &err);
    FUZZ_CHECK(t2, "the resolved configuration does not load back: %s\n--- dump:\n%s", err, dump);
    check_same_topology(t, t2, dump);
    char *dump2 = kb_topo_config_yaml(t2);
    char *v1 = values_only(dump), *v2 = values_only(dump2);
    FUZZ_CHECK(strcmp(v1, v2) == 0, "the dump of the reloaded dump differs\n--- first:\n%s\n--- second:\n%s", v1, v2);
    free(v1);
    free(v2);
    free(dump2);
    kb_topo_free(t2);
    free(dump);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz.reg)
        setup();

    /* split: the file, then the --set lines */
    size_t body = size;
    const uint8_t *marker = memmem(data, size, SET_MARKER, strlen(SET_MARKER));
    if (marker)
        body = (size_t)(marker - data) + 1; /* keep the file's last newline */
    FILE *f = fopen(fz.input, "wb");
    FUZZ_CHECK(f, "cannot write %s", fz.input);
    FUZZ_CHECK(fwrite(data, 1, body, f) == body && fclose(f) == 0, "cannot write %s", fz.input);

    char *sets[MAX_OVERRIDES];
    size_t nsets = 0;
    if (marker) {
        const char *p = (const char *)marker + strlen(SET_MARKER), *end = (const char *)data + size;
        while (p < end && nsets < MAX_OVERRIDES) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
            sets[nsets] = kb_xmalloc(len + 1);
            memcpy(sets[nsets], p, len);
            sets[nsets][len] = '\0'; /* a NUL inside ends it, as in argv */
            nsets++;
            p += len + 1;
        }
    }

    char *err = NULL;
    kb_topo *t = kb_topo_load(fz.input, (const char *const *)sets, nsets, fz.reg, &err);
    if (fz.print)
        fprintf(stderr, "%zu override(s): %s\n", nsets, t ? "loaded" : err);
    if (t) {
        FUZZ_CHECK(!err, "a loaded topology came with an error: %s", err);
        check_loaded(t);
        kb_topo_free(t);
    } else {
        FUZZ_CHECK(err && *err, "the load failed without a message");
        free(err);
    }
    for (size_t i = 0; i < nsets; i++)
        free(sets[i]);
    return 0;
}
