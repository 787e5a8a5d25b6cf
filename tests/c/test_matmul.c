/* matmul of host tensors (src/tensor/matmul.c): torch's shape rules; f32
 * as the device's GEMM, f32 accumulation along k in order; f16/bf16 in
 * double along k in order, rounded once. Both are pinned bit for bit
 * against plain loops in that order, on inputs where the order of the
 * additions shows, and f32 also within f32 accumulation's error bound of
 * exact sums (docs/decisions.md, "The device's arithmetic"). */
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

/* ==== reference: in-order double sums, with torch's batch broadcasting ==== */

/* Per output element: fwd adds the products p = 0 .. k-1 in order from 0
 * in double, rev adds them from p = k-1 down, mag is the sum of their
 * magnitudes; f32 adds them in order from 0 in f32, each product rounded
 * to f32 first (the engine's f32 GEMM). */
typedef struct ref_sums {
    double *fwd, *rev, *mag;
    float *f32;
} ref_sums;

/* The matrix of t (>= 2-D) that output batch bi reads: out's batch index
 * unravelled, t's size-1 and missing batch dimensions repeated. */
static int64_t matrix_of(const kb_tensor *t, const kb_tensor *out, int64_t bi)
{
    int nbo = out->ndim - 2, nbt = t->ndim - 2;
    int64_t off = 0, stride = 1;
    for (int d = nbo - 1; d >= 0; d--) {
        int64_t i = bi % out->shape[d];
        bi /= out->shape[d];
        int dt = d - (nbo - nbt);
        if (dt < 0)
            continue;
        if (t->shape[dt] != 1)
            off += i * stride;
        stride *= t->shape[dt];
    }
    return off;
}

/* a [..., m, k] x b [..., k, n] into out's shape [..., m, n]. */
static ref_sums reference(const kb_tensor *a, const kb_tensor *b, const kb_tensor *out)
{
    int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1], n = b->shape[b->ndim - 1];
    ref_sums r = {calloc((size_t)out->numel, sizeof(double)), calloc((size_t)out->numel, sizeof(double)),
                  calloc((size_t)out->numel, sizeof(double)), calloc((size_t)out->numel, sizeof(float))};
    double *ad = malloc((size_t)(k + 1) * sizeof *ad), *bd = malloc((size_t)(k * n + 1) * sizeof *bd);
    for (int64_t bi = 0; bi < out->numel / (m * n); bi++) {
        int64_t ma = matrix_of(a, out, bi) * m * k, mb = matrix_of(b, out, bi) * k * n;
        for (int64_t i = 0; i < k * n; i++)
            bd[i] = kb_tensor_get(b, mb + i);
        for (int64_t i = 0; i < m; i++) {
            for (int64_t p = 0; p < k; p++)
                ad[p] = kb_tensor_get(a, ma + i * k + p);
            double *fwd = r.fwd + (bi * m + i) * n, *rev = r.rev + (bi * m + i) * n, *mag = r.mag + (bi * m + i) * n;
            float *f32 = r.f32 + (bi * m + i) * n;
            for (int64_t p = 0; p < k; p++)
                for (int64_t j = 0; j < n; j++) {
                    fwd[j] += ad[p] * bd[p * n + j];
                    mag[j] += fabs(ad[p] * bd[p * n + j]);
                    float prod = (float)ad[p] * (float)bd[p * n + j];
                    f32[j] += prod;
                }
            for (int64_t p = k - 1; p >= 0; p--)
                for (int64_t j = 0; j < n; j++)
                    rev[j] += ad[p] * bd[p * n + j];
        }
    }
    free(ad);
    free(bd);
    return r;
}

static void ref_free(ref_sums *r)
{
    free(r->fwd);
    free(r->rev);
    free(r->mag);
    free(r->f32);
}

static kb_tensor matmul_of(const kb_tensor *a, const kb_tensor *b)
{
    kb_tensor c;
    char *err = NULL;
    assert_true(kb_tensor_matmul_shape(a, b, &c, &err));
    assert_true(kb_tensor_matmul(a, b, tf_alloc(&c), &err));
    return c;
}

