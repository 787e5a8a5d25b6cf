/* Loading a topology: YAML -> overrides -> builder -> compiled graph; the
 * graph's construction (nodes, edges, the id index) and its queries. The
 * builders read the file through read.c. */
#include "topo/build_internal.h"
#include "topo/profile.h"

#include "core/util.h"
#include "topo/route.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const edge_kind_names[KB_EK_COUNT] = {
    [KB_EK_PE_INTERNAL] = "pe_internal",
    [KB_EK_PE_TO_ROUTER] = "pe_to_router",
    [KB_EK_ROUTER_TO_PE] = "router_to_pe",
    [KB_EK_ROUTER_MESH] = "router_mesh",
    [KB_EK_ROUTER_TO_HBM] = "router_to_hbm",
    [KB_EK_HBM_TO_ROUTER] = "hbm_to_router",
    [KB_EK_ROUTER_TO_SRAM] = "router_to_sram",
    [KB_EK_SRAM_TO_ROUTER] = "sram_to_router",
    [KB_EK_COMMAND] = "command",
    [KB_EK_ROUTER_TO_UCIE_CONN] = "router_to_ucie_conn",
    [KB_EK_UCIE_CONN_TO_ROUTER] = "ucie_conn_to_router",
    [KB_EK_UCIE_INTERNAL] = "ucie_internal",
    [KB_EK_UCIE_MESH] = "ucie_mesh",
    [KB_EK_NOC_TO_UCIE_CONN] = "noc_to_ucie_conn",
    [KB_EK_UCIE_CONN_TO_NOC] = "ucie_conn_to_noc",
    [KB_EK_IO_INTERNAL] = "io_internal",
    [KB_EK_IO_TO_CUBE] = "io_to_cube",
    [KB_EK_CUBE_TO_IO] = "cube_to_io",
    [KB_EK_PCIE] = "pcie",
    [KB_EK_LINK] = "link",
};

const char *kb_edge_kind_name(kb_edge_kind k)
{
    return k < KB_EK_COUNT ? edge_kind_names[k] : "?";
}

/* ---- graph construction ---- */

uint32_t kb_add_node(kb_builder *b, char *id, const kb_comp_spec *spec, int sip, int cube, int pe,
                     int io)
{
    kb_topo *t = b->t;
    if (t->nnodes == b->cap_nodes) {
        b->cap_nodes = b->cap_nodes ? 2 * b->cap_nodes : 256;
        t->nodes = kb_xrealloc(t->nodes, b->cap_nodes * sizeof *t->nodes);
    }
    kb_node *n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    n->id = id;
    n->spec = spec;
    n->sip = sip;
    n->cube = cube;
    n->pe = pe;
    n->io = io;
    return (uint32_t)t->nnodes++;
}

void kb_add_edge(kb_builder *b, uint32_t src, uint32_t dst, kb_edge_kind kind, double bw, double mm,
                 double routing_mm)
{
    kb_topo *t = b->t;
    if (t->nedges == b->cap_edges) {
        b->cap_edges = b->cap_edges ? 2 * b->cap_edges : 1024;
        t->edges = kb_xrealloc(t->edges, b->cap_edges * sizeof *t->edges);
    }
    t->edges[t->nedges++] = (kb_edge){.src = src, .dst = dst, .kind = kind, .bw_gbs = bw,
                                      .mm = mm, .routing_mm = routing_mm < 0 ? mm : routing_mm};
}

void kb_add_link(kb_builder *b, uint32_t a, uint32_t z, kb_edge_kind ab, kb_edge_kind za, double bw,
                 double mm, double routing_mm)
{
    kb_add_edge(b, a, z, ab, bw, mm, routing_mm);
    kb_add_edge(b, z, a, za, bw, mm, routing_mm);
}

typedef struct named { const char *id; uint32_t idx; } named;

static int cmp_named(const void *a, const void *b)
{
    return strcmp(((const named *)a)->id, ((const named *)b)->id);
}

