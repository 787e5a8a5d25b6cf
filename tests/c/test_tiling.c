/* Tile plan generators (src/comp/pe/tiling.c), without a simulation: stage
 * sequences of plain, pinned and epilogue GEMM plans and of math plans,
 * K-loop residency, tile counts and determinism. */
#include "comp/pe/pe.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static kb_plan_spec gemm(int64_t M, int64_t K, int64_t N)
{
    kb_plan_spec s = {0};
    s.gemm = true;
    s.M = M, s.K = K, s.N = N;
    s.tm = 32, s.tk = 64, s.tn = 32;
    s.has[0] = s.has[1] = true;
    s.in_size[0] = s.in_size[1] = 2;
    s.acc_size = 4;
    s.out_size = 2;
    return s;
}

/* The stage types of tile id as a string like "R0 R1 F G S W". */
static const char *seq(const kb_plan_spec *s, uint64_t id, char *buf)
{
    static const char letters[] = "RFGMSW";
    kb_tile t;
    kb_plan_tile(s, id, &t);
    char *p = buf;
    for (int i = 0; i < t.nstages; i++) {
        *p++ = letters[t.stages[i].type];
        if (t.stages[i].type == KB_ST_DMA_READ || t.stages[i].type == KB_ST_MATH)
            *p++ = t.stages[i].arg == KB_STAGE_HEAD ? 'h' : (char)('0' + t.stages[i].arg);
        *p++ = ' ';
    }
    p[p > buf ? -1 : 0] = '\0';
    return buf;
}

static void test_tile_counts(void **state)
{
    (void)state;
    kb_plan_spec s = gemm(128, 256, 128);
    assert_int_equal(kb_plan_tiles(&s), 64); /* 4 x 4 x 4 */
    s = gemm(32, 64, 32);
    assert_int_equal(kb_plan_tiles(&s), 1);
    s = gemm(512, 512, 512);
    assert_int_equal(kb_plan_tiles(&s), 2048); /* 16 x 16 x 8 */
    s = gemm(16, 16, 16);                      /* under one tile: still one */
    assert_int_equal(kb_plan_tiles(&s), 1);
}

static void test_plain_gemm_keeps_the_accumulator_across_k(void **state)
{
    (void)state;
    char b[64];
    kb_plan_spec s = gemm(64, 192, 64); /* 2 x 2 x 3 tiles, k fastest */
    assert_string_equal(seq(&s, 0, b), "R0 R1 F G");
    assert_string_equal(seq(&s, 1, b), "R0 R1 F G");
    assert_string_equal(seq(&s, 2, b), "R0 R1 F G S W");
    kb_tile t;
    kb_plan_tile(&s, 5, &t); /* m 0, n 1, k 2 */
    assert_true(t.m == 0 && t.n == 1 && t.k == 2 && t.last_k);
    kb_plan_tile(&s, 6, &t); /* m 1, n 0, k 0 */
    assert_true(t.m == 1 && t.n == 0 && t.k == 0 && t.first_k);
    /* no STORE or DMA_WRITE before the last k of any (m, n) */
    for (uint64_t id = 0; id < kb_plan_tiles(&s); id++) {
        kb_plan_tile(&s, id, &t);
        for (int i = 0; i < t.nstages; i++)
            if (t.stages[i].type == KB_ST_STORE || t.stages[i].type == KB_ST_DMA_WRITE)
                assert_true(t.last_k);
    }
}

static void test_pinning_drops_the_operands_dma_read(void **state)
{
    (void)state;
    char b[64];
    kb_plan_spec s = gemm(32, 64, 32);
    s.pinned[0] = true;
    assert_string_equal(seq(&s, 0, b), "R1 F G S W");
    s.pinned[0] = false, s.pinned[1] = true;
    assert_string_equal(seq(&s, 0, b), "R0 F G S W");
    s.pinned[0] = true;
    assert_string_equal(seq(&s, 0, b), "F G S W");
}

static void test_epilogues_by_scope_in_order(void **state)
{
    (void)state;
    char b[64];
    kb_plan_spec s = gemm(32, 128, 32); /* two k tiles */
    s.nepi = 3;
    s.scope[0] = KB_SCOPE_K_TILE;      /* dequant per K tile */
    s.scope[1] = KB_SCOPE_OUTPUT_TILE; /* bias */
    s.scope[2] = KB_SCOPE_OUTPUT_TILE; /* relu */
    assert_string_equal(seq(&s, 0, b), "R0 R1 F G M0");
    assert_string_equal(seq(&s, 1, b), "R0 R1 F G M0 M1 M2 S W");
}