/* randn values times 2^e, e uniform in [lo, hi] per element: products
 * spread over many binades, so partial sums round in double and the order
 * of the additions changes them (a plain randn or rand tensor gives
 * products whose sums are exact in double in any order). */
static kb_tensor spread(kb_rng *g, kb_dtype dt, int ndim, const int64_t *shape, int lo, int hi)
{
    kb_tensor t = tf_new(dt, ndim, shape);
    char *err = NULL;
    assert_true(kb_tensor_randn(g, &t, &err));
    for (int64_t i = 0; i < t.numel; i++)
        kb_tensor_set(&t, i, ldexp(kb_tensor_get(&t, i), lo + (int)(kb_rng_next(g) % (uint64_t)(hi - lo + 1))));
    return t;
}

/* ==== f16 and bf16: double accumulation in order ==== */

/* Counts the elements where a 16-bit result of f32 accumulation (the f32
 * GEMM of the same operands) differs from want: how much rounding the
 * comparison with the in-order loop can see. */
static int64_t f32_accumulation_differs(const kb_tensor *a, const kb_tensor *b, const kb_tensor *want)
{
    int64_t m = a->shape[0], k = a->shape[1], n = b->shape[1], count = 0;
    float *fa = malloc((size_t)(m * k) * sizeof *fa), *fb = malloc((size_t)(k * n) * sizeof *fb),
          *fc = malloc((size_t)(m * n) * sizeof *fc);
    for (int64_t i = 0; i < m * k; i++)
        fa[i] = (float)kb_tensor_get(a, i);
    for (int64_t i = 0; i < k * n; i++)
        fb[i] = (float)kb_tensor_get(b, i);
    kb_compute_matmul_f32(fa, fb, fc, m, k, n);
    kb_tensor c = tf_new(want->dtype, 2, want->shape);
    for (int64_t i = 0; i < m * n; i++) {
        kb_tensor_set(&c, i, fc[i]);
        count += kb_tensor_get(&c, i) != kb_tensor_get(want, i);
    }
    free(fa), free(fb), free(fc), tf_free(&c);
    return count;
}

/* The double product adds along k in order, as the loop does: the bytes
 * are the loop's, on inputs where the order of the additions shows in
 * double (fwd != rev somewhere in each shape), and an f32 accumulation,
 * 2^29 times coarser, would not pass. Rounding to 16 bits hides most
 * changes of order in double; test_compute.c pins the double product's
 * order bit for bit. Shapes up to K = 8192; (300 x 8192) x (8192 x 20)
 * takes a's rows in three blocks of scratch. */
static void test_f16_and_bf16_match_the_in_order_loop_where_order_shows_in_double(void **state)
{
    (void)state;
    static const int64_t shapes[][3] = {{1, 8192, 1}, {7, 8192, 33}, {300, 8192, 20}, {64, 256, 8192},
                                        {5, 300, 9},  {33, 1000, 65}};
    static const struct {
        kb_dtype dt;
        int lo, hi; /* binades of the operands' scale factors: results stay finite */
    } types[] = {{KB_F16, -20, 3}, {KB_BF16, -24, 24}};
    kb_rng g;
    kb_rng_seed(&g, 11);
    int64_t f32_differs = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t ty = 0; ty < 2; ty++) {
            int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
            kb_dtype dt = types[ty].dt;
            kb_tensor a = spread(&g, dt, 2, (int64_t[]){m, k}, types[ty].lo, types[ty].hi);
            kb_tensor b = spread(&g, dt, 2, (int64_t[]){k, n}, types[ty].lo, types[ty].hi);
            kb_tensor c = matmul_of(&a, &b), want = tf_new(dt, 2, c.shape);
            ref_sums r = reference(&a, &b, &c);
            int64_t order_shows = 0;
            for (int64_t i = 0; i < c.numel; i++)
                order_shows += r.fwd[i] != r.rev[i];
            kb_compute_store_run(dt, want.data, 1, r.fwd, c.numel);
            if (order_shows == 0)
                fail_msg("%s [%lld x %lld] x [%lld x %lld]: the inputs do not show the order of the additions",
                         kb_dtype_name(dt), (long long)m, (long long)k, (long long)k, (long long)n);
            if (memcmp(c.data, want.data, kb_tensor_nbytes(&c)) != 0)
                fail_msg("%s [%lld x %lld] x [%lld x %lld]: matmul differs from the in-order loop", kb_dtype_name(dt),
                         (long long)m, (long long)k, (long long)k, (long long)n);
            f32_differs += f32_accumulation_differs(&a, &b, &want);
            ref_free(&r);
            tf_free(&a), tf_free(&b), tf_free(&c), tf_free(&want);
        }
    assert_true(f32_differs > 0);
}

