/* The YAML document tree the topology loader reads through
 * (src/topo/ydoc.h): positions and key paths in every error, duplicate
 * keys, known/unknown key tracking, typed views, `--set` overrides and the
 * `base:` merge. Over ~500 lines as one suite for the one header (ydoc.c,
 * ydoc_set.c and ydoc_read.c implement it): its cases read as its spec. */
#include "topo/ydoc.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kb_ydoc *load(const char *text, const char *name)
{
    char *err = NULL;
    kb_ydoc *d = kb_ydoc_load_string(text, name, &err);
    if (!d)
        fail_msg("cannot parse %s: %s", name, err);
    return d;
}

/* The error of a document that must not parse (caller frees). */
static char *load_error(const char *text, const char *name)
{
    char *err = NULL;
    kb_ydoc *d = kb_ydoc_load_string(text, name, &err);
    if (d) {
        kb_ydoc_free(d);
        fail_msg("%s parsed but should be rejected", name);
    }
    assert_non_null(err);
    return err;
}

/* map.key, which must exist. */
static kb_ynode *get(kb_ynode *map, const char *key)
{
    kb_ynode *n = kb_ymap_get(map, key);
    if (!n)
        fail_msg("no key '%s' in %s", key, map && map->path && map->path[0] ? map->path : "root");
    return n;
}

static kb_ynode *item(kb_ynode *seq, size_t i)
{
    assert_int_equal(seq->type, KB_Y_SEQ);
    if (i >= seq->n)
        fail_msg("%s has %zu items, wanted [%zu]", seq->path, seq->n, i);
    return seq->items[i].val;
}

static void set_ok(kb_ydoc *d, const char *assignment)
{
    char *err = NULL;
    if (!kb_ydoc_set(d, assignment, &err))
        fail_msg("--set %s failed: %s", assignment, err);
    assert_null(err);
}

static char *set_error(kb_ydoc *d, const char *assignment)
{
    char *err = NULL;
    if (kb_ydoc_set(d, assignment, &err))
        fail_msg("--set %s succeeded but should be rejected", assignment);
    assert_non_null(err);
    return err;
}

/* ---- parsing ---- */

/* The flow list opened on line 2 is still open when line 3 starts a new
 * key; libyaml notices at line 3, column 2 (1-based). */
static void test_syntax_error_names_file_line_col(void **state)
{
    (void)state;
    char *err = load_error("a: 1\nb: [1, 2\nc: 3\n", "doc.yaml");
    assert_prefix(err, "doc.yaml:3:2: YAML syntax error: ");
    free(err);
}

static void test_tab_indentation_is_a_syntax_error_at_its_line(void **state)
{
    (void)state;
    char *err = load_error("a:\n\tb: 1\n", "tabs.yaml");
    assert_prefix(err, "tabs.yaml:2:1: YAML syntax error");
    free(err);
}

/* Key x is written on lines 3 and 4 (column 3 after the two-space indent):
 * the error points at the second and names the first. */
static void test_duplicate_key_is_rejected_naming_both_lines(void **state)
{
    (void)state;
    char *err = load_error("a: 1\nb:\n  x: 1\n  x: 2\n", "dup.yaml");
    assert_prefix(err, "dup.yaml:4:3: duplicate key 'x' (first at line 3)");
    free(err);
    /* Flow maps too: the second `w` is at column 11 of line 1. */
    err = load_error("m: {w: 1, w: 2}\n", "flow.yaml");
    assert_prefix(err, "flow.yaml:1:11: duplicate key 'w' (first at line 1)");
    free(err);
}

static void test_aliases_and_second_documents_are_rejected_with_position(void **state)
{
    (void)state;
    char *err = load_error("a: &x 1\nb: *x\n", "alias.yaml");
    assert_prefix(err, "alias.yaml:2:4: ");
    assert_has(err, "aliases");
    free(err);
    err = load_error("a: 1\n---\nb: 2\n", "two.yaml");
    assert_prefix(err, "two.yaml:2:1: only one YAML document");
    free(err);
}

/* Other control characters made by escapes: NEL, U+2028 and U+2029 are line
 * breaks to YAML (a name holding NEL broke --dump-config's header comment:
 * the topology fuzzer's finding), the rest cannot be shown; tabs and line
 * feeds stay legal. */
