/* Kernel instances (kb_kernel, src/comp/pe/kernel.c) driven from C alone,
 * with no Lua: commands and composites issued through an instance, the
 * wake function, PE_MMU faults and refusals (each naming the call, kernel,
 * PE and time), PE_SCHEDULER's tile sizes, the scratch ring, and reference
 * counting when the creator lets go or the fabric goes away with work in flight
 * (run under ASan by `make test-asan`: a leak or a use after free fails).
 * Topology: small_1cube_1pe with its defaults (dispatch 1 ns, no TLB cost). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "comp/pe/pe.h"
#include "core/util.h"
#include "fabric_fixture.h"

#define VA 0x10000000ull /* where the tests map the PE's HBM slice */

typedef struct driver {
    fixture fx;
    kb_pe *pe;
    int wakes;
    kb_time woke_at;
} driver;

static void on_wake(kb_kernel *k, void *arg)
{
    (void)k;
    driver *d = arg;
    d->wakes++;
    d->woke_at = kb_sim_now(d->fx.sim);
}

/* small_1cube_1pe with `n` overrides, VA mapped on its PE (as an MmuMap
 * message would map it). */
static void open_driver_with(driver *d, const char *const *overrides, size_t n)
{
    memset(d, 0, sizeof *d);
    fixture_open(&d->fx, NULL, "topologies/small_1cube_1pe.yaml", overrides, n);
    char *err = NULL;
    d->pe = kb_pe_find(d->fx.fab, 0, 0, 0, &err);
    assert_non_null(d->pe);
    kb_pa pa;
    char msg[KB_PA_ERRLEN];
    assert_true(kb_pa_pe_hbm(0, 0, 0, 0, kb_topo_params_of(d->fx.topo)->hbm_slice_bytes, &pa, msg, sizeof msg));
    kb_pagetable *pt = kb_mmu_table(d->pe, &err);
    assert_non_null(pt);
    kb_pt_map(pt, VA, pa, 1 << 20, NULL);
}

static void open_driver(driver *d) { open_driver_with(d, NULL, 0); }

static kb_kernel *new_kernel(driver *d)
{
    kb_kernel *k = kb_kernel_new(d->pe, "c_kernel", 0, 64 * 1024, false, false);
    kb_kernel_set_wake(k, on_wake, d);
    return k;
}

/* A load of n f16 elements from va, issued through k. */
static void load(kb_kernel *k, uint64_t va, int64_t n)
{
    char *err = NULL;
    kb_pe_op *op = kb_kernel_command(k, "tl.load", &err);
    assert_non_null(op);
    kb_pe_op_load(op, va, KB_F16, 1, &n);
    uint64_t stamp;
    assert_true(kb_kernel_alloc(k, "tl.load", KB_F16, 1, &n, &op->out, &stamp, &err));
    kb_kernel_submit(k);
}

static void test_a_load_issued_from_c_wakes_its_driver_once(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = new_kernel(&d);
    load(k, VA, 512);
    char *err = NULL;
    assert_null(kb_kernel_command(k, "tl.load", &err)); /* one command at a time */
    assert_string_equal(err, "tl.load on sip0.cube0.pe0 (kernel 'c_kernel' at t=0.000 ns): the kernel already has a "
                             "command in flight");
    free(err);
    assert_int_equal(kb_sim_run(d.fx.sim, KB_TIME_MAX), KB_RUN_EMPTY);
    assert_int_equal(d.wakes, 1);
    assert_null(kb_kernel_take_error(k));
    kb_kernel_stats st;
    kb_kernel_stats_of(k, &st);
    assert_int_equal(st.calls, 1);
    assert_true(st.dma_ps > 0);
    assert_int_equal(st.scratch_bytes, 1024);
    kb_kernel_unref(k);
    fixture_close(&d.fx);
}

static void test_an_unmapped_address_faults_at_the_mmu_stage_naming_kernel_pe_address_and_time(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = new_kernel(&d);
    load(k, 0x200000000ull, 4);
    assert_int_equal(d.wakes, 0); /* the fault comes after the dispatch stage, not at the call */
    kb_sim_run(d.fx.sim, KB_TIME_MAX);
    assert_int_equal(d.wakes, 1);
    assert_int_equal(d.woke_at, 1000); /* dispatch: 1 cycle at 1 GHz */
    char *err = kb_kernel_take_error(k);
    assert_string_equal(err, "tl.load: virtual address 0x200000000 is not mapped on sip0.cube0.pe0 (kernel "
                             "'c_kernel' at t=1.000 ns): not inside any tensor placed for this PE");
    free(err);
    assert_null(kb_kernel_take_error(k)); /* once */
    kb_kernel_unref(k);
    fixture_close(&d.fx);
}

