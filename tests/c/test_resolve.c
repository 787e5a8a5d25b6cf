/* Physical addresses -> nodes on a loaded topology (src/comp/entry.c
 * kb_resolve_pa) and finding nodes by place and kind (src/topo/place.c):
 * the slice owner of an HBM address, SRAM / TCM / M_CPU targets, and the
 * addresses a topology has no node for. test_topo.c loads the topologies
 * these run on. */
#include "comp/comp.h"
#include "comp/entry.h"
#include "mem/addr.h"
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

#define GiB (UINT64_C(1) << 30)

static kb_target resolve_ok(const kb_topo *t, kb_pa pa)
{
    kb_target tg;
    char *err = NULL;
    if (!kb_resolve_pa(t, pa, &tg, &err))
        fail_msg("PA 0x%llx does not resolve: %s", (unsigned long long)pa, err);
    return tg;
}

static char *resolve_error(const kb_topo *t, kb_pa pa)
{
    kb_target tg;
    char *err = NULL;
    if (kb_resolve_pa(t, pa, &tg, &err))
        fail_msg("PA 0x%llx resolved to %s but should be rejected", (unsigned long long)pa,
                 kb_topo_node(t, tg.node)->id);
    assert_non_null(err);
    return err;
}

/* HBM: the controller is hbm_offset / slice_bytes. PE 5's slice starts at
 * 5 x slice_bytes (6 GiB in the default), so 5 x slice + 0x100 is in
 * hbm_ctrl.pe5 of (sip 0, cube 3). */
static void test_hbm_pa_resolves_to_the_slice_owners_controller(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    const kb_topo_params *p = kb_topo_params_of(t);
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_true(kb_pa_pe_hbm(0, 3, 5, 0x100, p->hbm_slice_bytes, &pa, err, sizeof err));
    kb_target tg = resolve_ok(t, pa);
    assert_string_equal(kb_topo_node(t, tg.node)->id, "sip0.cube3.hbm_ctrl.pe5");
    assert_int_equal(tg.offset, 5 * p->hbm_slice_bytes + 0x100);
    assert_int_equal(tg.f.kind, KB_PA_HBM);
    /* the slice's whole PA range: it starts 0x100 before and holds slice_bytes */
    assert_int_equal(tg.pa_lo, pa - 0x100);
    assert_int_equal(tg.pa_hi - tg.pa_lo, p->hbm_slice_bytes);
    kb_pa first;
    assert_true(kb_pa_pe_hbm(0, 3, 5, 0, p->hbm_slice_bytes, &first, err, sizeof err));
    assert_int_equal(tg.pa_lo, first);
    /* The first and last byte of the cube's HBM: PE 0 and the last PE. */
    assert_true(kb_pa_hbm(1, 15, 0, &pa, err, sizeof err));
    assert_string_equal(kb_topo_node(t, resolve_ok(t, pa).node)->id, "sip1.cube15.hbm_ctrl.pe0");
    uint64_t cap = (uint64_t)llround(p->hbm_total_gb_per_cube * (double)GiB);
    assert_true(kb_pa_hbm(1, 15, cap - 1, &pa, err, sizeof err));
    char want[64];
    snprintf(want, sizeof want, "sip1.cube15.hbm_ctrl.pe%d", p->pes_per_cube - 1);
    assert_string_equal(kb_topo_node(t, resolve_ok(t, pa).node)->id, want);
    kb_topo_free(t);
    kb_registry_free(reg);
}