static void test_escaped_control_characters_are_rejected(void **state)
{
    (void)state;
    char *err = load_error("name: \"a\\Nb\"\n", "nel.yaml");
    assert_string_equal(err, "nel.yaml:1:7: name: the value \"a\xc2\x85" "b\" contains the control character U+0085 "
                             "(byte 2); a topology string may hold tabs and line feeds but no other control "
                             "character");
    free(err);
    err = load_error("name: \"a\\vb\"\n", "vt.yaml");
    assert_prefix(err, "vt.yaml:1:7: name: the value \"a?b\" contains the control character U+000B (byte 2)");
    free(err);
    err = load_error("a:\n  \"k\\u2028\": 1\n", "ls.yaml");
    assert_prefix(err, "ls.yaml:2:3: a: the key \"k\xe2\x80\xa8\" contains the control character U+2028");
    free(err);
    err = load_error("d: \"x\\u2029\"\n", "ps.yaml");
    assert_prefix(err, "ps.yaml:1:4: d: the value");
    free(err);
    kb_ydoc *d = load("d: \"tab\\there\\nand a line\"\n", "ok.yaml");
    assert_non_null(d);
    kb_ydoc_free(d);
}

/* A NUL made by an escape inside a quoted scalar (the raw text has none)
 * would end the C string every reader takes: refused wherever it is, in a
 * value or a key, at any depth, naming the position and the key path. */
static void test_escaped_nul_is_rejected_in_values_and_keys_with_its_path(void **state)
{
    (void)state;
    char *err = load_error("name: \"my\\0topology\"\n", "n.yaml");
    assert_string_equal(err, "n.yaml:1:7: name: the value \"my\\0topology\" contains a NUL character (an escape "
                             "such as \\0 or \\x00); a topology string may not (it would end the string there)");
    free(err);
    err = load_error("a:\n  b: [x, {c: \"p\\x00q\"}]\n", "deep.yaml");
    assert_prefix(err, "deep.yaml:2:14: a.b[1].c: the value \"p\\0q\" contains a NUL character");
    free(err);
    err = load_error("a:\n  \"k\\u0000\": 1\n", "key.yaml");
    assert_prefix(err, "key.yaml:2:3: a: the key \"k\\0\" contains a NUL character");
    free(err);
    err = load_error("- \"\\0\"\n", "top.yaml");
    assert_prefix(err, "top.yaml:1:3: [0]: the value \"\\0\" contains a NUL character");
    free(err);
    /* an override's value: the error names the override and its key path */
    kb_ydoc *d = load("a: 1\n", "o.yaml");
    err = set_error(d, "x.y=\"1\\02\"");
    assert_string_equal(err, "--set x.y=\"1\\02\":1:1: x.y: the value \"1\\02\" contains a NUL character (an "
                             "escape such as \\0 or \\x00); a topology string may not (it would end the string there)");
    free(err);
    kb_ydoc_free(d);
}

/* 010 would be 8 to strtoll (and YAML 1.1) but 10 to YAML 1.2: refused. */
static void test_integer_with_a_leading_zero_is_rejected(void **state)
{
    (void)state;
    kb_ydoc *d = load("a: 010\nb: -07\nc: 0\nd: 0x10\n", "z.yaml");
    kb_ynode *r = kb_ydoc_root(d);
    int64_t v = -1;
    char *err = NULL;
    assert_false(kb_yas_int(kb_ymap_get(r, "a"), &v, &err));
    assert_string_equal(err, "z.yaml:1:4: a: '010' has a leading zero (octal or decimal?); write the number "
                             "without it");
    free(err);
    err = NULL;
    assert_false(kb_yas_int(kb_ymap_get(r, "b"), &v, &err));
    free(err);
    assert_true(kb_yas_int(kb_ymap_get(r, "c"), &v, &err));
    assert_int_equal(v, 0);
    assert_true(kb_yas_int(kb_ymap_get(r, "d"), &v, &err));
    assert_int_equal(v, 16);
    kb_ydoc_free(d);
}

