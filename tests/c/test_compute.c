/* Data-mode arithmetic and tensor views (src/tensor/engine.h, src/mem/view.h):
 * strided and broadcast reads, transposed views, matmul (f32 accumulation
 * along k in order, no fused multiply-add), element-wise ops, reductions
 * and softmax along an axis. */
#include "tensor/engine.h"
#include "mem/memstore.h"
#include "mem/view.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void test_views_read_row_major_transposed_and_broadcast(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    double vals[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    kb_tview v;
    kb_tview_init(&v, 7, 100, KB_F32, 2, shape);
    assert_int_equal(kb_tview_nbytes(&v), 24);
    assert_true(kb_tview_contiguous(&v));
    kb_tview_write(m, &v, vals);
    /* transposed: swap the last two shapes and strides */
    kb_tview t = v;
    t.shape[0] = 3, t.shape[1] = 2, t.stride[0] = 1, t.stride[1] = 3;
    assert_false(kb_tview_contiguous(&t));
    double out[6];
    kb_tview_read(m, &t, out);
    double want_t[6] = {1, 4, 2, 5, 3, 6};
    assert_memory_equal(out, want_t, sizeof out);
    /* a row [1, 3] broadcast to [2, 3] */
    int64_t row_shape[2] = {1, 3};
    kb_tview row, b;
    kb_tview_init(&row, 7, 100, KB_F32, 2, row_shape);
    int64_t big[2] = {2, 3};
    assert_true(kb_tview_broadcast(&row, 2, big, &b));
    kb_tview_read(m, &b, out);
    double want_b[6] = {1, 2, 3, 1, 2, 3};
    assert_memory_equal(out, want_b, sizeof out);
    int64_t bad[2] = {2, 4};
    assert_false(kb_tview_broadcast(&row, 2, bad, &b));
    kb_memstore_free(m);
}

static void test_broadcast_shapes_follow_numpy(void **state)
{
    (void)state;
    int64_t a[2] = {4, 1}, b[1] = {3}, out[8];
    int n;
    assert_true(kb_broadcast_shapes(2, a, 1, b, &n, out));
    assert_int_equal(n, 2);
    assert_int_equal(out[0], 4);
    assert_int_equal(out[1], 3);
    int64_t c[2] = {2, 3}, d[1] = {4};
    assert_false(kb_broadcast_shapes(2, c, 1, d, &n, out));
    char s[32];
    assert_string_equal(kb_shape_str(2, c, s, sizeof s), "[2, 3]");
}

static void test_matmul_accumulates_in_f32(void **state)
{
    (void)state;
    /* [2 x 3] x [3 x 2] */
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, c[4];
    kb_compute_matmul_f32(a, b, c, 2, 3, 2);
    float want[4] = {58, 64, 139, 154};
    assert_memory_equal(c, want, sizeof c);
    /* f32 accumulation in order: 1 + 2^-24 rounds to 1 (a tie, to even),
     * twice; the other order would give 1 + 2^-23 */
    float x[3] = {1.0f, 0x1p-24f, 0x1p-24f}, ones[3] = {1, 1, 1}, r;
    kb_compute_matmul_f32(x, ones, &r, 1, 3, 1);
    assert_true(r == 1.0f);
    float rev[3] = {0x1p-24f, 0x1p-24f, 1.0f};
    kb_compute_matmul_f32(rev, ones, &r, 1, 3, 1);
    assert_true(r == 1.0f + 0x1p-23f);
    /* no fused multiply-add: (1 + 2^-12)^2 rounds to 1 + 2^-11 before
     * -(1 + 2^-11) is added, giving 0; fused, 2^-24 would remain */
    float u[2] = {1.0f + 0x1p-12f, 1.0f}, v[2] = {1.0f + 0x1p-12f, -(1.0f + 0x1p-11f)};
    kb_compute_matmul_f32(u, v, &r, 1, 2, 1);
    assert_true(r == 0.0f);
    double da[2] = {3, 4}, db[2] = {5, 6}, dc;
    kb_compute_matmul_f64(da, db, &dc, 1, 2, 1);
    assert_true(dc == 39.0);
}

/* Every shape around the engine's 4 x 8 (f32) and 4 x 4 (f64) tiles, the
 * full tiles and the edges, against plain loops in the documented order,
 * bit for bit, on operands spread over 40 binades (where the order and
 * fusing show); and k = 0 gives +0. */