static void test_pa_fallback_uses_an_unmapped_address_as_physical(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_pa pa;
    char msg[KB_PA_ERRLEN];
    assert_true(kb_pa_pe_hbm(0, 0, 0, 4096, kb_topo_params_of(d.fx.topo)->hbm_slice_bytes, &pa, msg, sizeof msg));
    kb_kernel *k = kb_kernel_new(d.pe, "compat", 0, 4096, false, true);
    kb_kernel_set_wake(k, on_wake, &d);
    load(k, pa, 4);
    kb_sim_run(d.fx.sim, KB_TIME_MAX);
    assert_int_equal(d.wakes, 1);
    assert_null(kb_kernel_take_error(k));
    uint32_t node;
    uint64_t off;
    char *err = NULL;
    assert_true(kb_mmu_resolve(d.pe, pa, 4, true, "x", NULL, &node, &off, &err));
    assert_int_equal(off, 4096);
    assert_false(kb_mmu_resolve(d.pe, pa, 4, false, "x", NULL, &node, &off, &err)); /* no kernel: no context */
    char want[160];
    snprintf(want, sizeof want,
             "x: virtual address 0x%llx is not mapped on sip0.cube0.pe0: not inside any tensor placed for this PE",
             (unsigned long long)pa);
    assert_string_equal(err, want);
    free(err);
    kb_kernel_unref(k);
    fixture_close(&d.fx);
}

static void test_the_scratch_is_a_ring_and_a_reused_result_is_no_longer_live(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = kb_kernel_new(d.pe, "ring", 4096, 4096, false, false);
    int64_t n = 1024; /* 2 KiB of f16: two fit */
    kb_tview v[3];
    uint64_t stamp[3];
    char *err = NULL;
    for (int i = 0; i < 3; i++)
        assert_true(kb_kernel_alloc(k, "tl.full", KB_F16, 1, &n, &v[i], &stamp[i], &err));
    assert_int_equal(v[0].offset, 4096);
    assert_int_equal(v[1].offset, 4096 + 2048);
    assert_int_equal(v[2].offset, 4096); /* wrapped round */
    assert_false(kb_kernel_live(k, stamp[0]));
    assert_true(kb_kernel_live(k, stamp[1]) && kb_kernel_live(k, stamp[2]));
    n = 4096; /* 8 KiB: more than the whole scratch */
    assert_false(kb_kernel_alloc(k, "tl.full", KB_F16, 1, &n, &v[0], &stamp[0], &err));
    assert_string_equal(err, "tl.full: scratch overflow on sip0.cube0.pe0: the result needs 8192 bytes, the "
                             "kernel's scratch is 4096 bytes (pe_cpu.attrs.scratch_kb)");
    free(err);
    kb_kernel_unref(k);
    fixture_close(&d.fx);
}

/* A streamed 64 x 64 x 64 f16 GEMM at VA (A), VA + 8 KiB (B), VA + 16 KiB (C). */
static kb_composite *gemm(uint64_t out_va)
{
    kb_composite *c = kb_xcalloc(1, sizeof *c);
    c->plan.gemm = true;
    c->plan.M = c->plan.K = c->plan.N = 64;
    c->plan.has[0] = c->plan.has[1] = true;
    c->plan.in_size[0] = c->plan.in_size[1] = 2;
    c->plan.acc_size = 4;
    c->plan.out_size = 2;
    for (int i = 0; i < 2; i++)
        c->in[i] = (kb_composite_operand){.va = VA + (uint64_t)i * 8192, .rows = 64, .cols = 64, .dtype = KB_F16};
    c->out_va = out_va;
    c->out_dtype = KB_F16;
    return c;
}

static void test_a_composite_issued_from_c_wakes_a_wait_when_it_is_done(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = new_kernel(&d);
    kb_composite *c = gemm(VA + 16384);
    char *err = NULL;
    assert_true(kb_kernel_composite(k, c, &err));
    assert_int_equal(c->ntiles, 4); /* default tiles 32 x 64 x 32 */
    assert_false(kb_kernel_wait(k, NULL));
    kb_sim_run(d.fx.sim, KB_TIME_MAX);
    assert_int_equal(d.wakes, 1);
    assert_true(c->finished && kb_kernel_done(k, c) && kb_kernel_done(k, NULL));
    assert_null(kb_kernel_take_composite_error(k));
    kb_kernel_stats st;
    kb_kernel_stats_of(k, &st);
    assert_int_equal(st.composites, 0);
    assert_true(st.dma_ps > 0 && st.compute_ps > 0);
    kb_kernel_unref(k); /* the composite still holds the instance */
    kb_composite_unref(c);
    fixture_close(&d.fx);
}

static void test_a_composite_whose_output_does_not_translate_is_refused_at_submission(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = new_kernel(&d);
    kb_composite *c = gemm(0x7000000000ull);
    char *err = NULL;
    assert_false(kb_kernel_composite(k, c, &err));
    assert_string_equal(err, "tl.composite: virtual address 0x7000000000 is not mapped on sip0.cube0.pe0 (kernel "
                             "'c_kernel' at t=0.000 ns): not inside any tensor placed for this PE");
    free(err);
    free(c); /* not taken */
    kb_kernel_stats st;
    kb_kernel_stats_of(k, &st);
    assert_int_equal(st.composites, 0);
    kb_kernel_unref(k);
    fixture_close(&d.fx);
}

