/* The machine (src/machine): a simulation on a topology with the host's
 * request record, op counts and statistics, used without Lua. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "comp/comp.h"
#include "comp/entry.h"
#include "core/sim.h"
#include "machine/machine.h"

#include <stdlib.h>
#include <string.h>

typedef struct host {
    kb_machine *m;
    int done;
} host;

/* A host request's completion, recorded as the binding layer does. */
static void completed(kb_txn *t, void *arg)
{
    host *h = arg;
    kb_machine_completed(h->m, t->kind->name, 256, t->t_start, kb_sim_now(kb_fabric_sim(t->fab)));
    h->done++;
}

static const kb_val *field(const kb_val *obj, const char *k)
{
    const kb_val *v = kb_obj_get(obj, k);
    assert_non_null(v);
    return v;
}

/* Two host writes to one slice: both complete, each is a request whose
 * latency the statistics summarise, the fabric's components and links are
 * listed, and the op counts say two memory writes were served. */
static void test_requests_and_statistics_of_a_machine(void **state)
{
    (void)state;
    kb_registry *reg = kb_registry_new();
    kb_comp_register_builtins(reg);
    char *err = NULL;
    kb_topo *t = kb_topo_load("topologies/small_1cube_1pe.yaml", NULL, 0, reg, &err);
    assert_non_null(t);
    kb_sim *sim = kb_sim_new();
    kb_machine_opts o = {.keep_oplog = true, .trace = NULL, .serial = 1};
    kb_machine *m = kb_machine_new(sim, t, &o, &err);
    assert_non_null(m);
    assert_null(kb_machine_tracer(m));
    host h = {m, 0};
    kb_pa pa;
    char msg[KB_PA_ERRLEN];
    uint64_t slice = kb_topo_params_of(t)->hbm_slice_bytes;
    assert_true(kb_pa_pe_hbm(0, 0, 0, 0, slice, &pa, msg, sizeof msg));
    for (int i = 0; i < 2; i++) {
        kb_machine_submitted(m, "MemoryWrite 256 B", 256);
        assert_true(kb_host_memory(kb_machine_fabric(m), true, pa + (kb_pa)(i * 256), 256, NULL, completed, &h,
                                   NULL, NULL, &err));
    }
    kb_sim_run(sim, KB_TIME_MAX);
    assert_int_equal(h.done, 2);
    kb_val *v = kb_val_obj();
    kb_machine_stats(m, v, true);
    const kb_val *lat = field(v, "request_latency");
    assert_int_equal(field(lat, "count")->u.i, 2);
    assert_true(field(lat, "max_ns")->u.d >= field(lat, "min_ns")->u.d);
    assert_true(field(lat, "min_ns")->u.d > 0);
    const kb_val *req = field(v, "requests");
    assert_int_equal(req->u.c.n, 2);
    assert_string_equal(field(req->u.c.items[0], "kind")->u.s, "MemoryWrite");
    assert_int_equal(field(field(v, "op_counts"), "memory_write")->u.i, 2);
    assert_true(field(v, "components")->u.c.n > 0);
    assert_true(field(v, "links")->u.c.n > 0);
    kb_val_free(v);
    kb_machine_free(m);
    kb_sim_free(sim);
    kb_topo_free(t);
    kb_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_requests_and_statistics_of_a_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
