/* The resolved configuration of a topology (kb_topo_config_yaml; recorded
 * by src/topo/config.c, written by src/topo/config_dump.c): every value the
 * loader used, with its source, as a topology file that rebuilds the same
 * topology.
 *
 * The dump is read back here by a small indentation parser that turns it
 * into (key path, value, source) triples, so the checks address values by
 * the same key paths as the loader's messages. Counts are never written
 * down: they come from the loaded topologies. */
#define _POSIX_C_SOURCE 200809L

#include "comp/comp.h"
#include "topo/topo.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "topo_fixture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the dump as (path, value, source) triples ---- */

typedef struct entry {
    char *path, *value, *source;
} entry;

typedef struct dump {
    entry *e;
    size_t n;
} dump;

#define MAX_DEPTH 32

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    assert_non_null(d);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static void add_entry(dump *d, char (*seg)[64], int depth, const char *value, size_t vlen,
                      const char *source)
{
    char path[1024] = "";
    for (int i = 0; i < depth; i++) {
        if (i && seg[i][0] != '[')
            strcat(path, ".");
        strcat(path, seg[i]);
    }
    d->e = realloc(d->e, (d->n + 1) * sizeof *d->e);
    assert_non_null(d->e);
    d->e[d->n++] = (entry){strdup(path), dupn(value, vlen), strdup(source)};
}

/* Parses the block structure the writer emits: "key: value  # source",
 * "key:" opening a map or list, "- " opening a list element. */
static dump parse_dump(const char *yaml)
{
    dump d = {0};
    char seg[MAX_DEPTH][64];
    int ind[MAX_DEPTH], elems[MAX_DEPTH];
    int depth = 0;
    char *copy = strdup(yaml);
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#')
            continue;
        int indent = (int)strspn(line, " ");
        char *p = line + indent;
        if (strncmp(p, "- ", 2) == 0) {
            while (depth && ind[depth - 1] >= indent)
                depth--;
            assert_true(depth > 0 && depth < MAX_DEPTH); /* a list element belongs to a key */
            snprintf(seg[depth], sizeof seg[depth], "[%d]", elems[depth - 1]++);
            ind[depth] = indent;
            elems[depth++] = 0;
            indent += 2;
            p += 2;
        }
        char *colon = strstr(p, ":");
        char *hash = strstr(p, "  # ");
        assert_non_null(colon);
        while (depth && ind[depth - 1] >= indent)
            depth--;
        assert_true(depth < MAX_DEPTH);
        snprintf(seg[depth], sizeof seg[depth], "%.*s", (int)(colon - p), p);
        ind[depth] = indent;
        elems[depth++] = 0;
        if (colon[1] == '\0')
            continue; /* opens a map or a list */
        if (!hash)
            fail_msg("a value without its source: '%s'", line);
        assert_true(colon[1] == ' ');
        add_entry(&d, seg, depth, colon + 2, (size_t)(hash - colon - 2), hash + 4);
        depth--; /* a scalar has no children */
    }
    free(copy);
    return d;
}

static void free_dump(dump *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->e[i].path);
        free(d->e[i].value);
        free(d->e[i].source);
    }
    free(d->e);
}

static const entry *get(const dump *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].path, path) == 0)
            return &d->e[i];
    fail_msg("the dump has no value for %s", path);
    return NULL;
}

static bool has(const dump *d, const char *path)
{
    for (size_t i = 0; i < d->n; i++)
        if (strcmp(d->e[i].path, path) == 0)
            return true;
    return false;
}

static void assert_value(const dump *d, const char *path, const char *value, const char *source)
{
    const entry *e = get(d, path);
    if (strcmp(e->value, value) != 0)
        fail_msg("%s: value '%s', expected '%s'", path, e->value, value);
    if (source && strcmp(e->source, source) != 0)
        fail_msg("%s: source '%s', expected '%s'", path, e->source, source);
}