/* Edges grouped by source (stable), the id index, duplicate-id check. */
static void finalize(kb_builder *b)
{
    kb_topo *t = b->t;
    size_t nn = t->nnodes, ne = t->nedges;
    uint32_t *count = kb_xcalloc(nn + 1, sizeof *count);
    for (size_t i = 0; i < ne; i++)
        count[t->edges[i].src + 1]++;
    for (size_t i = 0; i < nn; i++)
        count[i + 1] += count[i];
    kb_edge *sorted = kb_xmalloc((ne ? ne : 1) * sizeof *sorted);
    for (size_t i = 0; i < nn; i++) {
        t->nodes[i].first_out = count[i];
        t->nodes[i].nout = 0;
    }
    for (size_t i = 0; i < ne; i++) {
        kb_node *s = &t->nodes[t->edges[i].src];
        sorted[s->first_out + s->nout++] = t->edges[i];
    }
    free(count);
    free(t->edges);
    t->edges = sorted;

    t->by_name = kb_xmalloc((nn ? nn : 1) * sizeof *t->by_name);
    t->rank = kb_xmalloc((nn ? nn : 1) * sizeof *t->rank);
    named *order = kb_xmalloc((nn ? nn : 1) * sizeof *order);
    for (size_t i = 0; i < nn; i++)
        order[i] = (named){t->nodes[i].id, (uint32_t)i};
    qsort(order, nn, sizeof *order, cmp_named);
    for (size_t i = 0; i < nn; i++)
        t->by_name[i] = order[i].idx;
    free(order);
    for (size_t i = 0; i < nn; i++) {
        t->rank[t->by_name[i]] = (uint32_t)i;
        if (i && strcmp(t->nodes[t->by_name[i]].id, t->nodes[t->by_name[i - 1]].id) == 0 && !b->err)
            b->err = kb_asprintf("%s: two nodes are named '%s'", t->path, t->nodes[t->by_name[i]].id);
    }
    kb_places_build(t);
}

static bool sets_profile(const char *assignment) { return strncmp(assignment, "profile=", 8) == 0; }

/* Applies the overrides to the document: a profile chosen by an override
 * (`--profile`) first, then the profile's overlay, then the rest, so that a
 * --set wins over the profile it is laid on. */
static bool apply_overrides(kb_ydoc *doc, const char *path, const char *shipped, const char *const *overrides,
                            size_t nov, char **err)
{
    for (size_t i = 0; i < nov; i++)
        if (sets_profile(overrides[i]) && !kb_ydoc_set(doc, overrides[i], err))
            return false;
    if (!kb_topo_apply_profile(doc, path, shipped, err))
        return false;
    for (size_t i = 0; i < nov; i++)
        if (!sets_profile(overrides[i]) && !kb_ydoc_set(doc, overrides[i], err))
            return false;
    return true;
}