static void test_empty_document_is_an_empty_map(void **state)
{
    (void)state;
    kb_ydoc *d = load("", "empty.yaml");
    kb_ynode *root = kb_ydoc_root(d);
    assert_int_equal(root->type, KB_Y_MAP);
    assert_int_equal(root->n, 0);
    assert_null(kb_ydoc_unknown(d));
    kb_ydoc_free(d);
}

/* Every node knows its key path ("a.b[1].c") and where it was written:
 * line 4, column 11 is the `abc` in "    - {c: abc}". Quoted scalars are
 * not plain (so they are never numbers). */
static void test_nodes_carry_key_path_and_position(void **state)
{
    (void)state;
    kb_ydoc *d = load("a:\n  b:\n    - {c: 1}\n    - {c: abc}\nq: \"12\"\n", "p.yaml");
    kb_ynode *root = kb_ydoc_root(d);
    kb_ynode *c = get(item(get(get(root, "a"), "b"), 1), "c");
    assert_string_equal(c->path, "a.b[1].c");
    assert_string_equal(c->text, "abc");
    assert_string_equal(c->mark.src, "p.yaml");
    assert_int_equal(c->mark.line, 4);
    assert_int_equal(c->mark.col, 11);
    assert_true(c->plain);
    kb_ynode *q = get(root, "q");
    assert_false(q->plain);
    assert_string_equal(q->text, "12");
    char buf[64];
    kb_ymark_format(&c->mark, buf, sizeof buf);
    assert_string_equal(buf, "p.yaml:4:11");
    kb_ydoc_free(d);
}

/* ---- known / unknown keys ---- */

/* alpha is consumed, beta only declared known, gamma neither: gamma (line 3,
 * column 1) is the unknown key, and the message lists the known ones in the
 * order they were asked for, including a key that was asked for but absent. */
static void test_ymap_unknown_names_the_unread_key_and_lists_known_keys(void **state)
{
    (void)state;
    kb_ydoc *d = load("alpha: 1\nbeta: 2\ngamma: 3\n", "k.yaml");
    kb_ynode *root = kb_ydoc_root(d);
    assert_non_null(kb_ymap_get(root, "alpha"));
    kb_ymap_know(root, "beta");
    assert_null(kb_ymap_get(root, "delta")); /* absent: NULL, but now known */
    char *err = kb_ymap_unknown(root);
    assert_string_equal(err, "k.yaml:3:1: gamma: unknown key (known keys here: alpha, beta, delta)");
    free(err);
    /* Reading gamma leaves nothing unknown. */
    assert_non_null(kb_ymap_get(root, "gamma"));
    assert_null(kb_ymap_unknown(root));
    kb_ydoc_free(d);
}

static void test_ymap_unknown_says_when_nothing_is_expected(void **state)
{
    (void)state;
    kb_ydoc *d = load("stray: 1\n", "n.yaml");
    char *err = kb_ymap_unknown(kb_ydoc_root(d));
    assert_string_equal(err, "n.yaml:1:1: stray: unknown key (nothing is expected here)");
    free(err);
    kb_ydoc_free(d);
}

/* kb_ydoc_unknown walks the whole tree: every unknown key of the nested
 * maps is reported, one line each in document order (a.yy on line 3 before
 * b.zz on line 5, then c.deep), each with the keys known in its own map. */
static void test_ydoc_unknown_reports_nested_unknown_keys_in_document_order(void **state)
{
    (void)state;
    kb_ydoc *d = load("a:\n  x: 1\n  yy: 2\nb:\n  zz: 3\nc:\n  deep: {w: 1}\n", "u.yaml");
    kb_ynode *root = kb_ydoc_root(d);
    kb_ynode *a = get(root, "a");
    get(a, "x");
    kb_ynode *b = get(root, "b");
    get(root, "c");
    char *err = kb_ydoc_unknown(d);
    assert_string_equal(err, "u.yaml:3:3: a.yy: unknown key (known keys here: x)\n"
                             "u.yaml:5:3: b.zz: unknown key (nothing is expected here)\n"
                             "u.yaml:7:3: c.deep: unknown key (nothing is expected here)");
    free(err);
    get(a, "yy");
    err = kb_ydoc_unknown(d);
    assert_string_equal(err, "u.yaml:5:3: b.zz: unknown key (nothing is expected here)\n"
                             "u.yaml:7:3: c.deep: unknown key (nothing is expected here)");
    free(err);
    get(b, "zz");
    err = kb_ydoc_unknown(d);
    assert_string_equal(err, "u.yaml:7:3: c.deep: unknown key (nothing is expected here)");
    free(err);
    kb_ymap_know(get(root, "c"), "deep");
    assert_null(kb_ydoc_unknown(d));
    kb_ydoc_free(d);
}

