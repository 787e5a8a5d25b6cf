/* PE engine latency formulas (src/comp/pe/gemm.c, math.c, cpu.c, tcm.c), with the default
 * attributes of docs/pe-model.md; each expected figure is derived in a
 * comment. */
#include "comp/pe/pe.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static const kb_gemm_model GEMM = {1.0, 32, 32, 4, 4.0, 0};
static const kb_math_model MATH = {1.0, 128, 4.0, 0};

static void test_gemm_default_tile_takes_16_cycles(void **state)
{
    (void)state;
    /* 32 x 64 x 32: ceil(32/32) * ceil(32/32) * ceil(64/4) = 16 cycles = 16 ns at 1 GHz */
    assert_int_equal(kb_gemm_ps(&GEMM, 32, 64, 32, KB_F16), 16000);
    /* partial tiles round up: 33 x 65 x 1 -> 2 * 1 * 17 = 34 */
    assert_true(kb_gemm_cycles(&GEMM, 33, 65, 1, KB_BF16) == 34.0);
    /* 32-bit operands take f32_slowdown times as long */
    assert_int_equal(kb_gemm_ps(&GEMM, 32, 64, 32, KB_F32), 64000);
    /* overhead and clock */
    kb_gemm_model g = GEMM;
    g.clock_ghz = 2.0;
    g.overhead_ps = 3000;
    assert_int_equal(kb_gemm_ps(&g, 32, 64, 32, KB_F16), 3000 + 8000);
    assert_int_equal(kb_gemm_ps(&GEMM, 0, 64, 32, KB_F16), 0);
}

static void test_math_costs_per_vector(void **state)
{
    (void)state;
    /* 1000 f16 elements: 64 lanes -> 16 vectors; add 1 cycle each */
    assert_int_equal(kb_math_ps(&MATH, KB_OP_ADD, 1000, 1000, KB_F16), 16000);
    /* f32: 32 lanes -> 32 vectors; exp 4 cycles each */
    assert_int_equal(kb_math_ps(&MATH, KB_OP_EXP, 1000, 1000, KB_F32), 128000);
    /* sum of 16 rows of 256 f32: 128 vectors + log2(32) = 5 cycles per row */
    assert_int_equal(kb_math_ps(&MATH, KB_OP_SUM, 16 * 256, 16, KB_F32), (128 + 5 * 16) * 1000);
    /* softmax: 3 + 2 x 4 = 11 cycles per vector */
    assert_int_equal(kb_math_ps(&MATH, KB_OP_SOFTMAX, 64, 64, KB_F16), 11000);
}

static void test_bandwidth_and_cycles(void **state)
{
    (void)state;
    assert_int_equal(kb_bw_ps(1024, 512.0), 2000);  /* 1 KiB at 512 GB/s = 2 ns */
    assert_int_equal(kb_bw_ps(1, 3.0), 334);        /* rounded up to the ps */
    assert_int_equal(kb_bw_ps(1024, 0.0), 0);       /* not paced */
    assert_int_equal(kb_cycles_ps(3, 1.5), 2000);
    assert_int_equal(kb_cycles_ps(3, 0.0), 0);      /* no clock: no time */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_default_tile_takes_16_cycles),
        cmocka_unit_test(test_math_costs_per_vector),
        cmocka_unit_test(test_bandwidth_and_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
