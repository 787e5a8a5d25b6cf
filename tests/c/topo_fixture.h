/* Loading topologies in the C tests (include after <cmocka.h>): a registry
 * with the builtins, and loads that must succeed or must fail. */
#ifndef KB_TEST_TOPO_FIXTURE_H
#define KB_TEST_TOPO_FIXTURE_H

#include "check.h"
#include "comp/comp.h"
#include "topo/topo.h"

static inline kb_registry *new_registry(void)
{
    kb_registry *reg = kb_registry_new();
    kb_comp_register_builtins(reg);
    return reg;
}

static inline kb_topo *load_ok(const kb_registry *reg, const char *path, const char *const *ov, size_t nov)
{
    char *err = NULL;
    kb_topo *t = kb_topo_load(path, ov, nov, reg, &err);
    if (!t)
        fail_msg("%s does not load: %s", path, err);
    assert_null(err);
    return t;
}

static inline kb_topo *load_string_ok(const kb_registry *reg, const char *yaml, const char *name)
{
    char *err = NULL;
    kb_topo *t = kb_topo_load_string(yaml, name, NULL, 0, reg, &err);
    if (!t)
        fail_msg("%s does not load: %s\n--- text:\n%s", name, err, yaml);
    assert_null(err);
    return t;
}

/* The error of a topology that must not load (caller frees). */
static inline char *load_error(const kb_registry *reg, const char *path, const char *const *ov, size_t nov)
{
    char *err = NULL;
    kb_topo *t = kb_topo_load(path, ov, nov, reg, &err);
    if (t) {
        kb_topo_free(t);
        fail_msg("%s loaded but should be rejected", path);
    }
    assert_non_null(err);
    return err;
}

#endif