/* Keys under an unknown key are not reported separately: the typo is the
 * unknown parent (`cueb`), not the keys inside it. */
static void test_ydoc_unknown_reports_the_unknown_parent_not_its_children(void **state)
{
    (void)state;
    kb_ydoc *d = load("cube: {a: 1}\ncueb:\n  links: {x: 1}\n", "p.yaml");
    kb_ynode *root = kb_ydoc_root(d);
    get(get(root, "cube"), "a");
    char *err = kb_ydoc_unknown(d);
    assert_string_equal(err, "p.yaml:2:1: cueb: unknown key (known keys here: cube)");
    free(err);
    kb_ydoc_free(d);
}

/* ---- typed views ---- */

/* Each view names file:line:col and the key path of the offending value. */
static void test_typed_views_name_the_key_path_on_type_errors(void **state)
{
    (void)state;
    kb_ydoc *d = load("a:\n  b:\n    - {c: 1}\n    - {c: abc, i: 2.5, f: yes, m: {k: 1}, s: [1], q: \"7\"}\n",
                      "t.yaml");
    kb_ynode *el = item(get(get(kb_ydoc_root(d), "a"), "b"), 1);
    char *err = NULL;
    double dv;
    int64_t iv;
    bool bv;
    const char *sv;

    assert_false(kb_yas_number(get(el, "c"), &dv, &err));
    assert_string_equal(err, "t.yaml:4:11: a.b[1].c: expected a number, got 'abc'");
    free(err);
    err = NULL;
    assert_false(kb_yas_int(get(el, "i"), &iv, &err));
    assert_prefix(err, "t.yaml:4:19: a.b[1].i: expected an integer, got '2.5'");
    free(err);
    err = NULL;
    assert_false(kb_yas_bool(get(el, "f"), &bv, &err));
    assert_prefix(err, "t.yaml:4:27: a.b[1].f: expected true or false, got 'yes'");
    free(err);
    err = NULL;
    assert_false(kb_yas_string(get(el, "m"), &sv, &err));
    assert_prefix(err, "t.yaml:4:35: a.b[1].m: expected a string, got a map");
    free(err);
    err = NULL;
    assert_false(kb_yas_number(get(el, "s"), &dv, &err));
    assert_prefix(err, "t.yaml:4:46: a.b[1].s: expected a number, got a list");
    free(err);
    err = NULL;
    /* A quoted "7" is a string, not a number. */
    assert_false(kb_yas_int(get(el, "q"), &iv, &err));
    assert_prefix(err, "t.yaml:4:54: a.b[1].q: expected an integer, got '7'");
    free(err);
    err = NULL;
    assert_false(kb_yas_map(get(el, "s"), &err));
    assert_has(err, "a.b[1].s: expected a map");
    free(err);
    err = NULL;
    assert_false(kb_yas_seq(get(el, "m"), &err));
    assert_has(err, "a.b[1].m: expected a list, got a map");
    free(err);
    kb_ydoc_free(d);
}

