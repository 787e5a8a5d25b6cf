/* Printing of host tensors (src/tensor/print.c): torch's repr with its
 * default options, through kb_tensor_format. */
#include "tensor/tensor.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"
#include "tensor_fixture.h"

/* Formats t, compares, frees both. */
static void prints_as(kb_tensor t, const char *want)
{
    char *s = kb_tensor_format(&t);
    assert_string_equal(s, want);
    free(s);
    tf_free(&t);
}

static void test_float_modes(void **state)
{
    (void)state;
    prints_as(tf_of(KB_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, 4}), "tensor([[1., 2.],\n        [3., 4.]])");
    prints_as(tf_of(KB_F16, 2, (int64_t[]){2, 2}, (double[]){1.5, -2, 3, 4}),
              "tensor([[ 1.5000, -2.0000],\n        [ 3.0000,  4.0000]], dtype=torch.float16)");
    prints_as(tf_of(KB_F32, 1, (int64_t[]){3}, (double[]){1.5, NAN, -INFINITY}), "tensor([1.5000,    nan,   -inf])");
    /* the smallest nonzero magnitude below 1e-4: scientific */
    prints_as(tf_of(KB_F32, 1, (int64_t[]){2}, (double[]){1e-5, 1}), "tensor([1.0000e-05, 1.0000e+00])");
    prints_as(tf_of(KB_F32, 0, NULL, (double[]){2.5}), "tensor(2.5000)");
}

static void test_integers_booleans_and_empty_tensors(void **state)
{
    (void)state;
    prints_as(tf_of(KB_I32, 1, (int64_t[]){3}, (double[]){1, 20, 300}), "tensor([  1,  20, 300], dtype=torch.int32)");
    prints_as(tf_of(KB_BOOL, 1, (int64_t[]){2}, (double[]){1, 0}), "tensor([ True, False])");
    prints_as(tf_new(KB_F16, 2, (int64_t[]){2, 0}), "tensor([], size=(2, 0), dtype=torch.float16)");
    prints_as(tf_new(KB_F32, 1, (int64_t[]){0}), "tensor([])");
}

/* 1001 elements are summarised: 3 edge items around "...". */
static void test_large_tensors_are_summarised(void **state)
{
    (void)state;
    kb_tensor t = tf_new(KB_I32, 1, (int64_t[]){1001});
    kb_tensor_arange(&t, 0, 1);
    prints_as(t, "tensor([   0,    1,    2,  ...,  998,  999, 1000], dtype=torch.int32)");
}

/* 12 elements of width 6: floor((80 - 7) / (6 + 2)) = 9 per line. */
static void test_rows_wrap_at_eighty_columns(void **state)
{
    (void)state;
    kb_tensor t = tf_new(KB_F32, 1, (int64_t[]){12});
    kb_tensor_fill(&t, 0.5);
    prints_as(t, "tensor([0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000,\n"
                 "        0.5000, 0.5000, 0.5000])");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_float_modes),
        cmocka_unit_test(test_integers_booleans_and_empty_tensors),
        cmocka_unit_test(test_large_tensors_are_summarised),
        cmocka_unit_test(test_rows_wrap_at_eighty_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
