/* Cube NoC auto-layout (src/topo/layout.c; spec topology-fabric-latency.md
 * §2.4): router grid, HBM exclusion zone, PE / M_CPU / SRAM attachment and
 * UCIe connection placement, and the geometries it must refuse.
 *
 * Expected numbers are derived in the comments from the geometry, the way
 * §2.4 describes the algorithm, not copied from the implementation. */
#include "topo/layout.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The default cube of topologies/default.yaml (spec §2.4 / §4.15). */
static kb_cube_geom default_geom(void)
{
    kb_cube_geom g = {
        .w_mm = 15.0,
        .h_mm = 14.0,
        .corner_inset_mm = 1.5,
        .pe_pitch_mm = 2.5,
        .max_spacing_mm = 3.0,
        .hbm_row_offset_mm = 1.5,
        .hbm_gap_mm = 1.5,
        .corners = {KB_CORNER_NW, KB_CORNER_NE, KB_CORNER_SW, KB_CORNER_SE},
        .ncorners = 4,
        .pe_per_corner = 2,
        .n_connections = 4,
        .mcpu_x = 1.5,
        .mcpu_y = 5.5,
        .sram_x = 1.5,
        .sram_y = 8.5,
    };
    return g;
}

static void make_ok(const kb_cube_geom *g, kb_cube_layout *L)
{
    char err[256] = "";
    if (!kb_cube_layout_make(g, L, err, (int)sizeof err))
        fail_msg("layout failed: %s", err);
}

/* Returns the error message of a geometry that must be refused. */
static void make_fails(const kb_cube_geom *g, char *err, int n)
{
    kb_cube_layout L;
    err[0] = '\0';
    if (kb_cube_layout_make(g, &L, err, n))
        fail_msg("layout of an impossible geometry succeeded (%dx%d routers)", L.rows, L.cols);
    assert_true(err[0] != '\0');
}

static void assert_rc(kb_rc got, int row, int col)
{
    if (got.row != row || got.col != col)
        fail_msg("expected r%dc%d, got r%dc%d", row, col, got.row, got.col);
}

static int present_count(const kb_cube_layout *L)
{
    int n = 0;
    for (int r = 0; r < L->rows; r++)
        for (int c = 0; c < L->cols; c++)
            n += L->present[r][c];
    return n;
}

static void assert_present(const kb_cube_layout *L, kb_rc rc, const char *what)
{
    if (rc.row < 0 || rc.row >= L->rows || rc.col < 0 || rc.col >= L->cols ||
        !L->present[rc.row][rc.col])
        fail_msg("%s attaches to r%dc%d, which is not a router of the %dx%d grid", what, rc.row,
                 rc.col, L->rows, L->cols);
}

/* Every attachment (PEs, M_CPU, SRAM, UCIe connections) sits on a router
 * that exists: nothing may attach inside the HBM hole. */
static void assert_attachments_present(const kb_cube_layout *L)
{
    char what[64];
    for (int p = 0; p < L->npe; p++) {
        snprintf(what, sizeof what, "PE%d", p);
        assert_present(L, L->pe[p], what);
    }
    assert_present(L, L->m_cpu, "M_CPU");
    assert_present(L, L->sram, "SRAM");
    for (int s = 0; s < KB_SIDES; s++)
        for (int k = 0; k < L->nconn; k++) {
            snprintf(what, sizeof what, "UCIe-%s conn%d", kb_side_names[s], k);
            assert_present(L, L->ucie[s][k], what);
        }
}

/* Columns: PE x positions 1.5, 4.0 (west corners: inset, inset + pitch) and
 * 11.0, 13.5 (east: w - inset - pitch, w - inset); the 7.0 mm gap between
 * 4.0 and 11.0 exceeds the 3.0 mm maximum, so ceil(7 / 3) - 1 = 2 relay
 * columns split it in thirds: 6 columns. Rows: n_connections 4 gives
 * ceil(4 / 2) = 2 PE rows per half, plus 2 HBM rows: 6 rows. The HBM hole is
 * rows 2..3 (rows_per_half .. rows_per_half + 1) x columns 2..3
 * (6 / 2 - 1 .. 6 / 2): 36 - 4 = 32 routers. */