/* Batches broadcast both ways: a [2, 3, 5, 300] x b [2, 1, 300, 7], so
 * b's matrix serves three batches in a row (widened once) and a's six. */
static void test_f16_batches_broadcast_like_the_in_order_loop(void **state)
{
    (void)state;
    kb_rng g;
    kb_rng_seed(&g, 12);
    kb_tensor a = spread(&g, KB_F16, 4, (int64_t[]){2, 3, 5, 300}, -20, 3);
    kb_tensor b = spread(&g, KB_F16, 4, (int64_t[]){2, 1, 300, 7}, -20, 3);
    kb_tensor c = matmul_of(&a, &b), want = tf_new(KB_F16, 4, c.shape);
    assert_int_equal(c.ndim, 4);
    assert_true(c.shape[0] == 2 && c.shape[1] == 3 && c.shape[2] == 5 && c.shape[3] == 7);
    ref_sums r = reference(&a, &b, &c);
    kb_compute_store_run(KB_F16, want.data, 1, r.fwd, c.numel);
    assert_memory_equal(c.data, want.data, kb_tensor_nbytes(&c));
    ref_free(&r);
    tf_free(&a), tf_free(&b), tf_free(&c), tf_free(&want);
}

/* Catastrophic cancellation, bf16, K = 4096: a = [2^60, 0, ..., 0, -2^60, 1]
 * and b = [2^60, 0, ..., 0, 2^60, 1]. The exact sum is 2^120 - 2^120 + 1 =
 * 1, which the order along k finds; an order that added the 1 to one of
 * the 2^120 terms first would lose it (2^120 exceeds 2^53 times 1) and
 * give 0, as OpenBLAS's dgemm did when host matmul used it. */
static void test_bf16_under_cancellation_follows_the_order_along_k(void **state)
{
    (void)state;
    enum { K = 4096 };
    kb_tensor a = tf_new(KB_BF16, 2, (int64_t[]){1, K}), b = tf_new(KB_BF16, 2, (int64_t[]){K, 1});
    double big = ldexp(1, 60);
    kb_tensor_set(&a, 0, big), kb_tensor_set(&b, 0, big);
    kb_tensor_set(&a, K - 2, -big), kb_tensor_set(&b, K - 2, big);
    kb_tensor_set(&a, K - 1, 1), kb_tensor_set(&b, K - 1, 1);
    kb_tensor c = matmul_of(&a, &b);
    ref_sums r = reference(&a, &b, &c);
    assert_true(r.fwd[0] == 1);
    assert_true(kb_tensor_get(&c, 0) == 1);
    ref_free(&r);
    tf_free(&a), tf_free(&b), tf_free(&c);
}

/* ==== f32: f32 accumulation in order ==== */

/* Each output is the in-order f32 loop's, bit for bit, and within the
 * error bound of the exact sum: an f32 accumulation of k products is
 * within about (k + 1) * 2^-24 times the sum of their magnitudes of it
 * (one rounding per product and per addition), the in-order double sum
 * within k * 2^-53 times it (products of f32 values are exact in double).
 * A wrong operand matrix or batch offset is off by whole products. */