static void test_typed_views_read_valid_values(void **state)
{
    (void)state;
    kb_ydoc *d = load("n: 2.5e1\ni: -7\nh: 0x10\nt: true\nf: false\ns: \"x y\"\ne:\nl: [1]\n", "v.yaml");
    kb_ynode *root = kb_ydoc_root(d);
    char *err = NULL;
    double dv = 0;
    int64_t iv = 0;
    bool bv = false;
    const char *sv = NULL;
    assert_true(kb_yas_number(get(root, "n"), &dv, &err));
    assert_float_equal(dv, 25.0, 0);
    assert_true(kb_yas_int(get(root, "i"), &iv, &err));
    assert_int_equal(iv, -7);
    assert_true(kb_yas_int(get(root, "h"), &iv, &err));
    assert_int_equal(iv, 16);
    /* An integer is also a number. */
    assert_true(kb_yas_number(get(root, "i"), &dv, &err));
    assert_float_equal(dv, -7.0, 0);
    assert_true(kb_yas_bool(get(root, "t"), &bv, &err));
    assert_true(bv);
    assert_true(kb_yas_bool(get(root, "f"), &bv, &err));
    assert_false(bv);
    assert_true(kb_yas_string(get(root, "s"), &sv, &err));
    assert_string_equal(sv, "x y");
    /* `e:` with nothing after it reads as an empty map. */
    assert_true(kb_yas_map(get(root, "e"), &err));
    assert_int_equal(get(root, "e")->n, 0);
    assert_true(kb_yas_seq(get(root, "l"), &err));
    assert_null(err);
    kb_ydoc_free(d);
}

/* kb_yerr / kb_yerr_key: "src:line:col: path: message". The key form uses
 * the map's position and appends the missing key to its path. */
static void test_yerr_formats_position_path_and_message(void **state)
{
    (void)state;
    kb_ydoc *d = load("system:\n  sips:\n    topology: ring_1d\n", "e.yaml");
    kb_ynode *sips = get(get(kb_ydoc_root(d), "system"), "sips");
    char *err = kb_yerr_key(sips, "count", "missing: %s", "how many");
    assert_string_equal(err, "e.yaml:3:5: system.sips.count: missing: how many");
    free(err);
    err = kb_yerr(get(sips, "topology"), "bad %d", 7);
    assert_string_equal(err, "e.yaml:3:15: system.sips.topology: bad 7");
    free(err);
    /* The root has an empty path: no path segment. */
    err = kb_yerr(kb_ydoc_root(d), "whole file");
    assert_string_equal(err, "e.yaml:1:1: whole file");
    free(err);
    kb_ydoc_free(d);
}

/* ---- overrides ---- */

static const char *const doc_text =
    "name: default\n"
    "system:\n"
    "  ns_per_mm: 0.01\n"
    "  sips: { count: 2 }\n"
    "mesh: { w: 4, h: 4, extra: 1 }\n"
    "cube_ports:\n"
    "  - { phy: P0, cube: [0, 0] }\n"
    "  - { phy: P1, cube: [1, 0] }\n"
    "empty:\n";

/* Replacing a scalar: the new value is parsed as YAML and its mark is the
 * override ("--set ..." with line 0), so errors about it name the override. */
static void test_set_replaces_a_scalar_and_marks_it_as_the_override(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    set_ok(d, "system.ns_per_mm=0.5");
    kb_ynode *v = get(get(kb_ydoc_root(d), "system"), "ns_per_mm");
    assert_int_equal(v->type, KB_Y_SCALAR);
    assert_string_equal(v->text, "0.5");
    assert_true(v->plain);
    assert_string_equal(v->path, "system.ns_per_mm");
    assert_string_equal(v->mark.src, "--set system.ns_per_mm=0.5");
    assert_int_equal(v->mark.line, 0);
    char *err = kb_yerr(v, "too slow");
    assert_string_equal(err, "--set system.ns_per_mm=0.5: system.ns_per_mm: too slow");
    free(err);
    /* Siblings keep their file positions. */
    kb_ynode *sips = get(get(kb_ydoc_root(d), "system"), "sips");
    assert_string_equal(sips->mark.src, "o.yaml");
    assert_int_equal(sips->mark.line, 4);
    kb_ydoc_free(d);
}

static void test_set_creates_missing_keys_along_the_path(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    set_ok(d, "cube.links.router_link_bw_gbs=128");
    set_ok(d, "system.sips.topology=torus_2d");
    kb_ynode *root = kb_ydoc_root(d);
    kb_ynode *bw = get(get(get(root, "cube"), "links"), "router_link_bw_gbs");
    assert_string_equal(bw->text, "128");
    assert_string_equal(bw->path, "cube.links.router_link_bw_gbs");
    /* The created intermediate maps carry the override as their source. */
    assert_string_equal(get(root, "cube")->mark.src, "--set cube.links.router_link_bw_gbs=128");
    kb_ynode *sips = get(get(root, "system"), "sips");
    assert_string_equal(get(sips, "topology")->text, "torus_2d");
    assert_string_equal(get(sips, "count")->text, "2");
    /* A key written with no value (null) can be descended into. */
    set_ok(d, "empty.inner=3");
    assert_string_equal(get(get(root, "empty"), "inner")->text, "3");
    kb_ydoc_free(d);
}