static void test_default_geometry_is_6x6_with_the_hbm_hole_at_r2_r3_c2_c3(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_int_equal(L.rows, 6);
    assert_int_equal(L.cols, 6);
    assert_int_equal(L.hbm_row0, 2);
    assert_int_equal(L.hbm_row1, 3);
    assert_int_equal(L.hbm_col0, 2);
    assert_int_equal(L.hbm_col1, 3);
    for (int r = 0; r < L.rows; r++)
        for (int c = 0; c < L.cols; c++) {
            bool hole = (r == 2 || r == 3) && (c == 2 || c == 3);
            if (L.present[r][c] == hole)
                fail_msg("r%dc%d should %s", r, c, hole ? "be excluded" : "be a router");
        }
    assert_int_equal(present_count(&L), 6 * 6 - 2 * 2);
}

/* Column x: 1.5, 4.0, 4.0 + 7/3, 4.0 + 14/3, 11.0, 13.5. Row y: top PE rows
 * from the inset 1.5 to h/2 - offset - gap = 7 - 1.5 - 1.5 = 4.0; HBM rows
 * at h/2 -/+ 1.5 = 5.5, 8.5; bottom rows mirror the top: 14 - 4 = 10.0,
 * 14 - 1.5 = 12.5. No two neighbouring columns are more than 3.0 mm apart. */
static void test_default_router_positions_follow_pe_columns_relays_and_hbm_rows(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    kb_cube_layout L;
    make_ok(&g, &L);
    const double xs[6] = {1.5, 4.0, 4.0 + 7.0 / 3, 4.0 + 14.0 / 3, 11.0, 13.5};
    const double ys[6] = {1.5, 4.0, 5.5, 8.5, 10.0, 12.5};
    for (int i = 0; i < 6; i++) {
        assert_float_equal(L.col_x[i], xs[i], 1e-9);
        assert_float_equal(L.row_y[i], ys[i], 1e-9);
    }
    for (int c = 1; c < L.cols; c++)
        assert_true(L.col_x[c] - L.col_x[c - 1] <= g.max_spacing_mm + 1e-9);
}

/* PEs in index order corner by corner (NW, NE, SW, SE), 2 per corner:
 * NW -> row 0, NE -> row 1, SW -> row hbm_row1 + 1 = 4, SE -> row 5; each
 * on the nearest column to its x (1.5 -> c0, 4.0 -> c1, 11.0 -> c4,
 * 13.5 -> c5). Spec worked example: PE0 on r0c0, PE2 on r1c4. */
static void test_default_pe_attachment_matches_the_spec_worked_example(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_int_equal(L.npe, 8);
    const int want[8][2] = {{0, 0}, {0, 1}, {1, 4}, {1, 5}, {4, 0}, {4, 1}, {5, 4}, {5, 5}};
    for (int p = 0; p < 8; p++)
        assert_rc(L.pe[p], want[p][0], want[p][1]);
    /* PE positions: x as derived above, y the row of the PE's corner. */
    const double px[8] = {1.5, 4.0, 11.0, 13.5, 1.5, 4.0, 11.0, 13.5};
    const double py[8] = {1.5, 1.5, 4.0, 4.0, 10.0, 10.0, 12.5, 12.5};
    for (int p = 0; p < 8; p++) {
        assert_float_equal(L.pe_x[p], px[p], 1e-9);
        assert_float_equal(L.pe_y[p], py[p], 1e-9);
    }
    assert_attachments_present(&L);
}

/* M_CPU at (1.5, 5.5) and SRAM at (1.5, 8.5) sit exactly on routers
 * (column 0 at x 1.5; HBM rows at y 5.5 and 8.5, which column 0 keeps):
 * r2c0 and r3c0, as in the spec's diagram. */
static void test_default_mcpu_and_sram_attach_to_r2c0_and_r3c0(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_rc(L.m_cpu, 2, 0);
    assert_rc(L.sram, 3, 0);
}

/* 4 connections per side. E/W use the PE rows 0, 1, 4, 5 on the outer
 * columns (5 and 0); N/S use the PE columns 0, 1, 4, 5 on the outer rows
 * (0 and 5). */
static void test_default_ucie_connections_sit_on_pe_rows_and_pe_columns(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_int_equal(L.nconn, 4);
    const int lines[4] = {0, 1, 4, 5};
    for (int k = 0; k < 4; k++) {
        assert_rc(L.ucie[KB_SIDE_E][k], lines[k], 5);
        assert_rc(L.ucie[KB_SIDE_W][k], lines[k], 0);
        assert_rc(L.ucie[KB_SIDE_N][k], 0, lines[k]);
        assert_rc(L.ucie[KB_SIDE_S][k], 5, lines[k]);
    }
}