static void f32_in_order_and_within_bound(const kb_tensor *a, const kb_tensor *b)
{
    kb_tensor c = matmul_of(a, b);
    ref_sums r = reference(a, b, &c);
    int64_t k = a->shape[a->ndim - 1];
    double rel = (double)(k + 1) * 0x1p-24 + (double)k * 0x1p-53;
    for (int64_t i = 0; i < c.numel; i++) {
        double got = kb_tensor_get(&c, i), err = fabs(got - r.fwd[i]), bound = rel * r.mag[i];
        if (!(err <= bound))
            fail_msg("element %lld: |%.9g - %.9g| > %.3g", (long long)i, got, r.fwd[i], bound);
        if (memcmp(&r.f32[i], (const float *)c.data + i, sizeof(float)) != 0)
            fail_msg("element %lld: %.9g, the in-order f32 loop gives %.9g", (long long)i, got, (double)r.f32[i]);
    }
    ref_free(&r);
    tf_free(&c);
}

/* Plain (row and column counts off the engine's 4 x 8 tiles, so edges
 * and full tiles both run), on operands spread over 40 binades where the
 * order of f32 additions shows, and batched with broadcasting on both
 * sides: a [2, 1, 5, 300] x b [3, 300, 7] is [2, 3, 5, 7], a's matrices
 * each used three times in turn, b's in turn twice. */
static void test_f32_is_the_in_order_f32_loop(void **state)
{
    (void)state;
    kb_rng g;
    kb_rng_seed(&g, 3);
    char *err = NULL;
    kb_tensor a = tf_new(KB_F32, 2, (int64_t[]){17, 300}), b = tf_new(KB_F32, 2, (int64_t[]){300, 19});
    assert_true(kb_tensor_randn(&g, &a, &err) && kb_tensor_randn(&g, &b, &err));
    f32_in_order_and_within_bound(&a, &b);
    tf_free(&a), tf_free(&b);
    a = spread(&g, KB_F32, 2, (int64_t[]){12, 1000}, -20, 20);
    b = spread(&g, KB_F32, 2, (int64_t[]){1000, 40}, -20, 20);
    f32_in_order_and_within_bound(&a, &b);
    tf_free(&a), tf_free(&b);
    a = tf_new(KB_F32, 4, (int64_t[]){2, 1, 5, 300});
    b = tf_new(KB_F32, 3, (int64_t[]){3, 300, 7});
    assert_true(kb_tensor_randn(&g, &a, &err) && kb_tensor_randn(&g, &b, &err));
    f32_in_order_and_within_bound(&a, &b);
    tf_free(&a), tf_free(&b);
}

/* ==== shapes ==== */

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
    kb_tensor ef = tf_new(KB_F32, 2, (int64_t[]){2, 0}), ff = tf_new(KB_F32, 2, (int64_t[]){0, 3});
    assert_true(kb_tensor_matmul_shape(&ef, &ff, &c, &err));
    tf_alloc(&c);
    memset(c.data, 0xff, kb_tensor_nbytes(&c));
    kb_tensor_matmul(&ef, &ff, &c, &err); /* f32 too */
    assert_true(kb_tensor_get(&c, 0) == 0 && kb_tensor_get(&c, 5) == 0);
    tf_free(&c);
    TF_FAILS(kb_tensor_matmul_shape(&a, &a, &c, &err), err, "matmul: shapes [2, 2, 3] and [2, 2, 3] cannot be multiplied (3 != 2)");
    kb_tensor h = tf_new(KB_F16, 2, (int64_t[]){3, 2});
    TF_FAILS(kb_tensor_matmul_shape(&a, &h, &c, &err), err, "matmul: dtypes i32 and f16 differ (convert one with :to())");
    kb_tensor g3 = tf_new(KB_I32, 3, (int64_t[]){3, 3, 2});
    TF_FAILS(kb_tensor_matmul_shape(&a, &g3, &c, &err), err,
             "matmul: the batch dimensions of shapes [2, 2, 3] and [3, 3, 2] cannot be broadcast together");
    tf_free(&a), tf_free(&b), tf_free(&v), tf_free(&e), tf_free(&f), tf_free(&ef), tf_free(&ff), tf_free(&h),
        tf_free(&g3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_and_bf16_match_the_in_order_loop_where_order_shows_in_double),
        cmocka_unit_test(test_f16_batches_broadcast_like_the_in_order_loop),
        cmocka_unit_test(test_bf16_under_cancellation_follows_the_order_along_k),
        cmocka_unit_test(test_f32_is_the_in_order_f32_loop),
        cmocka_unit_test(test_shapes_follow_torch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