static void test_matmul_tiles_and_edges_follow_the_order_along_k(void **state)
{
    (void)state;
    enum { MAXM = 10, MAXN = 19, K = 37 };
    float a[MAXM * K], b[K * MAXN], c[MAXM * MAXN];
    double da[MAXM * K], db[K * MAXN], dc[MAXM * MAXN];
    uint64_t s = 12345;
    for (int i = 0; i < MAXM * K || i < K * MAXN; i++) {
        for (int t = 0; t < 2; t++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            float v = ldexpf(1.0f + (float)(s >> 41) * 0x1p-23f, (int)((s >> 20) % 40) - 20) * ((s >> 19) & 1 ? -1 : 1);
            if (t == 0 && i < MAXM * K)
                da[i] = a[i] = v;
            if (t == 1 && i < K * MAXN)
                db[i] = b[i] = v;
        }
    }
    for (int m = 0; m <= MAXM; m++)
        for (int n = 0; n <= MAXN; n++)
            for (int ki = 0; ki < 5; ki++) {
                int kk = (int[]){0, 1, 2, 3, K}[ki];
                memset(c, 0xff, sizeof c);
                memset(dc, 0xff, sizeof dc);
                kb_compute_matmul_f32(a, b, c, m, kk, n);
                kb_compute_matmul_f64(da, db, dc, m, kk, n);
                for (int i = 0; i < m; i++)
                    for (int j = 0; j < n; j++) {
                        float acc = 0.0f;
                        double dacc = 0.0;
                        for (int p = 0; p < kk; p++) {
                            float prod = a[i * kk + p] * b[p * n + j];
                            double dprod = da[i * kk + p] * db[p * n + j];
                            acc += prod;
                            dacc += dprod;
                        }
                        if (memcmp(&acc, &c[i * n + j], sizeof acc) != 0 || memcmp(&dacc, &dc[i * n + j], sizeof dacc))
                            fail_msg("%d x %d x %d: [%d, %d] is %a / %a, the loop gives %a / %a", m, kk, n, i, j,
                                     (double)c[i * n + j], dc[i * n + j], (double)acc, dacc);
                    }
            }
}

static void test_elementwise_ops(void **state)
{
    (void)state;
    double x[3] = {-1, 0, 2}, y[3], z[3] = {1, 1, -3}, w[3];
    kb_compute_unary(KB_OP_RELU, x, y, 3);
    assert_true(y[0] == 0 && y[1] == 0 && y[2] == 2);
    kb_compute_unary(KB_OP_SIGMOID, x, y, 3);
    assert_true(fabs(y[1] - 0.5) < 1e-15);
    kb_compute_binary(KB_OP_MAXIMUM, x, z, y, 3);
    assert_true(y[0] == 1 && y[1] == 1 && y[2] == 2);
    kb_compute_ternary(KB_OP_WHERE, x, z, x, w, 3); /* x != 0 ? z : x */
    assert_true(w[0] == 1 && w[1] == 0 && w[2] == -3);
    kb_compute_ternary(KB_OP_CLAMP, x, (double[]){-0.5, -0.5, -0.5}, (double[]){1, 1, 1}, w, 3);
    assert_true(w[0] == -0.5 && w[1] == 0 && w[2] == 1);
    double nan = NAN;
    kb_compute_binary(KB_OP_MINIMUM, &nan, x, y, 1);
    assert_true(isnan(y[0]));
}

static void test_axis_ops_reduce_and_softmax(void **state)
{
    (void)state;
    /* [2, 3] along axis 1: outer 2, len 3, inner 1 */
    double x[6] = {1, 2, 3, 4, 5, 6}, y[6];
    kb_compute_axis(KB_OP_SUM, x, y, 2, 3, 1);
    assert_true(y[0] == 6 && y[1] == 15);
    /* along axis 0: outer 1, len 2, inner 3 */
    kb_compute_axis(KB_OP_MAX, x, y, 1, 2, 3);
    assert_true(y[0] == 4 && y[1] == 5 && y[2] == 6);
    kb_compute_axis(KB_OP_SOFTMAX, x, y, 2, 3, 1);
    double e = exp(1.0), s = 1 + e + e * e;
    assert_true(fabs(y[0] - 1 / s) < 1e-15 && fabs(y[5] - e * e / s) < 1e-15);
    assert_true(fabs(y[3] + y[4] + y[5] - 1) < 1e-15);
}

static void test_op_table(void **state)
{
    (void)state;
    kb_mop op;
    assert_true(kb_mop_parse("softmax", &op));
    assert_int_equal(op, KB_OP_SOFTMAX);
    assert_true(kb_mop_info_of(op)->axis);
    assert_int_equal(kb_mop_info_of(KB_OP_FMA)->arity, 3);
    assert_false(kb_mop_parse("tanhh", &op));
    for (int i = 0; i < KB_NOPS; i++)
        assert_non_null(kb_mop_info_of((kb_mop)i)->name);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_views_read_row_major_transposed_and_broadcast),
        cmocka_unit_test(test_broadcast_shapes_follow_numpy),
        cmocka_unit_test(test_matmul_accumulates_in_f32),
        cmocka_unit_test(test_matmul_tiles_and_edges_follow_the_order_along_k),
        cmocka_unit_test(test_elementwise_ops),
        cmocka_unit_test(test_axis_ops_reduce_and_softmax),
        cmocka_unit_test(test_op_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
