/* The loader's limits on hostile YAML (src/topo/ydoc.c, ydoc_read.c):
 * nesting depth, values per document, key and value length, file size and
 * kind, and unknown keys reported 20 at a time with a count of the rest.
 * The large inputs are generated here rather than committed. Limits are
 * listed in docs/topology.md "Limits". */
#define _POSIX_C_SOURCE 200809L

#include "comp/comp.h"
#include "topo/topo.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "topo_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The error of loading `text` as name (must fail; caller frees). */
static char *string_error(const char *text, const char *name)
{
    kb_registry *reg = new_registry();
    char *err = NULL;
    kb_topo *t = kb_topo_load_string(text, name, NULL, 0, reg, &err);
    kb_registry_free(reg);
    if (t) {
        kb_topo_free(t);
        fail_msg("%s loaded but should be rejected", name);
    }
    assert_non_null(err);
    return err;
}

/* "x: [[[ ... 1 ... ]]]" nested `depth` lists deep. */
static char *nested(int depth)
{
    size_t n = 3 + 2 * (size_t)depth + 3;
    char *s = malloc(n);
    assert_non_null(s);
    char *p = s + sprintf(s, "x: ");
    memset(p, '[', (size_t)depth);
    p += depth;
    *p++ = '1';
    memset(p, ']', (size_t)depth);
    p += depth;
    strcpy(p, "\n");
    return s;
}

/* 50,000 nested lists crashed the recursive tree builder (and 20,000 took
 * gigabytes of key paths): the 64th level is refused where it starts. */
static void test_deep_nesting_is_refused_at_its_position(void **state)
{
    (void)state;
    static const int depths[] = {65, 50000};
    for (size_t i = 0; i < 2; i++) {
        char *text = nested(depths[i]);
        char *err = string_error(text, "deep.yaml");
        /* the root map is level 1: the 64th '[' (column 3 + 64) is level 65 */
        assert_prefix(err, "deep.yaml:1:67: maps and lists nested more than 64 deep; a topology file "
                           "may nest at most 64");
        free(err);
        free(text);
    }
    /* 63 lists under the root map are within the limit: the document is
     * read, and fails later on the key nobody knows. */
    char *list = nested(63);
    char *text = malloc(strlen(list) + 64);
    assert_non_null(text);
    sprintf(text, "graph: { line: { count: 2 } }\n%s", list);
    char *err = string_error(text, "deep.yaml");
    assert_prefix(err, "deep.yaml:2:1: x: unknown key");
    free(err);
    free(text);
    free(list);
}

/* More than KB_YDOC_MAX_NODES values in one document. */
static void test_too_many_values_are_refused(void **state)
{
    (void)state;
    size_t n = (size_t)KB_YDOC_MAX_NODES + 1;
    char *text = malloc(8 + 2 * n + 3);
    assert_non_null(text);
    char *p = text + sprintf(text, "x: [");
    for (size_t i = 0; i < n; i++) {
        *p++ = '0';
        *p++ = ',';
    }
    strcpy(p - 1, "]\n");
    char *err = string_error(text, "many.yaml");
    /* the root map and the list are 2 values: element n - 3 is one too many */
    char want[160];
    snprintf(want, sizeof want, "many.yaml:1:%zu: more than %u values (scalars, maps and lists) in one "
                                "document", 5 + 2 * (n - 3), KB_YDOC_MAX_NODES);
    assert_prefix(err, want);
    free(err);
    free(text);
}

/* A key or a value longer than KB_YDOC_MAX_SCALAR bytes. */
static void test_overlong_values_and_keys_are_refused(void **state)
{
    (void)state;
    size_t n = KB_YDOC_MAX_SCALAR + 1;
    char *text = malloc(n + 32);
    assert_non_null(text);
    strcpy(text, "name: ");
    memset(text + 6, 'a', n);
    strcpy(text + 6 + n, "\n");
    char *err = string_error(text, "long.yaml");
    assert_prefix(err, "long.yaml:1:7: a key or value of 65537 bytes; at most 65536 bytes are allowed");
    free(err);
    memset(text, 'k', n);
    strcpy(text + n, ": 1\n");
    err = string_error(text, "long.yaml");
    assert_prefix(err, "long.yaml:1:1: a key or value of 65537 bytes; at most 65536 bytes are allowed");
    free(err);
    free(text);
}

/* A file over 32 MiB is refused before it is read (here a sparse file). */
static void test_oversized_file_is_refused_before_reading(void **state)
{
    (void)state;
    char path[] = "/tmp/kb_topo_big_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(ftruncate(fd, (off_t)KB_YDOC_MAX_FILE_BYTES + 1), 0);
    close(fd);
    kb_registry *reg = new_registry();
    char *err = load_error(reg, path, NULL, 0);
    unlink(path);
    char want[160];
    snprintf(want, sizeof want, "%s: topology file of 33554433 bytes; at most 33554432 (32 MiB) are allowed", path);
    assert_string_equal(err, want);
    free(err);
    kb_registry_free(reg);
}

/* Unknown keys: every one is a line of the error, the first 20 of them,
 * then a count of the rest. */
static void test_unknown_keys_are_listed_twenty_then_counted(void **state)
{
    (void)state;
    char text[4096];
    char *p = text + sprintf(text, "graph: { line: { count: 2 } }\n");
    for (int i = 0; i < 25; i++)
        p += sprintf(p, "k%d: 1\n", i);
    char *err = string_error(text, "unk.yaml");
    assert_prefix(err, "unk.yaml:2:1: k0: unknown key (known keys here: name, description, profile, graph");
    assert_has(err, "\nunk.yaml:21:1: k19: unknown key (known keys here: ");
    assert_true(strstr(err, "k20:") == NULL);
    assert_has(err, "\n... and 5 more unknown keys (25 in all)");
    int lines = 1;
    for (const char *q = err; *q; q++)
        lines += *q == '\n';
    assert_int_equal(lines, 21);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_nesting_is_refused_at_its_position),
        cmocka_unit_test(test_too_many_values_are_refused),
        cmocka_unit_test(test_overlong_values_and_keys_are_refused),
        cmocka_unit_test(test_oversized_file_is_refused_before_reading),
        cmocka_unit_test(test_unknown_keys_are_listed_twenty_then_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
