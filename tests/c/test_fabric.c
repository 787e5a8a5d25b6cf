/* What the fabric refuses when it binds behaviours to nodes (kb_fabric_new):
 * an implementation without one, and a flit-aware one listing message
 * handlers, which would never be called (a flit-aware component sees
 * flits, and handlers take whole transactions).
 *
 * Topology: `a` -- `b`, with `a` an implementation whose state is
 * allocated by init and freed by fini, so a node finalised twice after a
 * refusal would be a double free. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fabric_fixture.h"

static void owned_init(kb_comp *c) { c->state = malloc(16); }
static void owned_fini(kb_comp *c) { free(c->state); }
static void ignore_txn(kb_comp *c, kb_txn *t) { (void)c, (void)t; }
static kb_time ignore_flit(kb_comp *c, kb_flit *f) { return (void)c, (void)f, KB_FLIT_TAKEN; }

static const kb_comp_ops owned_ops = {.init = owned_init, .fini = owned_fini, .on_txn = ignore_txn};
static const kb_msg_handler transfer_handler[] = {{&kb_msg_transfer, ignore_txn}, {NULL, NULL}};
static const kb_comp_ops flit_handlers_ops = {.flit_aware = true, .handlers = transfer_handler, .on_flit = ignore_flit};

static const kb_impl owned = {"test.owned", NULL, NULL, 0, &owned_ops, "state from init", NULL};
static const kb_impl flit_handlers = {"test.flit_handlers", NULL, NULL, 0, &flit_handlers_ops,
                                      "flit-aware, with handlers", NULL};
static const kb_impl no_behaviour = {"test.no_behaviour", NULL, NULL, 0, NULL, "no ops", NULL};

/* kb_fabric_new's error for `a` -- `b` with b's implementation named b_impl. */
static char *fabric_error(const char *b_impl)
{
    kb_registry *reg = kb_registry_new();
    assert_true(kb_registry_add(reg, &owned));
    assert_true(kb_registry_add(reg, &flit_handlers));
    assert_true(kb_registry_add(reg, &no_behaviour));
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "graph:\n"
             "  nodes:\n"
             "    - { id: a, impl: test.owned }\n"
             "    - { id: b, impl: %s }\n"
             "  links:\n"
             "    - { src: a, dst: b, bw_gbs: 256, mm: 2 }\n",
             b_impl);
    char *err = NULL;
    kb_topo *topo = kb_topo_load_string(yaml, "refused.yaml", NULL, 0, reg, &err);
    if (!topo)
        fail_msg("topology: %s", err);
    kb_sim *sim = kb_sim_new();
    kb_fabric *fab = kb_fabric_new(sim, topo, &err);
    assert_null(fab);
    kb_sim_free(sim);
    kb_topo_free(topo);
    kb_registry_free(reg);
    return err;
}

static void test_a_flit_aware_implementation_with_handlers_is_refused(void **state)
{
    (void)state;
    char *err = fabric_error("test.flit_handlers");
    assert_string_equal(err, "b: implementation test.flit_handlers is flit-aware and lists message handlers, which "
                             "only whole transactions reach");
    free(err);
}

static void test_an_implementation_without_behaviour_is_refused(void **state)
{
    (void)state;
    char *err = fabric_error("test.no_behaviour");
    assert_string_equal(err, "b: implementation test.no_behaviour has no behaviour in this build");
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_flit_aware_implementation_with_handlers_is_refused),
        cmocka_unit_test(test_an_implementation_without_behaviour_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