/* Tiles 32 x 64 x 16 (tile_n from the topology): ceil(64/32) x ceil(64/16)
 * x ceil(64/64) = 8 tiles. */
static void test_tile_sizes_not_given_are_pe_schedulers_at_submission(void **state)
{
    (void)state;
    static const char *const ov[] = {"cube.pe_template.components.pe_scheduler.attrs.tile_n=16"};
    driver d;
    open_driver_with(&d, ov, 1);
    kb_kernel *k = new_kernel(&d);
    kb_composite *c = gemm(VA + 16384);
    char *err = NULL;
    assert_true(kb_kernel_composite(k, c, &err));
    assert_int_equal(c->plan.tm, 32);
    assert_int_equal(c->plan.tk, 64);
    assert_int_equal(c->plan.tn, 16);
    assert_int_equal(c->ntiles, 8);
    kb_sim_run(d.fx.sim, KB_TIME_MAX);
    assert_true(c->finished);
    kb_kernel_unref(k);
    kb_composite_unref(c);
    fixture_close(&d.fx);
}

/* A 32 x 64 x 32 f16 tile holds A's 32 x 64 and B's 64 x 32 (4096 bytes
 * each) and the f32 accumulator (32 x 32 x 4 = 4096): 12288 bytes, with 4
 * KiB of register file. */
static void test_a_tile_too_big_for_the_register_file_is_refused_naming_kernel_pe_and_time(void **state)
{
    (void)state;
    static const char *const ov[] = {"cube.pe_template.components.pe_fetch_store.attrs.register_file_kb=4"};
    driver d;
    open_driver_with(&d, ov, 1);
    kb_kernel *k = new_kernel(&d);
    kb_composite *c = gemm(VA + 16384);
    char *err = NULL;
    assert_false(kb_kernel_composite(k, c, &err));
    assert_string_equal(err, "tl.composite on sip0.cube0.pe0 (kernel 'c_kernel' at t=0.000 ns): a 32x64x32 tile "
                             "needs 12288 bytes of register file, the PE has 4096 "
                             "(pe_fetch_store.attrs.register_file_kb): use smaller tiles (tile_shape)");
    free(err);
    free(c); /* not taken */
    kb_kernel_unref(k);
    fixture_close(&d.fx);
}

static void test_an_instance_outlives_its_creator_while_its_command_is_in_flight(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = new_kernel(&d);
    load(k, VA, 512);
    kb_kernel_set_wake(k, NULL, NULL);
    kb_kernel_unref(k); /* the command's reference keeps it */
    assert_int_equal(kb_sim_run(d.fx.sim, KB_TIME_MAX), KB_RUN_EMPTY); /* completes, then frees it */
    assert_int_equal(d.wakes, 0);
    fixture_close(&d.fx);
}

static void test_work_in_flight_when_the_fabric_goes_releases_its_instance(void **state)
{
    (void)state;
    driver d;
    open_driver(&d);
    kb_kernel *k = new_kernel(&d), *k2 = new_kernel(&d);
    load(k, VA, 4096);
    kb_composite *c = gemm(VA + 16384);
    char *err = NULL;
    assert_true(kb_kernel_composite(k2, c, &err));
    kb_composite_unref(c); /* only the pipeline holds it now */
    assert_int_equal(kb_sim_run(d.fx.sim, 5000), KB_RUN_UNTIL); /* both still running */
    kb_kernel_unref(k2);                                       /* its composite holds it */
    kb_fabric_free(d.fx.fab);                                  /* the simulation ends here */
    d.fx.fab = NULL;
    assert_null(kb_kernel_pe(k)); /* detached */
    assert_null(kb_kernel_command(k, "tl.load", &err));
    assert_string_equal(err, "tl.load: kernel 'c_kernel' on sip0.cube0.pe0: its simulation is closed");
    free(err);
    kb_kernel_unref(k);
    kb_sim_free(d.fx.sim);
    kb_topo_free(d.fx.topo);
    kb_registry_free(d.fx.reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_load_issued_from_c_wakes_its_driver_once),
        cmocka_unit_test(test_an_unmapped_address_faults_at_the_mmu_stage_naming_kernel_pe_address_and_time),
        cmocka_unit_test(test_pa_fallback_uses_an_unmapped_address_as_physical),
        cmocka_unit_test(test_the_scratch_is_a_ring_and_a_reused_result_is_no_longer_live),
        cmocka_unit_test(test_a_composite_issued_from_c_wakes_a_wait_when_it_is_done),
        cmocka_unit_test(test_a_composite_whose_output_does_not_translate_is_refused_at_submission),
        cmocka_unit_test(test_tile_sizes_not_given_are_pe_schedulers_at_submission),
        cmocka_unit_test(test_a_tile_too_big_for_the_register_file_is_refused_naming_kernel_pe_and_time),
        cmocka_unit_test(test_an_instance_outlives_its_creator_while_its_command_is_in_flight),
        cmocka_unit_test(test_work_in_flight_when_the_fabric_goes_releases_its_instance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
