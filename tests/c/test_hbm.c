/* HBM controller and end-to-end memory paths on the small topologies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "fabric_fixture.h"

#define NS(x) ((kb_time)((x) * 1000))

static kb_pa hbm_pa(const fixture *fx, unsigned cube, unsigned pe, uint64_t off)
{
    kb_pa pa = 0;
    char err[KB_PA_ERRLEN];
    uint64_t slice = kb_topo_params_of(fx->topo)->hbm_slice_bytes;
    assert_true(kb_pa_pe_hbm(0, cube, pe, off, slice, &pa, err, sizeof err));
    return pa;
}

static void host(fixture *fx, bool write, kb_pa pa, uint64_t n, done_rec *d)
{
    char *err = NULL;
    bool ok = kb_host_memory(fx->fab, write, pa, n, NULL, record_done, d, NULL, NULL, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err);
    assert_true(ok);
}

static void dma(fixture *fx, int pe, kb_pa pa, uint64_t n, done_rec *d)
{
    char *err = NULL;
    bool ok = kb_pe_dma(fx->fab, 0, 0, pe, true, pa, n, record_done, d, NULL, NULL, &err);
    if (!ok)
        fprintf(stderr, "%s\n", err);
    assert_true(ok);
}

/* Two one-burst host writes issued together. With the UCIe endpoints'
 * 8 ns header decode set to 0 (at 8 ns it equals the commit time and
 * hides channel contention, as the spec notes), they reach the controller
 * 2 ns apart: the 128 GB/s UCIe connection is the narrowest link and a
 * 256 B flit takes 2 ns on it. On different pseudo-channels their 8 ns
 * commits overlap, so the second finishes 2 ns after the first; on the
 * same channel it waits for the first commit and finishes 8 ns after it. */
static kb_time second_of_two_writes(uint64_t second_offset, kb_time *first)
{
    static const char *const ov[] = {"sip.io_chiplets.0.components.io_ucie.attrs.overhead_ns=0",
                                     "cube.components.ucie.attrs.overhead_ns=0"};
    fixture fx;
    fixture_open(&fx, NULL, "topologies/small_1cube_1pe.yaml", ov, 2);
    done_rec a = {0}, b = {0};
    host(&fx, true, hbm_pa(&fx, 0, 0, 0), 256, &a);
    host(&fx, true, hbm_pa(&fx, 0, 0, second_offset), 256, &b);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    assert_int_equal(a.count + b.count, 2);
    *first = a.at;
    fixture_close(&fx);
    return b.at;
}

static void test_disjoint_channels_overlap_same_channel_serialises(void **state)
{
    (void)state;
    kb_time first_apart, first_same;
    kb_time apart = second_of_two_writes(256, &first_apart);  /* PC 1 */
    kb_time same = second_of_two_writes(2048, &first_same);   /* PC 0 again: bits [10:8] = 0 */
    assert_int_equal(first_apart, first_same);
    assert_int_equal(apart - first_apart, NS(2));
    assert_int_equal(same - first_same, NS(8));
}