static kb_topo *load_doc(kb_ydoc *doc, const char *path, const char *shipped, const char *const *overrides,
                         size_t nov, const kb_registry *reg, char **err)
{
    if (!apply_overrides(doc, path, shipped, overrides, nov, err)) {
        kb_ydoc_free(doc);
        return NULL;
    }
    kb_topo *t = kb_xcalloc(1, sizeof *t);
    t->path = kb_xstrdup(path);
    t->overrides = kb_xcalloc(nov ? nov : 1, sizeof *t->overrides);
    for (size_t i = 0; i < nov; i++)
        t->overrides[t->noverrides++] = kb_xstrdup(overrides[i]);
    kb_builder b = {.t = t, .reg = reg};
    kb_ynode *root = kb_ydoc_root(doc);
    if (!kb_yas_map(root, &b.err)) {
        /* reported below */
    } else {
        const char *name = kb_rd_string(&b, root, "name", NULL);
        if (!name) {
            const char *base = strrchr(path, '/');
            base = base ? base + 1 : path;
            t->name = kb_xstrdup(base);
            char *dot = strrchr(t->name, '.');
            if (dot)
                *dot = '\0';
            /* recorded, so a dump keeps the name whatever its own file is called */
            kb_cfg_note_default_string(&b, root, "name", t->name);
        } else {
            if (!b.err && !name[0]) /* shown in summaries and results, keyed by it */
                b.err = kb_yerr(kb_ymap_get(root, "name"), "a topology name must not be empty (omit it to "
                                                           "use the file name)");
            t->name = kb_xstrdup(name);
        }
        kb_rd_string(&b, root, "description", NULL);
        const char *profile = kb_rd_string(&b, root, "profile", "default");
        t->profile = kb_xstrdup(profile ? profile : "default");
        bool graph = kb_ymap_get(root, "graph") != NULL;
        if (!b.err && graph && (kb_ymap_get(root, "sip") || kb_ymap_get(root, "cube")))
            b.err = kb_yerr(root, "a topology has either a `graph:` section or `sip:`/`cube:` "
                                  "sections, not both");
        if (graph)
            kb_build_graph(&b, root);
        else
            kb_build_system(&b, root);
        if (!b.err) {
            char *unk = kb_ydoc_unknown(doc);
            if (unk)
                b.err = unk;
        }
        if (!b.err)
            finalize(&b);
        if (!b.err && !graph)
            kb_validate_connectivity(&b);
        else if (!b.err)
            kb_validate_graph(&b);
    }
    kb_ydoc_free(doc);
    for (size_t i = 0; i < b.nabsent; i++)
        kb_ynode_free(b.absent[i]);
    free(b.absent);
    if (b.err) {
        *err = b.err;
        kb_topo_free(t);
        return NULL;
    }
    t->routes = kb_route_cache_new(t);
    return t;
}

bool kb_topo_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* The file a `base:` value names: a path relative to the including file;
 * or, for a bare name ("default", "small_2x2.yaml") with no such file
 * there, the shipped topology of that name in `shipped` (may be NULL). */
static char *base_file(const char *path, const char *base, const char *shipped)
{
    const char *slash = strrchr(path, '/');
    char *full = base[0] == '/' || !slash ? kb_xstrdup(base)
                                          : kb_asprintf("%.*s/%s", (int)(slash - path), path, base);
    if (kb_topo_is_file(full) || !shipped || strchr(base, '/'))
        return full;
    size_t n = strlen(base);
    bool yaml = (n > 5 && strcmp(base + n - 5, ".yaml") == 0) || (n > 4 && strcmp(base + n - 4, ".yml") == 0);
    char *in_shipped = kb_asprintf("%s/%s%s", shipped, base, yaml ? "" : ".yaml");
    if (!kb_topo_is_file(in_shipped)) {
        free(in_shipped);
        return full;
    }
    free(full);
    return in_shipped;
}

/* Reads a file and, if it names a `base:` topology (base_file), lays it
 * over that base. `chain` holds the files of the inclusion chain so far
 * (to name a cycle); a nested failure's message is already complete and is
 * passed up unchanged. */
