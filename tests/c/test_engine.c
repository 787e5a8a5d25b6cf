/* The arithmetic engine (src/tensor/engine.h): op semantics shared by the
 * PE and host tensors (relu's NaN, the epilogue activations), the op
 * table, reductions fed in pieces, softmax, isclose, and the rounding of
 * typed runs. */
#include "tensor/engine.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

static void test_relu_propagates_nan_and_keeps_negative_zero(void **state)
{
    (void)state;
    /* torch.relu is max(x, 0) with x first: x < 0 ? 0 : x */
    double x[5] = {-2, -0.0, 0.5, NAN, -INFINITY}, y[5];
    kb_compute_unary(KB_OP_RELU, x, y, 5);
    assert_true(y[0] == 0 && !signbit(y[0]));
    assert_true(y[1] == 0 && signbit(y[1]));
    assert_true(y[2] == 0.5);
    assert_true(isnan(y[3]));
    assert_true(y[4] == 0);
}

static void test_epilogue_activations_follow_their_formulas(void **state)
{
    (void)state;
    double x[4] = {-3, -0.5, 0, 2}, y[4];
    kb_compute_unary(KB_OP_GELU, x, y, 4);
    for (int i = 0; i < 4; i++)
        assert_true(y[i] == 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0))));
    assert_true(fabs(y[3] - 1.9544997361036416) < 1e-15); /* gelu(2) = 2 * Phi(2) */
    kb_compute_unary(KB_OP_SILU, x, y, 4);
    for (int i = 0; i < 4; i++)
        assert_true(y[i] == x[i] / (1 + exp(-x[i])));
    kb_compute_unary(KB_OP_TANH, x, y, 4);
    assert_true(y[3] == tanh(2.0));
    /* dequant/scale multiply, bias/add add */
    double o[4] = {2, 2, 2, 2};
    kb_compute_binary(KB_OP_MUL, x, o, y, 4);
    assert_true(y[0] == -6 && y[3] == 4);
    kb_compute_binary(KB_OP_ADD, x, o, y, 4);
    assert_true(y[0] == -1 && y[3] == 4);
}

static void test_new_ops_are_in_the_table_with_a_cost(void **state)
{
    (void)state;
    const char *names[] = {"gelu", "silu", "tanh"};
    for (int i = 0; i < 3; i++) {
        kb_mop op;
        assert_true(kb_mop_parse(names[i], &op));
        assert_int_equal(kb_mop_info_of(op)->arity, 1);
        assert_int_equal(kb_mop_info_of(op)->cost, KB_COST_TRANSCENDENTAL);
        assert_false(kb_mop_info_of(op)->axis);
    }
    kb_mop mean;
    assert_true(kb_mop_parse("mean", &mean));
    assert_true(kb_mop_info_of(mean)->axis);
    assert_int_equal(kb_mop_info_of(mean)->cost, KB_COST_REDUCE);
    assert_null(kb_mop_info_of(KB_NOPS));
}

static void test_reducer_in_pieces_equals_one_pass(void **state)
{
    (void)state;
    double x[7] = {0.1, 0.2, 0.3, 1e16, -1e16, 0.7, 3};
    kb_reducer whole, parts;
    kb_reducer_init(&whole, KB_OP_SUM);
    kb_reducer_feed(&whole, x, 1, 7);
    kb_reducer_init(&parts, KB_OP_SUM);
    kb_reducer_feed(&parts, x, 1, 3);
    kb_reducer_feed(&parts, x + 3, 1, 4);
    assert_memory_equal(&whole.acc, &parts.acc, sizeof whole.acc); /* one running sum, in order */
    kb_reducer_init(&parts, KB_OP_MEAN);
    kb_reducer_feed(&parts, x, 2, 4); /* 0.1, 0.3, -1e16, 3 */
    assert_true(kb_reducer_result(&parts, NULL) == (((0.1 + 0.3) + -1e16) + 3) / 4);
}

static void test_max_and_min_keep_the_first_extreme_and_the_first_nan(void **state)
{
    (void)state;
    double x[6] = {1, 5, 5, -2, NAN, 9};
    kb_reducer r;
    int64_t arg;
    kb_reducer_init(&r, KB_OP_MAX);
    kb_reducer_feed(&r, x, 1, 4);
    assert_true(kb_reducer_result(&r, &arg) == 5);
    assert_int_equal(arg, 1); /* the first 5 */
    kb_reducer_feed(&r, x + 4, 1, 2);
    assert_true(isnan(kb_reducer_result(&r, &arg)));
    assert_int_equal(arg, 4); /* NaN wins and stays; 9 does not replace it */
    kb_reducer_init(&r, KB_OP_MIN);
    kb_reducer_feed(&r, x, 1, 4);
    assert_true(kb_reducer_result(&r, &arg) == -2);
    assert_int_equal(arg, 3);
}