/* One PE (corner NW, 1 per corner): columns are the corner columns 1.5 and
 * 13.5 only, 12 mm apart: ceil(12 / 3) - 1 = 3 relays, 5 columns; rows as
 * the default (4 connections): 6. HBM hole columns 5/2 - 1 .. 5/2 = 1..2,
 * so 30 - 4 = 26 routers. PE0 on r0c0. N/S connections: only 1 PE column,
 * fewer than 4 connections, so they spread over all 5 columns:
 * k * 5 / 4 = 0, 1, 2, 3. */
static void test_single_pe_layout_has_pe0_on_r0c0(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.corners[0] = KB_CORNER_NW;
    g.ncorners = 1;
    g.pe_per_corner = 1;
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_int_equal(L.npe, 1);
    assert_int_equal(L.cols, 5);
    assert_int_equal(L.rows, 6);
    assert_int_equal(L.hbm_col0, 1);
    assert_int_equal(L.hbm_col1, 2);
    assert_int_equal(present_count(&L), 5 * 6 - 2 * 2);
    assert_rc(L.pe[0], 0, 0);
    for (int k = 0; k < 4; k++)
        assert_rc(L.ucie[KB_SIDE_N][k], 0, k);
    assert_attachments_present(&L);
}

/* One connection per port still gives max(1, 2) = 2 -> 1 PE row per half:
 * rows = 1 + 2 + 1 = 4, NE PEs share row 0 with NW, SE share row 3 with SW,
 * and the connection sits on the first PE row / PE column. */
static void test_one_connection_layout_has_one_pe_row_per_half(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.n_connections = 1;
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_int_equal(L.rows, 4);
    assert_int_equal(L.hbm_row0, 1);
    assert_int_equal(L.hbm_row1, 2);
    assert_int_equal(L.nconn, 1);
    assert_rc(L.pe[2], 0, 4); /* NE */
    assert_rc(L.pe[6], 3, 4); /* SE */
    assert_rc(L.ucie[KB_SIDE_E][0], 0, L.cols - 1);
    assert_rc(L.ucie[KB_SIDE_S][0], 3, 0);
    assert_attachments_present(&L);
}

/* Other valid geometries keep every attachment on a router and every
 * column gap within max spacing: 8 connections (4 PE rows per half ->
 * 10 rows), 3 PEs per corner (span 1.5 + 2 x 2.5 = 6.5 < 15 / 2), a large
 * cube, and a wide max spacing (no relays: columns 1.5, 4, 11, 13.5). */
static void test_other_valid_geometries_attach_everything_to_routers(void **state)
{
    (void)state;
    kb_cube_geom g;
    kb_cube_layout L;

    g = default_geom();
    g.n_connections = 8;
    make_ok(&g, &L);
    assert_int_equal(L.rows, 2 * 4 + 2);
    assert_attachments_present(&L);

    g = default_geom();
    g.pe_per_corner = 3;
    make_ok(&g, &L);
    assert_int_equal(L.npe, 12);
    assert_attachments_present(&L);
    for (int c = 1; c < L.cols; c++)
        assert_true(L.col_x[c] - L.col_x[c - 1] <= g.max_spacing_mm + 1e-9);

    g = default_geom();
    g.w_mm = 30.0;
    g.h_mm = 28.0;
    make_ok(&g, &L);
    assert_attachments_present(&L);
    for (int c = 1; c < L.cols; c++)
        assert_true(L.col_x[c] - L.col_x[c - 1] <= g.max_spacing_mm + 1e-9);

    g = default_geom();
    g.max_spacing_mm = 10.0;
    make_ok(&g, &L);
    assert_int_equal(L.cols, 4);
    assert_attachments_present(&L);
}

/* 8 mm: a west corner of 2 PEs spans inset + pitch = 1.5 + 2.5 = 4 mm, and
 * 2 x 4 = 8 does not fit strictly inside 8 mm. */
static void test_too_narrow_cube_is_refused_naming_width_and_span(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.w_mm = 8.0;
    char err[256];
    make_fails(&g, err, (int)sizeof err);
    assert_has(err, "8 mm wide");
    assert_has(err, "4 mm");
}

/* 6 mm tall: the top PE rows must end at h/2 - offset - gap =
 * 3 - 1.5 - 1.5 = 0 mm, above the 1.5 mm inset: no room. */
