/* matmul of host tensors (src/tensor/matmul.c): torch's shape rules, f32
 * through sgemm, and f16/bf16 through dgemm giving the same bytes as the
 * in-order double loop host matmul used before (the products of 16-bit
 * floats are exact in double, so only the order of the additions could
 * differ), on random inputs of several shapes up to K = 8192. */
#include "tensor/random.h"
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

/* The former host matmul of one [m, k] x [k, n] pair: accumulate over k in
 * order, in double, from 0; store the row as a run. */
static void naive(const kb_tensor *a, const kb_tensor *b, const kb_tensor *out)
{
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1];
    double *bd = malloc((size_t)(k * n + k + n) * sizeof *bd), *arow = bd + k * n, *crow = arow + k;
    for (int64_t i = 0; i < k * n; i++)
        bd[i] = kb_tensor_get(b, i);
    for (int64_t i = 0; i < m; i++) {
        for (int64_t p = 0; p < k; p++)
            arow[p] = kb_tensor_get(a, i * k + p);
        for (int64_t j = 0; j < n; j++)
            crow[j] = 0;
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++)
                crow[j] += arow[p] * bd[p * n + j];
        kb_compute_store_run(out->dtype, (char *)out->data + (size_t)(i * n) * kb_dtype_size(out->dtype), 1, crow,
                             n);
    }
    free(bd);
}

static void same_as_naive(kb_rng *g, kb_dtype dt, bool normal, int64_t m, int64_t k, int64_t n)
{
    kb_tensor a = tf_new(dt, 2, (int64_t[]){m, k}), b = tf_new(dt, 2, (int64_t[]){k, n}), c, want;
    if (normal) {
        kb_tensor_randn(g, &a);
        kb_tensor_randn(g, &b);
    } else {
        kb_tensor_rand(g, &a);
        kb_tensor_rand(g, &b);
    }
    char *err = NULL;
    assert_true(kb_tensor_matmul_shape(&a, &b, &c, &err));
    want = c;
    tf_alloc(&c);
    tf_alloc(&want);
    assert_true(kb_tensor_matmul(&a, &b, &c, &err));
    naive(&a, &b, &want);
    if (memcmp(c.data, want.data, kb_tensor_nbytes(&c)) != 0)
        fail_msg("%s %s [%lld x %lld] x [%lld x %lld]: dgemm differs from the in-order loop", kb_dtype_name(dt),
                 normal ? "randn" : "rand", (long long)m, (long long)k, (long long)k, (long long)n);
    tf_free(&a), tf_free(&b), tf_free(&c), tf_free(&want);
}

static void test_f16_and_bf16_match_the_in_order_double_loop(void **state)
{
    (void)state;
    /* (300 x 8192) x (8192 x 20) takes a's rows in three dgemm blocks */
    static const int64_t shapes[][3] = {{1, 8192, 1}, {7, 8192, 33}, {300, 8192, 20}, {64, 256, 8192},
                                        {5, 1, 9},    {33, 1000, 65}};
    kb_rng g;
    kb_rng_seed(&g, 11);
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int normal = 0; normal < 2; normal++) {
            same_as_naive(&g, KB_F16, normal, shapes[s][0], shapes[s][1], shapes[s][2]);
            same_as_naive(&g, KB_BF16, normal, shapes[s][0], shapes[s][1], shapes[s][2]);
        }
}

static void test_f32_is_sgemm(void **state)
{
    (void)state;
    kb_rng g;
    kb_rng_seed(&g, 3);
    kb_tensor a = tf_new(KB_F32, 2, (int64_t[]){17, 300}), b = tf_new(KB_F32, 2, (int64_t[]){300, 9}), c;
    kb_tensor_randn(&g, &a);
    kb_tensor_randn(&g, &b);
    char *err;
    assert_true(kb_tensor_matmul_shape(&a, &b, &c, &err));
    assert_true(kb_tensor_matmul(&a, &b, tf_alloc(&c), &err));
    float want[17 * 9];
    kb_compute_matmul_f32(a.data, b.data, want, 17, 300, 9);
    assert_memory_equal(c.data, want, sizeof want);
    tf_free(&a), tf_free(&b), tf_free(&c);
}

/* [2, 1, 2, 3] x [4, 3] broadcast, 1-D operands, integers exact. */
static void test_shapes_follow_torch(void **state)
{
    (void)state;
    kb_tensor a = tf_of(KB_I32, 3, (int64_t[]){2, 2, 3}, (double[]){1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
    kb_tensor b = tf_of(KB_I32, 2, (int64_t[]){3, 2}, (double[]){1, 0, 0, 1, 1, 1});
    kb_tensor v = tf_of(KB_I32, 1, (int64_t[]){3}, (double[]){1, 0, 1}), c;
    char *err;
    assert_true(kb_tensor_matmul_shape(&a, &b, &c, &err));
    assert_int_equal(c.ndim, 3);
    kb_tensor_matmul(&a, &b, tf_alloc(&c), &err);
    /* batch 1, row 1: [10 11 12] x b = [10 + 12, 11 + 12] */
    assert_true(kb_tensor_get(&c, 6) == 22 && kb_tensor_get(&c, 7) == 23);
    tf_free(&c);
    assert_true(kb_tensor_matmul_shape(&a, &v, &c, &err));
    assert_int_equal(c.ndim, 2); /* the column is dropped */
    kb_tensor_matmul(&a, &v, tf_alloc(&c), &err);
    assert_true(kb_tensor_get(&c, 3) == 22);
    tf_free(&c);
    assert_true(kb_tensor_matmul_shape(&v, &v, &c, &err));
    assert_int_equal(c.ndim, 0);
    kb_tensor_matmul(&v, &v, tf_alloc(&c), &err);
    assert_true(kb_tensor_get(&c, 0) == 2);
    tf_free(&c);
    kb_tensor e = tf_new(KB_I32, 2, (int64_t[]){2, 0}), f = tf_new(KB_I32, 2, (int64_t[]){0, 3});
    assert_true(kb_tensor_matmul_shape(&e, &f, &c, &err));
    tf_alloc(&c);
    memset(c.data, 0xff, kb_tensor_nbytes(&c));
    kb_tensor_matmul(&e, &f, &c, &err); /* empty sums are 0 */
    assert_true(kb_tensor_get(&c, 5) == 0);
    tf_free(&c);
    TF_FAILS(kb_tensor_matmul_shape(&a, &a, &c, &err), err, "matmul: shapes [2, 2, 3] and [2, 2, 3] cannot be multiplied (3 != 2)");
    kb_tensor h = tf_new(KB_F16, 2, (int64_t[]){3, 2});
    TF_FAILS(kb_tensor_matmul_shape(&a, &h, &c, &err), err, "matmul: dtypes i32 and f16 differ (convert one with :to())");
    kb_tensor g3 = tf_new(KB_I32, 3, (int64_t[]){3, 3, 2});
    TF_FAILS(kb_tensor_matmul_shape(&a, &g3, &c, &err), err,
             "matmul: the batch dimensions of shapes [2, 2, 3] and [3, 3, 2] cannot be broadcast together");
    tf_free(&a), tf_free(&b), tf_free(&v), tf_free(&e), tf_free(&f), tf_free(&h), tf_free(&g3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_and_bf16_match_the_in_order_double_loop),
        cmocka_unit_test(test_f32_is_sgemm),
        cmocka_unit_test(test_shapes_follow_torch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