static void test_sram_tcm_and_mcpu_pas_resolve_to_their_nodes(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_true(kb_pa_cube_sram(1, 7, 0x80, &pa, err, sizeof err));
    kb_target tg = resolve_ok(t, pa);
    assert_string_equal(kb_topo_node(t, tg.node)->id, "sip1.cube7.sram");
    assert_int_equal(tg.offset, 0x80);
    assert_true(kb_pa_pe_tcm(0, 2, 6, 0x40, &pa, err, sizeof err));
    tg = resolve_ok(t, pa);
    assert_string_equal(kb_topo_node(t, tg.node)->id, "sip0.cube2.pe6.pe_tcm");
    assert_int_equal(tg.offset, 0x40);
    assert_true(kb_pa_mcpu(0, 9, KB_MCPU_SU_MCPU_SRAM, 0, &pa, err, sizeof err));
    assert_string_equal(kb_topo_node(t, resolve_ok(t, pa).node)->id, "sip0.cube9.m_cpu");
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* hbm_total_gb_per_cube is 48 GiB in the default: offset 48 GiB (inside the
 * 128 GiB address window) is beyond the implemented capacity. */
static void test_hbm_pa_beyond_the_cube_capacity_is_rejected(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/default.yaml", NULL, 0);
    uint64_t cap = (uint64_t)llround(kb_topo_params_of(t)->hbm_total_gb_per_cube * (double)GiB);
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_true(kb_pa_hbm(0, 0, cap, &pa, err, sizeof err));
    char *e = resolve_error(t, pa);
    assert_has(e, "is beyond the 48 GiB of HBM per cube");
    free(e);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* Every node of a PE, cube or IO chiplet is found by its place and kind;
 * places shared by several nodes (a cube's routers) are ambiguous. */
static void test_nodes_are_found_by_place_and_kind(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", NULL, 0);
    const char *pe_kinds[] = {"pe_cpu", "pe_scheduler", "pe_dma", "pe_fetch_store", "pe_gemm",
                              "pe_math", "pe_tcm", "pe_mmu", "pe_ipcq"};
    for (size_t k = 0; k < sizeof pe_kinds / sizeof pe_kinds[0]; k++) {
        int64_t n = kb_topo_pe_node(t, 0, 3, 5, pe_kinds[k]);
        assert_true(n >= 0);
        const kb_node *nd = kb_topo_node(t, (uint32_t)n);
        char want[64];
        snprintf(want, sizeof want, "sip0.cube3.pe5.%s", pe_kinds[k]);
        assert_string_equal(nd->id, want);
        assert_int_equal(nd->sip, 0);
        assert_int_equal(nd->cube, 3);
        assert_int_equal(nd->pe, 5);
        assert_string_equal(nd->spec->kind, pe_kinds[k]);
    }
    assert_string_equal(kb_topo_node(t, (uint32_t)kb_topo_cube_node(t, 0, 2, "m_cpu"))->id, "sip0.cube2.m_cpu");
    assert_string_equal(kb_topo_node(t, (uint32_t)kb_topo_cube_node(t, 0, 1, "sram"))->id, "sip0.cube1.sram");
    assert_string_equal(kb_topo_node(t, (uint32_t)kb_topo_pe_node(t, 0, 1, 7, "hbm_ctrl"))->id,
                        "sip0.cube1.hbm_ctrl.pe7");
    assert_string_equal(kb_topo_node(t, (uint32_t)kb_topo_io_node(t, 0, 0, "io_cpu"))->id, "sip0.io0.io_cpu");
    assert_string_equal(kb_topo_node(t, (uint32_t)kb_topo_io_node(t, 0, 0, "pcie_ep"))->id, "sip0.io0.pcie_ep");
    /* absent places and kinds */
    assert_int_equal(kb_topo_pe_node(t, 0, 4, 0, "pe_cpu"), KB_NODE_NONE);
    assert_int_equal(kb_topo_pe_node(t, 1, 0, 0, "pe_cpu"), KB_NODE_NONE);
    assert_int_equal(kb_topo_pe_node(t, 0, 0, 8, "pe_cpu"), KB_NODE_NONE);
    assert_int_equal(kb_topo_cube_node(t, 0, 0, "no_such_kind"), KB_NODE_NONE);
    assert_int_equal(kb_topo_pe_node(t, 0, 0, 0, "m_cpu"), KB_NODE_NONE); /* m_cpu has no pe */
    /* a cube has many routers: by id only */
    assert_int_equal(kb_topo_cube_node(t, 0, 0, "noc_router"), KB_NODE_AMBIGUOUS);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* small_2x2 has cubes 0..3 in 1 SIP: cube 5 and SIP 1 are valid addresses
 * of nodes the topology does not have. */
static void test_pa_on_a_cube_the_topology_lacks_is_rejected(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    kb_topo *t = load_ok(reg, "topologies/small_2x2.yaml", NULL, 0);
    const kb_topo_params *p = kb_topo_params_of(t);
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_true(kb_pa_hbm(0, (unsigned)p->cubes_per_sip + 1, 0x100, &pa, err, sizeof err));
    char *e = resolve_error(t, pa);
    assert_has(e, "no hbm_ctrl node at sip0.cube5 pe 0 in topology small_2x2");
    free(e);
    assert_true(kb_pa_cube_sram((unsigned)p->sips, 0, 0, &pa, err, sizeof err));
    e = resolve_error(t, pa);
    assert_has(e, "no sram node at sip1.cube0 in topology");
    free(e);
    /* A PE the cube lacks (8 PEs: pe_id 8 is a valid address). */
    assert_true(kb_pa_pe_tcm(0, 0, (unsigned)p->pes_per_cube, 0, &pa, err, sizeof err));
    e = resolve_error(t, pa);
    assert_has(e, "no pe_tcm node at sip0.cube0 pe 8 in topology");
    free(e);
    /* IO chiplet addresses are not routed to nodes. */
    assert_true(kb_pa_iocpu(0, 0, KB_IOCPU_SU_IO_SRAM, 0, &pa, err, sizeof err));
    e = resolve_error(t, pa);
    assert_has(e, "not routable");
    free(e);
    kb_topo_free(t);
    kb_registry_free(reg);
}

/* With 3 PEs and 10 GiB of HBM, the slice is floor(10 GiB / 3) bytes, and
 * 3 slices end 1 byte short of the capacity. Every offset below the
 * capacity must still land on one of the cube's 3 controllers; the last
 * byte belongs to the last PE (pe2), not to a non-existent pe3. */
static void test_last_hbm_byte_resolves_when_capacity_is_not_divisible_by_slices(void **state)
{
    (void)state;
    kb_registry *reg = new_registry();
    const char *ov[] = {"cube.pe_layout={corners: [NW, NE, SW], pe_per_corner: 1}",
                        "cube.memory_map={hbm_slices_per_cube: 3, hbm_pseudo_channels: 24, "
                        "hbm_total_gb_per_cube: 10}"};
    kb_topo *t = load_ok(reg, "topologies/small_1cube_8pe.yaml", ov, 2);
    const kb_topo_params *p = kb_topo_params_of(t);
    assert_int_equal(p->pes_per_cube, 3);
    assert_int_equal(p->hbm_slice_bytes, 10 * GiB / 3);
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_true(kb_pa_hbm(0, 0, 10 * GiB - 1, &pa, err, sizeof err));
    kb_target tg;
    char *e = NULL;
    if (!kb_resolve_pa(t, pa, &tg, &e)) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s", e);
        free(e);
        kb_topo_free(t);
        kb_registry_free(reg);
        fail_msg("last HBM byte below capacity does not resolve: %s", msg);
    }
    assert_string_equal(kb_topo_node(t, tg.node)->id, "sip0.cube0.hbm_ctrl.pe2");
    kb_topo_free(t);
    kb_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hbm_pa_beyond_the_cube_capacity_is_rejected),
        cmocka_unit_test(test_hbm_pa_resolves_to_the_slice_owners_controller),
        cmocka_unit_test(test_last_hbm_byte_resolves_when_capacity_is_not_divisible_by_slices),
        cmocka_unit_test(test_nodes_are_found_by_place_and_kind),
        cmocka_unit_test(test_pa_on_a_cube_the_topology_lacks_is_rejected),
        cmocka_unit_test(test_sram_tcm_and_mcpu_pas_resolve_to_their_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