#define MAX_BASE_DEPTH 16
static kb_ydoc *read_with_base(const char *path, const char *shipped, const char **chain, int depth, char **err)
{
    kb_ydoc *doc = kb_ydoc_load_file(path, err);
    if (!doc)
        return NULL;
    kb_ymark mark;
    char *base = kb_ydoc_take_scalar(doc, "base", &mark);
    if (!base)
        return doc;
    char where[512];
    kb_ymark_format(&mark, where, sizeof where);
    char *full = base_file(path, base, shipped);
    chain[depth] = path;
    char *real_full = realpath(full, NULL);
    bool cycle = false;
    for (int i = 0; i <= depth && real_full && !cycle; i++) {
        char *r = realpath(chain[i], NULL);
        cycle = r && strcmp(r, real_full) == 0;
        free(r);
    }
    free(real_full);
    if (cycle || depth + 1 >= MAX_BASE_DEPTH || !base[0]) {
        kb_buf b = {0};
        if (!base[0]) {
            kb_buf_printf(&b, "expected a topology file name");
        } else if (cycle) {
            kb_buf_printf(&b, "cycle of base files: ");
            for (int i = 0; i <= depth; i++)
                kb_buf_printf(&b, "%s -> ", chain[i]);
            kb_buf_printf(&b, "%s", full);
        } else {
            kb_buf_printf(&b, "more than %d nested base files", MAX_BASE_DEPTH);
        }
        *err = kb_asprintf("%s: base: %s", where, b.data);
        free(b.data);
        free(base);
        free(full);
        kb_ydoc_free(doc);
        return NULL;
    }
    bool bare = shipped && !strchr(base, '/');
    free(base);
    char *berr = NULL;
    kb_ydoc *b = read_with_base(full, shipped, chain, depth + 1, &berr);
    if (!b) {
        /* A base that cannot be read is named from the line that asked for it. */
        bool nested = strstr(berr, ": base: ") != NULL;
        *err = nested ? berr
               : bare ? kb_asprintf("%s: base: %s (nor is it a shipped topology in %s)", where, berr, shipped)
                      : kb_asprintf("%s: base: %s", where, berr);
        if (!nested)
            free(berr);
        free(full);
        kb_ydoc_free(doc);
        return NULL;
    }
    free(full);
    kb_ydoc_merge(b, doc);
    return b;
}

kb_topo *kb_topo_load(const char *path, const char *const *overrides, size_t noverrides,
                      const kb_registry *reg, char **err)
{
    return kb_topo_load_from(path, NULL, overrides, noverrides, reg, err);
}

kb_topo *kb_topo_load_from(const char *path, const char *shipped, const char *const *overrides,
                           size_t noverrides, const kb_registry *reg, char **err)
{
    const char *chain[MAX_BASE_DEPTH];
    kb_ydoc *doc = read_with_base(path, shipped, chain, 0, err);
    if (!doc)
        return NULL;
    return load_doc(doc, path, shipped, overrides, noverrides, reg, err);
}

kb_topo *kb_topo_load_string(const char *yaml, const char *name, const char *const *overrides,
                             size_t noverrides, const kb_registry *reg, char **err)
{
    kb_ydoc *doc = kb_ydoc_load_string(yaml, name, err);
    if (!doc)
        return NULL;
    return load_doc(doc, name, NULL, overrides, noverrides, reg, err);
}

void kb_topo_free(kb_topo *t)
{
    if (!t)
        return;
    kb_route_cache_free(t->routes);
    kb_places_free(t);
    kb_cfg_free(t);
    for (size_t i = 0; i < t->nnodes; i++)
        free(t->nodes[i].id);
    free(t->nodes);
    free(t->edges);
    free(t->by_name);
    free(t->rank);
    for (size_t i = 0; i < t->nspecs; i++) {
        free(t->specs[i]->role);
        free(t->specs[i]->kind);
        free(t->specs[i]->vals);
        free(t->specs[i]->latency_model);
        free(t->specs[i]);
    }
    free(t->specs);
    free(t->sip_topology);
    free(t->name);
    free(t->profile);
    free(t->path);
    free(t);
}

/* ---- queries ---- */

const char *kb_topo_name(const kb_topo *t) { return t->name; }
const char *kb_topo_profile(const kb_topo *t) { return t->profile; }
const char *kb_topo_path(const kb_topo *t) { return t->path; }
const kb_topo_params *kb_topo_params_of(const kb_topo *t) { return &t->p; }
size_t kb_topo_node_count(const kb_topo *t) { return t->nnodes; }
size_t kb_topo_edge_count(const kb_topo *t) { return t->nedges; }
const kb_node *kb_topo_node(const kb_topo *t, uint32_t idx) { return &t->nodes[idx]; }
const kb_edge *kb_topo_edge(const kb_topo *t, uint32_t idx) { return &t->edges[idx]; }
uint32_t kb_topo_rank(const kb_topo *t, uint32_t idx) { return t->rank[idx]; }
uint32_t kb_topo_by_rank(const kb_topo *t, uint32_t r) { return t->by_name[r]; }
struct kb_route_cache *kb_topo_route_cache(const kb_topo *t) { return t->routes; }