/* cube_ports.0.phy addresses element 0 of the list; element 1 and the
 * other keys of element 0 are untouched. */
static void test_set_indexes_into_a_list_by_number(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    set_ok(d, "cube_ports.0.phy=P9");
    kb_ynode *ports = get(kb_ydoc_root(d), "cube_ports");
    assert_int_equal(ports->n, 2);
    kb_ynode *p0 = item(ports, 0);
    assert_string_equal(get(p0, "phy")->text, "P9");
    assert_string_equal(get(p0, "phy")->path, "cube_ports[0].phy");
    assert_int_equal(get(p0, "cube")->type, KB_Y_SEQ);
    assert_string_equal(get(item(ports, 1), "phy")->text, "P1");
    /* A list element can be replaced whole, with a flow value. */
    set_ok(d, "cube_ports.1.cube=[3, 2]");
    kb_ynode *c = get(item(ports, 1), "cube");
    assert_int_equal(c->n, 2);
    assert_string_equal(item(c, 0)->text, "3");
    assert_string_equal(item(c, 1)->path, "cube_ports[1].cube[1]");
    kb_ydoc_free(d);
}

/* A flow map value replaces the old value whole (no merge: `extra` goes),
 * and every node inside it carries the override's mark. */
static void test_set_flow_map_value_replaces_the_old_map(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    set_ok(d, "mesh={w: 2, h: 3}");
    kb_ynode *mesh = get(kb_ydoc_root(d), "mesh");
    assert_int_equal(mesh->type, KB_Y_MAP);
    assert_int_equal(mesh->n, 2);
    kb_ynode *w = get(mesh, "w");
    kb_ynode *h = get(mesh, "h");
    assert_string_equal(w->text, "2");
    assert_string_equal(h->text, "3");
    assert_null(kb_ymap_get(mesh, "extra"));
    assert_string_equal(h->path, "mesh.h");
    assert_string_equal(h->mark.src, "--set mesh={w: 2, h: 3}");
    assert_int_equal(h->mark.line, 0);
    assert_int_equal(mesh->items[0].key_mark.line, 0);
    kb_ydoc_free(d);
}

/* Every node of an override value carries the override as its source,
 * however many there are: 70 list items. */
static void test_set_marks_every_node_of_a_long_list_value(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    char assignment[512] = "mesh=[";
    for (int i = 0; i < 70; i++) {
        char num[8];
        snprintf(num, sizeof num, "%s%d", i ? "," : "", i);
        strcat(assignment, num);
    }
    strcat(assignment, "]");
    set_ok(d, assignment);
    kb_ynode *mesh = get(kb_ydoc_root(d), "mesh");
    assert_int_equal(mesh->n, 70);
    char bad[128] = "";
    for (size_t i = 0; i < mesh->n && !bad[0]; i++) {
        const kb_ynode *it = mesh->items[i].val;
        if (it->mark.line != 0 || strncmp(it->mark.src, "--set mesh=", 11) != 0)
            snprintf(bad, sizeof bad, "item %zu is marked line %d, col %d of the value text", i,
                     it->mark.line, it->mark.col);
    }
    kb_ydoc_free(d);
    if (bad[0])
        fail_msg("not every node of the override carries the override mark: %s", bad);
}

/* The list has 2 elements: index 5 (and a non-number, and -1) is an error
 * naming the override, the list's path and its length. */
static void test_set_rejects_an_index_past_the_list(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    char *err = set_error(d, "cube_ports.5.phy=P9");
    assert_string_equal(err, "--set cube_ports.5.phy=P9: '5' is not an index of cube_ports (a list of 2)");
    free(err);
    err = set_error(d, "cube_ports.x=1");
    assert_has(err, "'x' is not an index of cube_ports");
    free(err);
    err = set_error(d, "cube_ports.-1=1");
    assert_has(err, "'-1' is not an index of cube_ports");
    free(err);
    /* Nothing was changed. */
    assert_string_equal(get(item(get(kb_ydoc_root(d), "cube_ports"), 0), "phy")->text, "P0");
    kb_ydoc_free(d);
}