/* A "FILE:LINE:COL" source must point at the value's own text in FILE. */
static void assert_points_at_value(const dump *d, const char *path, const char *file)
{
    const entry *e = get(d, path);
    char *colon2 = strrchr(e->source, ':');
    assert_non_null(colon2);
    char *colon1 = colon2 - 1;
    while (colon1 > e->source && *colon1 != ':')
        colon1--;
    size_t flen = (size_t)(colon1 - e->source);
    if (flen != strlen(file) || strncmp(e->source, file, flen) != 0)
        fail_msg("%s: source '%s' does not name %s", path, e->source, file);
    int line = atoi(colon1 + 1), col = atoi(colon2 + 1);
    assert_true(line > 0 && col > 0);
    FILE *f = fopen(file, "r");
    assert_non_null(f);
    char buf[1024] = "";
    for (int i = 0; i < line; i++)
        assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_true((size_t)col <= strlen(buf));
    if (strncmp(buf + col - 1, e->value, strlen(e->value)) != 0)
        fail_msg("%s: %s:%d:%d holds '%s', not the value '%s'", path, file, line, col,
                 buf + col - 1, e->value);
}

/* ---- comparing two topologies ---- */

static void assert_same_topology(const kb_topo *a, const kb_topo *b)
{
    assert_string_equal(kb_topo_name(a), kb_topo_name(b));
    assert_int_equal(kb_topo_node_count(a), kb_topo_node_count(b));
    assert_int_equal(kb_topo_edge_count(a), kb_topo_edge_count(b));
    const kb_topo_params *p = kb_topo_params_of(a), *q = kb_topo_params_of(b);
    assert_true(p->ns_per_mm == q->ns_per_mm);
    assert_int_equal(p->flit_bytes, q->flit_bytes);
    assert_int_equal(p->sips, q->sips);
    assert_string_equal(p->sip_topology, q->sip_topology);
    assert_int_equal(p->sip_grid_w, q->sip_grid_w);
    assert_int_equal(p->sip_grid_h, q->sip_grid_h);
    assert_int_equal(p->cube_w, q->cube_w);
    assert_int_equal(p->cube_h, q->cube_h);
    assert_int_equal(p->cubes_per_sip, q->cubes_per_sip);
    assert_int_equal(p->pes_per_cube, q->pes_per_cube);
    assert_int_equal(p->io_per_sip, q->io_per_sip);
    assert_int_equal(p->hbm_channels_per_pe, q->hbm_channels_per_pe);
    assert_true(p->hbm_channel_bw_gbs == q->hbm_channel_bw_gbs);
    assert_true(p->hbm_total_gb_per_cube == q->hbm_total_gb_per_cube);
    assert_true(p->hbm_slice_bytes == q->hbm_slice_bytes);
    assert_true(p->cube_w_mm == q->cube_w_mm);
    assert_true(p->cube_h_mm == q->cube_h_mm);
    for (uint32_t i = 0; i < kb_topo_node_count(a); i++) {
        const kb_node *m = kb_topo_node(a, i), *n = kb_topo_node(b, i);
        assert_string_equal(m->id, n->id);
        assert_string_equal(m->spec->impl->name, n->spec->impl->name);
        for (size_t k = 0; k < m->spec->impl->nattrs; k++)
            assert_true(m->spec->vals[k] == n->spec->vals[k]);
    }
    /* every edge, bandwidths and lengths exactly */
    for (uint32_t i = 0; i < kb_topo_edge_count(a); i++) {
        const kb_edge *e = kb_topo_edge(a, i), *f = kb_topo_edge(b, i);
        assert_int_equal(e->src, f->src);
        assert_int_equal(e->dst, f->dst);
        assert_int_equal(e->kind, f->kind);
        if (e->bw_gbs != f->bw_gbs || e->mm != f->mm || e->routing_mm != f->routing_mm)
            fail_msg("edge %s -> %s: bw %.17g/%.17g mm %.17g/%.17g routing %.17g/%.17g",
                     kb_topo_node(a, e->src)->id, kb_topo_node(a, e->dst)->id, e->bw_gbs, f->bw_gbs,
                     e->mm, f->mm, e->routing_mm, f->routing_mm);
    }
}