static void test_epilogue_operands_are_fetched_with_their_tile(void **state)
{
    (void)state;
    kb_plan_spec s = gemm(32, 128, 32);
    s.nepi = 1;
    s.scope[0] = KB_SCOPE_OUTPUT_TILE;
    s.epi_operand[0] = KB_EPI_COLS; /* a bias row: 32 columns of 2 bytes */
    s.epi_size[0] = 2;
    kb_tile t0, t1;
    kb_plan_tile(&s, 0, &t0);
    kb_plan_tile(&s, 1, &t1);
    uint64_t operands = 32 * 64 * 2 + 64 * 32 * 2;
    assert_int_equal(t0.stages[2].bytes, operands);
    assert_int_equal(t1.stages[2].bytes, operands + 64);
    /* the register file holds the fetched bytes and the f32 accumulator */
    assert_int_equal(kb_plan_rf_bytes(&s, &t1), operands + 64 + 32 * 32 * 4);
}

static void test_math_plans(void **state)
{
    (void)state;
    char b[64];
    kb_plan_spec s = {0};
    s.M = 64, s.N = 96, s.tm = 32, s.tn = 32;
    s.has[0] = true;
    s.in_size[0] = s.out_size = 4;
    assert_int_equal(kb_plan_tiles(&s), 6); /* 2 x 3, M -> N */
    assert_string_equal(seq(&s, 0, b), "R0 F Mh S W");
    kb_tile t;
    kb_plan_tile(&s, 4, &t);
    assert_true(t.m == 1 && t.n == 1);
    s.has[1] = true;
    s.in_size[1] = 4;
    assert_string_equal(seq(&s, 0, b), "R0 R1 F Mh S W");
    s.pinned[0] = true;
    assert_string_equal(seq(&s, 0, b), "R1 F Mh S W");
}

static void test_edge_tiles_and_determinism(void **state)
{
    (void)state;
    kb_plan_spec s = gemm(33, 70, 40);
    assert_int_equal(kb_plan_tiles(&s), 2 * 2 * 2);
    kb_tile a, b;
    kb_plan_tile(&s, 7, &a); /* the corner: 1 row, 6 deep, 8 columns */
    assert_true(a.rows == 1 && a.depth == 6 && a.cols == 8);
    assert_int_equal(a.stages[0].bytes, 1 * 6 * 2);
    memset(&b, 0xab, sizeof b);
    kb_plan_tile(&s, 7, &b);
    assert_int_equal(a.nstages, b.nstages);
    assert_memory_equal(a.stages, b.stages, sizeof a.stages[0] * (size_t)a.nstages);
    assert_string_equal(kb_stage_name(KB_ST_DMA_WRITE), "DMA_WRITE");
}

/* Tile sizes up to INT64_MAX are clipped to the matrix without overflow;
 * the largest stage of a plan is bounded exactly in 64 bits. */
static void test_huge_tile_sizes_clip_and_the_largest_stage_is_exact(void **state)
{
    (void)state;
    kb_plan_spec s = gemm(100, 200, 300);
    s.tm = s.tk = s.tn = INT64_MAX;
    assert_int_equal(kb_plan_tiles(&s), 1);
    kb_tile t;
    kb_plan_tile(&s, 0, &t);
    assert_int_equal(t.rows, 100);
    assert_int_equal(t.depth, 200);
    assert_int_equal(t.cols, 300);
    /* fetch: A 100x200 + B 200x300 f16 */
    assert_int_equal(kb_plan_max_stage(&s), (100 * 200 + 200 * 300) * 2);
    /* 2^17 x 2^17 f32 in one tile: 64 GiB, more than a stage can carry */
    kb_plan_spec m = {.gemm = false, .M = 1 << 17, .N = 1 << 17, .tm = 1 << 17, .tn = 1 << 17,
                      .has = {true, false}, .in_size = {4, 0}, .out_size = 4};
    assert_true(kb_plan_max_stage(&m) > UINT32_MAX);
    assert_int_equal(kb_plan_max_stage(&m), UINT64_C(1) << 36); /* 2^34 elements of 4 bytes */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tile_counts),
        cmocka_unit_test(test_huge_tile_sizes_clip_and_the_largest_stage_is_exact),
        cmocka_unit_test(test_plain_gemm_keeps_the_accumulator_across_k),
        cmocka_unit_test(test_pinning_drops_the_operands_dma_read),
        cmocka_unit_test(test_epilogues_by_scope_in_order),
        cmocka_unit_test(test_epilogue_operands_are_fetched_with_their_tile),
        cmocka_unit_test(test_math_plans),
        cmocka_unit_test(test_edge_tiles_and_determinism),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