int64_t kb_topo_find(const kb_topo *t, const char *id)
{
    size_t lo = 0, hi = t->nnodes;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int c = strcmp(t->nodes[t->by_name[mid]].id, id);
        if (c == 0)
            return t->by_name[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

int64_t kb_topo_edge_between(const kb_topo *t, uint32_t src, uint32_t dst)
{
    const kb_node *n = &t->nodes[src];
    for (uint32_t i = 0; i < n->nout; i++)
        if (t->edges[n->first_out + i].dst == dst)
            return n->first_out + i;
    return -1;
}

int64_t kb_topo_edge_prop_ps(const kb_topo *t, const kb_edge *e)
{
    return llround(e->mm * t->p.ns_per_mm * 1000.0);
}

int64_t kb_edge_serialize_ps(const kb_edge *e, uint64_t nbytes)
{
    if (e->bw_gbs <= 0 || nbytes == 0)
        return 0;
    return llround((double)nbytes * 1000.0 / e->bw_gbs);
}

char *kb_topo_summary(const kb_topo *t)
{
    kb_buf b = {0};
    const kb_topo_params *p = &t->p;
    kb_buf_printf(&b, "topology %s (%s)\n", t->name, t->path);
    if (p->sips > 0) {
        kb_buf_printf(&b, "  sips: %d (%s", p->sips, p->sip_topology);
        if (p->sip_grid_w)
            kb_buf_printf(&b, " %dx%d", p->sip_grid_w, p->sip_grid_h);
        kb_buf_printf(&b, "), cubes per sip: %d (%dx%d), pes per cube: %d, io chiplets per sip: %d\n",
                      p->cubes_per_sip, p->cube_w, p->cube_h, p->pes_per_cube, p->io_per_sip);
        kb_buf_printf(&b, "  hbm: %d channels per pe x %g GB/s, %g GB per cube, slice %llu bytes\n",
                      p->hbm_channels_per_pe, p->hbm_channel_bw_gbs, p->hbm_total_gb_per_cube,
                      (unsigned long long)p->hbm_slice_bytes);
    }
    kb_buf_printf(&b, "  flit: %d bytes, wire: %g ns/mm\n", p->flit_bytes, p->ns_per_mm);
    kb_buf_printf(&b, "  nodes: %zu, directed edges: %zu\n", t->nnodes, t->nedges);
    /* Node counts per kind, in first-seen order (deterministic). */
    const char *kinds[64];
    size_t counts[64], nk = 0;
    for (size_t i = 0; i < t->nnodes; i++) {
        const char *k = t->nodes[i].spec->kind;
        size_t j = 0;
        while (j < nk && strcmp(kinds[j], k) != 0)
            j++;
        if (j == nk && nk < 64) {
            kinds[nk] = k;
            counts[nk++] = 0;
        }
        if (j < 64)
            counts[j]++;
    }
    kb_buf_printf(&b, "  node kinds:");
    for (size_t j = 0; j < nk; j++)
        kb_buf_printf(&b, " %s=%zu", kinds[j], counts[j]);
    kb_buf_printf(&b, "\n  edge kinds:");
    size_t ek[KB_EK_COUNT] = {0};
    for (size_t i = 0; i < t->nedges; i++)
        ek[t->edges[i].kind]++;
    for (int k = 0; k < KB_EK_COUNT; k++)
        if (ek[k])
            kb_buf_printf(&b, " %s=%zu", kb_edge_kind_name((kb_edge_kind)k), ek[k]);
    kb_buf_printf(&b, "\n");
    return kb_buf_take(&b);
}