/* `name` is the scalar "default": it has no keys, so name.x must be an
 * error (ydoc.h: "Returns false with *err set when the path runs into a
 * scalar"; docs/topology.md: nothing is silently replaced), and the
 * scalar must survive. Likewise element 1 of cube_ports[0].cube is the
 * scalar 0. */
static void test_set_rejects_descending_into_a_scalar(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    char *err = NULL;
    bool ok = kb_ydoc_set(d, "name.x=1", &err);
    kb_ynode *name = kb_ymap_get(kb_ydoc_root(d), "name");
    if (ok) {
        bool map = name->type == KB_Y_MAP;
        kb_ydoc_free(d);
        fail_msg("--set name.x=1 succeeded and turned the scalar name into %s",
                 map ? "a map" : "something else");
    }
    assert_has(err, "name");
    free(err);
    assert_int_equal(name->type, KB_Y_SCALAR);
    assert_string_equal(name->text, "default");
    err = set_error(d, "cube_ports.0.cube.1.z=5");
    free(err);
    kb_ydoc_free(d);
}

static void test_set_rejects_malformed_assignments(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    char *err = set_error(d, "novalue");
    assert_string_equal(err, "--set novalue: expected key.path=value");
    free(err);
    err = set_error(d, "=5");
    assert_string_equal(err, "--set =5: expected key.path=value");
    free(err);
    /* The value is YAML: a syntax error in it names the override. */
    err = set_error(d, "mesh={w: 2");
    assert_prefix(err, "--set mesh={w: 2");
    assert_has(err, "YAML syntax error");
    free(err);
    kb_ydoc_free(d);
}

/* `key=` gives an empty string (not an empty map, not null). */
static void test_set_with_empty_value_gives_an_empty_string(void **state)
{
    (void)state;
    kb_ydoc *d = load(doc_text, "o.yaml");
    set_ok(d, "name=");
    kb_ynode *name = get(kb_ydoc_root(d), "name");
    assert_int_equal(name->type, KB_Y_SCALAR);
    assert_string_equal(name->text, "");
    kb_ydoc_free(d);
}

/* ---- merge and base ---- */

/* over lays onto base: maps merge key by key (a.x kept, a.y replaced, a.z
 * added), lists and scalars replace (l becomes [9]; s, a scalar in base,
 * becomes over's map), keys only in base stay. Values keep the file they
 * were written in, even after `over` is freed, and paths are recomputed. */
static void test_merge_merges_maps_recursively_and_replaces_scalars_and_lists(void **state)
{
    (void)state;
    kb_ydoc *base = load("a: {x: 1, y: 2}\nl: [1, 2, 3]\ns: 5\nkeep: k\n", "base.yaml");
    kb_ydoc *over = load("a:\n  y: 20\n  z: 30\nl: [9]\ns: {m: 1}\nnew: n\n", "over.yaml");
    kb_ydoc_merge(base, over);
    kb_ynode *root = kb_ydoc_root(base);
    kb_ynode *a = get(root, "a");
    assert_int_equal(a->n, 3);
    kb_ynode *x = get(a, "x"), *y = get(a, "y"), *z = get(a, "z");
    assert_string_equal(x->text, "1");
    assert_string_equal(x->mark.src, "base.yaml");
    assert_string_equal(y->text, "20");
    assert_string_equal(y->mark.src, "over.yaml");
    assert_int_equal(y->mark.line, 2);
    assert_int_equal(y->mark.col, 6);
    assert_string_equal(z->text, "30");
    assert_string_equal(z->path, "a.z");
    kb_ynode *l = get(root, "l");
    assert_int_equal(l->n, 1);
    assert_string_equal(item(l, 0)->text, "9");
    assert_string_equal(item(l, 0)->path, "l[0]");
    kb_ynode *s = get(root, "s");
    assert_int_equal(s->type, KB_Y_MAP);
    assert_string_equal(get(s, "m")->path, "s.m");
    assert_string_equal(get(root, "keep")->text, "k");
    kb_ynode *nw = get(root, "new");
    assert_string_equal(nw->text, "n");
    assert_string_equal(nw->mark.src, "over.yaml");
    assert_int_equal(nw->mark.line, 6);
    /* An error about a replaced value points into the overriding file. */
    char *err = kb_yerr(y, "bad");
    assert_string_equal(err, "over.yaml:2:6: a.y: bad");
    free(err);
    kb_ydoc_free(base);
}