static kb_time local_write(const char *const *ov, size_t nov, uint64_t n)
{
    fixture fx;
    fixture_open(&fx, NULL, "topologies/small_1cube_8pe.yaml", ov, nov);
    done_rec d = {0};
    dma(&fx, 0, hbm_pa(&fx, 0, 0, 0), n, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    assert_int_equal(d.count, 1);
    fixture_close(&fx);
    return d.at - d.start;
}

static void test_local_hbm_bandwidth_ignores_unrelated_slow_links(void **state)
{
    (void)state;
    static const char *const slow[] = {
        "cube.links.router_link_bw_gbs=1",       "cube.links.sram_to_router_bw_gbs=1",
        "cube.links.router_to_ucie_conn_bw_gbs=1", "cube.links.ucie_conn_to_port_bw_gbs=1",
        "cube.links.mcpu_to_router_bw_gbs=1",
    };
    uint64_t n = 64 * 1024;
    kb_time normal = local_write(NULL, 0, n);
    kb_time slowed = local_write(slow, sizeof slow / sizeof slow[0], n);
    assert_int_equal(normal, slowed);
    /* Streaming 256 flits at 256 GB/s is 256 ns; setup, one router and the
     * last commit add a few ns: at least 90 % of the local 256 GB/s. */
    double gbs = (double)n / ((double)normal / 1000.0);
    assert_true(gbs >= 0.9 * 256.0);
    assert_true(gbs <= 256.0);
}

static kb_time dma_latency(const char *file, int src_pe, unsigned dst_pe)
{
    fixture fx;
    fixture_open(&fx, NULL, file, NULL, 0);
    done_rec d = {0};
    dma(&fx, src_pe, hbm_pa(&fx, 0, dst_pe, 0), 16 * 1024, &d);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    fixture_close(&fx);
    return d.at - d.start;
}

static void test_remote_pe_latency_grows_with_mesh_hops(void **state)
{
    (void)state;
    const char *f = "topologies/small_1cube_8pe.yaml";
    kb_time local = dma_latency(f, 0, 0);
    kb_time same_half = dma_latency(f, 0, 1);  /* one mesh hop along row 0 */
    kb_time cross_half = dma_latency(f, 0, 4); /* down past the HBM rows */
    assert_true(local < same_half);
    assert_true(same_half < cross_half);
}

static void test_read_returns_data_after_commit(void **state)
{
    (void)state;
    kb_time lat[2];
    for (int i = 0; i < 2; i++) {
        fixture fx;
        fixture_open(&fx, NULL, "topologies/small_1cube_1pe.yaml", NULL, 0);
        done_rec d = {0};
        host(&fx, i == 0, hbm_pa(&fx, 0, 0, 0), 32 * 1024, &d);
        kb_sim_run(fx.sim, KB_TIME_MAX);
        assert_int_equal(d.count, 1);
        assert_int_equal(kb_fabric_live_txns(fx.fab), 0);
        lat[i] = d.at - d.start;
        fixture_close(&fx);
    }
    /* The read moves the same bytes over the same links back, after its
     * command went out and the bursts were committed. */
    assert_true(lat[1] > lat[0]);
}

static void test_switch_penalty_applies_on_direction_change(void **state)
{
    (void)state;
    static const char *const ov[] = {"cube.components.hbm_ctrl.attrs.switch_penalty_ns=5"};
    kb_time t[2];
    for (int i = 0; i < 2; i++) {
        fixture fx;
        fixture_open(&fx, NULL, "topologies/small_1cube_1pe.yaml", i ? ov : NULL, i ? 1 : 0);
        done_rec w = {0}, r = {0};
        host(&fx, true, hbm_pa(&fx, 0, 0, 0), 256, &w);
        kb_sim_run(fx.sim, KB_TIME_MAX);
        host(&fx, false, hbm_pa(&fx, 0, 0, 0), 256, &r);
        kb_sim_run(fx.sim, KB_TIME_MAX);
        t[i] = r.at - r.start;
        fixture_close(&fx);
    }
    /* The read turns PC 0 from write to read: +5 ns with the penalty. */
    assert_int_equal(t[1] - t[0], NS(5));
}

static void test_pe_dma_read_and_sram_target(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, NULL, "topologies/small_1cube_8pe.yaml", NULL, 0);
    done_rec rd = {0}, sr = {0};
    char *err = NULL;
    assert_true(kb_pe_dma(fx.fab, 0, 0, 1, false, hbm_pa(&fx, 0, 1, 0), 4096, record_done, &rd,
                          NULL, NULL, &err));
    kb_pa sram = 0;
    char e2[KB_PA_ERRLEN];
    assert_true(kb_pa_cube_sram(0, 0, 0, &sram, e2, sizeof e2));
    assert_true(kb_pe_dma(fx.fab, 0, 0, 2, true, sram, 4096, record_done, &sr, NULL, NULL, &err));
    kb_sim_run(fx.sim, KB_TIME_MAX);
    assert_int_equal(rd.count, 1);
    assert_int_equal(sr.count, 1);
    /* 4 KiB into the SRAM crosses its 128 GB/s link: at least 32 ns. */
    assert_true(sr.at - sr.start >= NS(32));
    /* A PE TCM address is not a DMA target yet: a clear error. */
    kb_pa tcm = 0;
    assert_true(kb_pa_pe_tcm(0, 0, 3, 0, &tcm, e2, sizeof e2));
    assert_false(kb_pe_dma(fx.fab, 0, 0, 0, true, tcm, 64, record_done, &sr, NULL, NULL, &err));
    assert_non_null(strstr(err, "not modelled"));
    free(err);
    fixture_close(&fx);
}

static void test_dma_channel_serialises_transfers_of_one_pe(void **state)
{
    (void)state;
    fixture fx;
    fixture_open(&fx, NULL, "topologies/small_1cube_8pe.yaml", NULL, 0);
    done_rec a = {0}, b = {0};
    dma(&fx, 0, hbm_pa(&fx, 0, 0, 0), 4096, &a);
    dma(&fx, 0, hbm_pa(&fx, 0, 0, 4096), 4096, &b);
    kb_sim_run(fx.sim, KB_TIME_MAX);
    /* One write channel: the second starts when the first's ack is back,
     * so it takes exactly as long again. */
    assert_int_equal(b.at - a.at, a.at - a.start);
    fixture_close(&fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_disjoint_channels_overlap_same_channel_serialises),
        cmocka_unit_test(test_local_hbm_bandwidth_ignores_unrelated_slow_links),
        cmocka_unit_test(test_remote_pe_latency_grows_with_mesh_hops),
        cmocka_unit_test(test_read_returns_data_after_commit),
        cmocka_unit_test(test_switch_penalty_applies_on_direction_change),
        cmocka_unit_test(test_pe_dma_read_and_sram_target),
        cmocka_unit_test(test_dma_channel_serialises_transfers_of_one_pe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