static void test_axis_mean_and_softmax_in_pieces(void **state)
{
    (void)state;
    /* [2, 3] along axis 1 */
    double x[6] = {1, 2, 3, 4, 5, 9}, y[6];
    kb_compute_axis(KB_OP_MEAN, x, y, 2, 3, 1);
    assert_true(y[0] == 2 && y[1] == 6);
    kb_compute_axis(KB_OP_SOFTMAX, x, y, 2, 3, 1);
    /* the same lane as two pieces: sum over both, then apply */
    double sum = kb_compute_softmax_sum(0.0, x + 3, 1, 2, 9.0);
    sum = kb_compute_softmax_sum(sum, x + 5, 1, 1, 9.0);
    double z[3];
    kb_compute_softmax_apply(x + 3, 1, 3, 9.0, sum, z, 1);
    assert_memory_equal(z, y + 3, sizeof z);
    assert_true(fabs(y[3] + y[4] + y[5] - 1) < 1e-15);
}

static void test_isclose_and_equal(void **state)
{
    (void)state;
    double a[6] = {1, INFINITY, NAN, 1, 100, -INFINITY}, b[6] = {1 + 1e-9, INFINITY, NAN, 1.1, 100.0001, INFINITY}, y[6];
    kb_close c = {.rtol = 1e-5, .atol = 1e-8, .equal_nan = false};
    kb_compute_isclose(&c, a, b, y, 6);
    double want[6] = {1, 1, 0, 0, 1, 0};
    assert_memory_equal(y, want, sizeof y);
    c.equal_nan = true;
    kb_compute_isclose(&c, a, b, y, 6);
    assert_true(y[2] == 1);
    kb_compute_equal(a, a, y, 6);
    assert_true(y[0] == 1 && y[1] == 1 && y[2] == 0);
}

static void test_runs_round_floats_through_f32(void **state)
{
    (void)state;
    /* 1 + 2^-11 + 2^-40 is above the f16 tie 1 + 2^-11: rounded once it is
     * 1 + 2^-10; a run rounds to f32 first (1 + 2^-11, the tie), then to
     * even: 1.0. kb_dtype_store rounds once. */
    double v = 1 + 0x1p-11 + 0x1p-40;
    uint16_t run, once;
    kb_compute_store_run(KB_F16, &run, 1, &v, 1);
    kb_dtype_store(KB_F16, &once, v);
    assert_true(kb_f16_to_f32(run) == 1.0f);
    assert_true(kb_f16_to_f32(once) == 1.0f + 0x1p-10f);
    /* loads: a stride of 0 repeats one element; integers wrap on store */
    int16_t s[3] = {7, 8, 9};
    double d[4];
    kb_compute_load_run(KB_I16, s + 1, 0, d, 4);
    assert_true(d[0] == 8 && d[3] == 8);
    double big[2] = {70000, -1.5};
    kb_compute_store_run(KB_I16, s, 2, big, 2);
    assert_int_equal(s[0], 70000 - 65536);
    assert_int_equal(s[2], -1);
}

static void test_ternary_ops(void **state)
{
    (void)state;
    double c[3] = {1, 0, 2}, a[3] = {10, 20, 30}, b[3] = {-1, -2, NAN}, y[3];
    kb_compute_ternary(KB_OP_WHERE, c, a, b, y, 3);
    assert_true(y[0] == 10 && y[1] == -2 && y[2] == 30);
    kb_compute_ternary(KB_OP_FMA, a, c, b, y, 3);
    assert_true(y[0] == 9 && y[1] == -2 && isnan(y[2]));
    kb_compute_ternary(KB_OP_CLAMP, a, (double[]){15, 15, 15}, (double[]){25, 25, NAN}, y, 3);
    assert_true(y[0] == 15 && y[1] == 20 && isnan(y[2]));
}

/* kb_compute_ewise takes as many operands as the op's arity: sqrt reads
 * only the first, sub two, where three; an op that is not element-wise
 * (sum) gives NaN. */
static void test_ewise_picks_the_op_by_its_arity(void **state)
{
    (void)state;
    double a[2] = {9, 4}, b[2] = {1, 2}, c[2] = {0, 1}, y[2];
    kb_compute_ewise(KB_OP_SQRT, (const double *const[]){a, NULL, NULL}, y, 2);
    assert_true(y[0] == 3 && y[1] == 2);
    kb_compute_ewise(KB_OP_SUB, (const double *const[]){a, b, NULL}, y, 2);
    assert_true(y[0] == 8 && y[1] == 2);
    kb_compute_ewise(KB_OP_WHERE, (const double *const[]){c, a, b}, y, 2);
    assert_true(y[0] == 1 && y[1] == 4);
    kb_compute_ewise(KB_OP_SUM, (const double *const[]){a, NULL, NULL}, y, 2);
    assert_true(isnan(y[0]) && isnan(y[1]));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_relu_propagates_nan_and_keeps_negative_zero),
        cmocka_unit_test(test_epilogue_activations_follow_their_formulas),
        cmocka_unit_test(test_new_ops_are_in_the_table_with_a_cost),
        cmocka_unit_test(test_reducer_in_pieces_equals_one_pass),
        cmocka_unit_test(test_max_and_min_keep_the_first_extreme_and_the_first_nan),
        cmocka_unit_test(test_axis_mean_and_softmax_in_pieces),
        cmocka_unit_test(test_isclose_and_equal),
        cmocka_unit_test(test_runs_round_floats_through_f32),
        cmocka_unit_test(test_ternary_ops),
        cmocka_unit_test(test_ewise_picks_the_op_by_its_arity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