/* kb_ydoc_take_scalar removes a top-level key (how `base:` is read). */
static void test_take_scalar_removes_the_top_level_key(void **state)
{
    (void)state;
    kb_ydoc *d = load("name: x\nbase: default.yaml\nm: {a: 1}\n", "b.yaml");
    kb_ymark mark = {0};
    char *base = kb_ydoc_take_scalar(d, "base", &mark);
    assert_string_equal(base, "default.yaml");
    assert_int_equal(mark.line, 2);
    assert_int_equal(mark.col, 7);
    free(base);
    assert_null(kb_ymap_get(kb_ydoc_root(d), "base"));
    assert_int_equal(kb_ydoc_root(d)->n, 2);
    assert_null(kb_ydoc_take_scalar(d, "base", NULL));
    /* A non-scalar value is removed and reported as an empty string. */
    char *m = kb_ydoc_take_scalar(d, "m", NULL);
    assert_string_equal(m, "");
    free(m);
    assert_int_equal(kb_ydoc_root(d)->n, 1);
    kb_ydoc_free(d);
}

static void test_load_file_reports_missing_file(void **state)
{
    (void)state;
    char *err = NULL;
    assert_null(kb_ydoc_load_file("tests/topologies/no_such_file.yaml", &err));
    assert_prefix(err, "tests/topologies/no_such_file.yaml: cannot open topology file");
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_syntax_error_names_file_line_col),
        cmocka_unit_test(test_tab_indentation_is_a_syntax_error_at_its_line),
        cmocka_unit_test(test_duplicate_key_is_rejected_naming_both_lines),
        cmocka_unit_test(test_aliases_and_second_documents_are_rejected_with_position),
        cmocka_unit_test(test_escaped_nul_is_rejected_in_values_and_keys_with_its_path),
        cmocka_unit_test(test_escaped_control_characters_are_rejected),
        cmocka_unit_test(test_integer_with_a_leading_zero_is_rejected),
        cmocka_unit_test(test_empty_document_is_an_empty_map),
        cmocka_unit_test(test_nodes_carry_key_path_and_position),
        cmocka_unit_test(test_ymap_unknown_names_the_unread_key_and_lists_known_keys),
        cmocka_unit_test(test_ymap_unknown_says_when_nothing_is_expected),
        cmocka_unit_test(test_ydoc_unknown_reports_nested_unknown_keys_in_document_order),
        cmocka_unit_test(test_ydoc_unknown_reports_the_unknown_parent_not_its_children),
        cmocka_unit_test(test_typed_views_name_the_key_path_on_type_errors),
        cmocka_unit_test(test_typed_views_read_valid_values),
        cmocka_unit_test(test_yerr_formats_position_path_and_message),
        cmocka_unit_test(test_set_replaces_a_scalar_and_marks_it_as_the_override),
        cmocka_unit_test(test_set_creates_missing_keys_along_the_path),
        cmocka_unit_test(test_set_indexes_into_a_list_by_number),
        cmocka_unit_test(test_set_flow_map_value_replaces_the_old_map),
        cmocka_unit_test(test_set_marks_every_node_of_a_long_list_value),
        cmocka_unit_test(test_set_rejects_an_index_past_the_list),
        cmocka_unit_test(test_set_rejects_descending_into_a_scalar),
        cmocka_unit_test(test_set_rejects_malformed_assignments),
        cmocka_unit_test(test_set_with_empty_value_gives_an_empty_string),
        cmocka_unit_test(test_merge_merges_maps_recursively_and_replaces_scalars_and_lists),
        cmocka_unit_test(test_take_scalar_removes_the_top_level_key),
        cmocka_unit_test(test_load_file_reports_missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