static void test_too_short_cube_is_refused(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.h_mm = 6.0;
    char err[256];
    make_fails(&g, err, (int)sizeof err);
    assert_has(err, "6 mm tall");
    assert_has(err, "no room for PE rows");
}

/* 4 corners x 5 PEs = 20 PEs, above the 16 the address map (pe_id) allows. */
static void test_more_than_16_pes_are_refused(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.w_mm = 40.0;
    g.pe_per_corner = 5;
    char err[256];
    make_fails(&g, err, (int)sizeof err);
    assert_has(err, "20 PEs per cube");
}

static void test_zero_connections_are_refused(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.n_connections = 0;
    char err[256];
    make_fails(&g, err, (int)sizeof err);
    assert_has(err, "0 UCIe connections");
}

/* One PE per corner and a max spacing wider than the cube: only the two
 * corner columns (1.5 and 13.5) exist, and the NoC cannot pass the HBM
 * block with fewer than 3 columns. */
static void test_two_column_geometry_is_refused(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    g.pe_per_corner = 1;
    g.max_spacing_mm = 100.0;
    char err[256];
    make_fails(&g, err, (int)sizeof err);
    assert_has(err, "2 router columns");
}

/* The layout is a pure function of the geometry. */
static void test_layout_is_a_pure_function_of_the_geometry(void **state)
{
    (void)state;
    kb_cube_geom g = default_geom();
    kb_cube_layout a, b;
    make_ok(&g, &a);
    make_ok(&g, &b);
    assert_memory_equal(&a, &b, sizeof a);
}

/* A spacing far below the cube's size asks for more relay columns than an
 * int holds (15 mm / 1e-9 mm = 1.5e10): counted before the conversion, it
 * is refused naming the key, never wrapped into a small grid. The columns
 * span 1.5 .. 13.5 mm: at 1e-3 mm that is 12,000 columns, far over 32. */
static void test_tiny_router_spacing_is_refused_not_wrapped(void **state)
{
    (void)state;
    const double spacings[] = {1e-3, 1e-9, 1e-300, 5e-324};
    for (size_t i = 0; i < sizeof spacings / sizeof spacings[0]; i++) {
        kb_cube_geom g = default_geom();
        g.max_spacing_mm = spacings[i];
        kb_cube_layout L;
        char err[256] = "";
        if (kb_cube_layout_make(&g, &L, err, (int)sizeof err))
            fail_msg("spacing %g mm made %dx%d routers", spacings[i], L.rows, L.cols);
        assert_non_null(strstr(err, "needs more than 32 router columns"));
        assert_non_null(L.bad_key);
        assert_string_equal(L.bad_key, "max_router_spacing_mm");
    }
    /* 1 mm: gaps of at most 3 mm become 1 mm steps, within 32 columns. */
    kb_cube_geom g = default_geom();
    g.max_spacing_mm = 1.0;
    kb_cube_layout L;
    make_ok(&g, &L);
    assert_true(L.cols <= KB_LAYOUT_MAX_LINES);
    for (int c = 1; c < L.cols; c++)
        assert_true(L.col_x[c] - L.col_x[c - 1] <= 1.0 + 1e-9);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_geometry_is_6x6_with_the_hbm_hole_at_r2_r3_c2_c3),
        cmocka_unit_test(test_default_router_positions_follow_pe_columns_relays_and_hbm_rows),
        cmocka_unit_test(test_default_pe_attachment_matches_the_spec_worked_example),
        cmocka_unit_test(test_default_mcpu_and_sram_attach_to_r2c0_and_r3c0),
        cmocka_unit_test(test_default_ucie_connections_sit_on_pe_rows_and_pe_columns),
        cmocka_unit_test(test_single_pe_layout_has_pe0_on_r0c0),
        cmocka_unit_test(test_one_connection_layout_has_one_pe_row_per_half),
        cmocka_unit_test(test_other_valid_geometries_attach_everything_to_routers),
        cmocka_unit_test(test_too_narrow_cube_is_refused_naming_width_and_span),
        cmocka_unit_test(test_too_short_cube_is_refused),
        cmocka_unit_test(test_more_than_16_pes_are_refused),
        cmocka_unit_test(test_zero_connections_are_refused),
        cmocka_unit_test(test_two_column_geometry_is_refused),
        cmocka_unit_test(test_layout_is_a_pure_function_of_the_geometry),
        cmocka_unit_test(test_tiny_router_spacing_is_refused_not_wrapped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
