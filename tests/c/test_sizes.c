/* Checked size arithmetic: the overflow helpers of src/core/util.h and the
 * one conversion of a shape into bytes, kb_shape_nbytes (src/mem/view.h),
 * which every shape from a user passes before a view is made of it. */
#include "core/util.h"
#include "mem/view.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

static void test_checked_arithmetic_reports_overflow(void **state)
{
    (void)state;
    uint64_t u;
    int64_t i;
    assert_true(kb_mul_u64(UINT64_C(1) << 32, UINT64_C(1) << 31, &u));
    assert_int_equal(u, UINT64_C(1) << 63);
    assert_false(kb_mul_u64(UINT64_C(1) << 32, UINT64_C(1) << 32, &u));
    assert_true(kb_add_u64(UINT64_MAX - 1, 1, &u));
    assert_false(kb_add_u64(UINT64_MAX, 1, &u));
    assert_true(kb_mul_i64(-(INT64_C(1) << 62), 2, &i));
    assert_int_equal(i, INT64_MIN);
    assert_false(kb_mul_i64(INT64_C(1) << 62, 2, &i));
    assert_false(kb_add_i64(INT64_MAX, 1, &i));
    assert_false(kb_sub_i64(INT64_MAX, -1, &i));
    assert_true(kb_sub_i64(INT64_MAX, INT64_MAX, &i));
    assert_int_equal(i, 0);
}

static void test_shape_bytes_are_exact_up_to_the_limit(void **state)
{
    (void)state;
    uint64_t n;
    int64_t ok[] = {1 << 20, 1 << 20, 16}; /* 2^44 elements of 4 bytes: exactly 2^46 */
    assert_true(kb_shape_nbytes(3, ok, 4, &n));
    assert_int_equal(n, KB_VIEW_MAX_BYTES);
    assert_false(kb_shape_nbytes(3, ok, 8, &n)); /* one byte-size more */
    int64_t wrap[] = {INT64_C(1) << 31, INT64_C(1) << 31, INT64_C(1) << 31}; /* 2^93: no wrap to a small size */
    assert_false(kb_shape_nbytes(3, wrap, 4, &n));
    int64_t neg[] = {4, -1};
    assert_false(kb_shape_nbytes(2, neg, 1, &n));
    int64_t none[1];
    assert_true(kb_shape_nbytes(0, none, 2, &n)); /* a 0-d tensor: one element */
    assert_int_equal(n, 2);
}

/* An empty shape still needs strides: the sizes other than 0 must fit. */
static void test_an_empty_shape_is_checked_without_its_zero(void **state)
{
    (void)state;
    uint64_t n = 7;
    int64_t fine[] = {0, 1 << 20, 1 << 20};
    assert_true(kb_shape_nbytes(3, fine, 4, &n));
    assert_int_equal(n, 0);
    int64_t huge[] = {INT64_C(1) << 62, 0, INT64_C(1) << 62};
    assert_false(kb_shape_nbytes(3, huge, 1, &n));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_checked_arithmetic_reports_overflow),
        cmocka_unit_test(test_shape_bytes_are_exact_up_to_the_limit),
        cmocka_unit_test(test_an_empty_shape_is_checked_without_its_zero),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