/* The dump without comments: what a reload must reproduce (sources differ). */
static char *values_only(const char *yaml)
{
    char *out = calloc(strlen(yaml) + 1, 1);
    assert_non_null(out);
    char *w = out;
    for (const char *line = yaml; *line;) {
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
    return out;
}

/* Loads the dump of t as a topology and checks it is the same one. */
static void assert_round_trip(const kb_registry *reg, const kb_topo *t)
{
    char *yaml = kb_topo_config_yaml(t);
    kb_topo *t2 = load_string_ok(reg, yaml, "dump.yaml");
    assert_same_topology(t, t2);
    char *yaml2 = kb_topo_config_yaml(t2);
    char *v1 = values_only(yaml), *v2 = values_only(yaml2);
    assert_string_equal(v1, v2);
    free(v1);
    free(v2);
    free(yaml2);
    free(yaml);
    kb_topo_free(t2);
}

/* ---- tests ---- */

static void test_sources_name_the_file_the_override_or_the_default(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    const char *ov[] = {"cube.links.router_link_bw_gbs=128"};
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", ov, 1);
    char *yaml = kb_topo_config_yaml(t);
    dump d = parse_dump(yaml);

    /* written in the file itself */
    assert_value(&d, "sip.cube_mesh.w", "2", NULL);
    assert_points_at_value(&d, "sip.cube_mesh.w", "topologies/small_2x2.yaml");
    assert_points_at_value(&d, "system.sips.count", "topologies/small_2x2.yaml");
    assert_points_at_value(&d, "name", "topologies/small_2x2.yaml");
    /* from its base file */
    assert_value(&d, "system.ns_per_mm", "0.01", NULL);
    assert_points_at_value(&d, "system.ns_per_mm", "topologies/default.yaml");
    assert_points_at_value(&d, "sip.io_chiplets[0].cube_ports[1].phy", "topologies/default.yaml");
    assert_points_at_value(&d, "cube.components.hbm_ctrl.attrs.burst_bytes",
                           "topologies/default.yaml");
    assert_points_at_value(&d, "cube.components.hbm_ctrl.impl", "topologies/default.yaml");
    /* from the override */
    assert_value(&d, "cube.links.router_link_bw_gbs", "128",
                 "--set cube.links.router_link_bw_gbs=128");
    assert_non_null(strstr(yaml, "\n# override: --set cube.links.router_link_bw_gbs=128\n"));
    /* absent everywhere: the reader's or the implementation's default */
    assert_value(&d, "system.switch.kind", "switch", "default");
    assert_value(&d, "cube.pe_template.components.pe_cpu.attrs.overhead_ns", "0.0", "default");
    assert_value(&d, "cube.pe_template.links.cpu_to_scheduler_bw_gbs", "0.0", "default");
    /* the header names the topology and its file; base: is not written */
    assert_non_null(strstr(yaml, "'small_2x2' (topologies/small_2x2.yaml)"));
    assert_false(has(&d, "base"));
    assert_null(strstr(yaml, "\nbase:"));

    free_dump(&d);
    free(yaml);
    kb_topo_free(t);
    kb_registry_free(reg);
}

static void test_absent_keys_and_sections_are_listed_as_defaults(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    const char *text = "graph:\n"
                       "  nodes:\n"
                       "    - {id: a, impl: builtin.forwarding, attrs: {overhead_ns: 1.5}}\n"
                       "    - {id: b}\n"
                       "    - {id: c}\n"
                       "  links:\n"
                       "    - {src: a, dst: b, bw_gbs: 100, bidir: false}\n"
                       "    - {src: b, dst: c}\n"
                       "    - {src: c, dst: a, bidir: false}\n";
    kb_topo *t = load_string_ok(reg, text, "dir/two nodes.yaml");
    char *yaml = kb_topo_config_yaml(t);
    dump d = parse_dump(yaml);

    /* the name comes from the file name, and is kept by a reload elsewhere */
    assert_value(&d, "name", "\"two nodes\"", "default");
    assert_value(&d, "system.ns_per_mm", "0.01", "default");
    assert_value(&d, "system.flit_bytes", "256", "default");
    assert_value(&d, "graph.nodes[0].id", "a", "dir/two nodes.yaml:3:12");
    assert_value(&d, "graph.nodes[0].attrs.overhead_ns", "1.5", "dir/two nodes.yaml:3:62");
    assert_value(&d, "graph.nodes[1].kind", "transit", "default");
    assert_value(&d, "graph.nodes[1].impl", "builtin.forwarding", "default");
    assert_value(&d, "graph.nodes[1].attrs.overhead_ns", "0.0", "default");
    assert_value(&d, "graph.links[0].bw_gbs", "100", "dir/two nodes.yaml:7:32");
    assert_value(&d, "graph.links[0].bidir", "false", "dir/two nodes.yaml:7:44");
    assert_value(&d, "graph.links[0].mm", "0.0", "default");
    assert_value(&d, "graph.links[1].bidir", "true", "default");
    assert_value(&d, "graph.links[1].bw_gbs", "256.0", "default");
    /* lists are YAML lists, in file order */
    assert_non_null(strstr(yaml, "\ngraph:\n  nodes:\n    - id: a  #"));
    assert_round_trip(reg, t);

    free_dump(&d);
    free(yaml);
    kb_topo_free(t);
    kb_registry_free(reg);
}

static void test_numbers_read_back_identically(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    /* the routing weight defaults to cube w + h: a sum with no short decimal */
    const char *ov[] = {"cube.geometry.cube_mm.w=15.1", "cube.geometry.cube_mm.h=14.2",
                        "sip.links.ucie_seam_bw_gbs=500.123456789012345678"};
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", ov, 3);
    char *yaml = kb_topo_config_yaml(t);
    dump d = parse_dump(yaml);
    const entry *w = get(&d, "cube.links.ucie_routing_weight_mm");
    assert_string_equal(w->source, "default");
    assert_true(strtod(w->value, NULL) == 15.1 + 14.2);
    /* a value from an override keeps its text */
    assert_value(&d, "sip.links.ucie_seam_bw_gbs", "500.123456789012345678",
                 "--set sip.links.ucie_seam_bw_gbs=500.123456789012345678");
    assert_round_trip(reg, t);
    free_dump(&d);
    free(yaml);
    kb_topo_free(t);
    kb_registry_free(reg);
}

static void test_dump_rebuilds_the_same_topology(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    const char *ov[] = {"cube.links.router_link_bw_gbs=128"};
    struct {
        const char *path;
        const char *const *ov;
        size_t nov;
    } cases[] = {
        {"topologies/default.yaml", NULL, 0},
        {"topologies/small_2x2.yaml", ov, 1},
        {"topologies/chain.yaml", NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kb_topo *t = load_ok(reg, cases[i].path, cases[i].ov, cases[i].nov);
        assert_round_trip(reg, t);
        kb_topo_free(t);
    }
    kb_registry_free(reg);
}

/* A file name with YAML line breaks (NEL, U+2028) in the header comment:
 * written as '?', so the comment does not end early and the dump loads. */
static void test_a_path_with_line_breaks_stays_in_its_comment(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    char *text = NULL;
    size_t len = 0;
    FILE *f = fopen("topologies/chain.yaml", "r");
    assert_non_null(f);
    text = calloc(1, 1 << 16);
    len = fread(text, 1, (1 << 16) - 1, f);
    fclose(f);
    assert_true(len > 0);
    kb_topo *t = load_string_ok(reg, text, "odd\xc2\x85name\xe2\x80\xa8.yaml");
    char *yaml = kb_topo_config_yaml(t);
    assert_non_null(strstr(yaml, "(odd?name?.yaml)"));
    free(yaml);
    assert_round_trip(reg, t);
    kb_topo_free(t);
    free(text);
    kb_registry_free(reg);
}

static void test_dump_is_byte_identical_across_loads(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *a = load_ok(reg, "topologies/default.yaml", NULL, 0);
    kb_topo *b = load_ok(reg, "topologies/default.yaml", NULL, 0);
    char *ya = kb_topo_config_yaml(a), *yb = kb_topo_config_yaml(b);
    assert_string_equal(ya, yb);
    /* and every line of a value carries its source */
    dump d = parse_dump(ya);
    assert_true(d.n > 0);
    free_dump(&d);
    free(ya);
    free(yb);
    kb_topo_free(a);
    kb_topo_free(b);
    kb_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sources_name_the_file_the_override_or_the_default),
        cmocka_unit_test(test_absent_keys_and_sections_are_listed_as_defaults),
        cmocka_unit_test(test_numbers_read_back_identically),
        cmocka_unit_test(test_dump_rebuilds_the_same_topology),
        cmocka_unit_test(test_dump_is_byte_identical_across_loads),
        cmocka_unit_test(test_a_path_with_line_breaks_stays_in_its_comment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
