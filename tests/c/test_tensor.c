/* Host tensors (src/tensor/tensor.h) without Lua: headers and their
 * errors, views, element-wise math with broadcasting and promotion,
 * comparisons, reductions, softmax, shape operations, copies and blocks.
 * The caller owns every tensor's bytes (tensor_fixture.h). */
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

static void test_init_sizes_a_header_and_refuses_bad_shapes(void **state)
{
    (void)state;
    kb_tensor t;
    char *err;
    assert_true(kb_tensor_init(&t, KB_F16, 2, (int64_t[]){3, 5}, &err));
    assert_int_equal(t.numel, 15);
    assert_int_equal(kb_tensor_nbytes(&t), 30);
    assert_null(t.data); /* the caller provides the bytes */
    assert_true(kb_tensor_init(&t, KB_F32, 0, NULL, &err));
    assert_int_equal(t.numel, 1);
    TF_FAILS(kb_tensor_init(&t, KB_F32, 2, (int64_t[]){2, -1}, &err), err, "tensor: negative size in shape [2, -1]");
    TF_FAILS(kb_tensor_init(&t, KB_F32, 2, (int64_t[]){INT64_C(1) << 30, INT64_C(1) << 20}, &err), err,
             "tensor: shape [1073741824, 1048576] of f32 is too large (more than 70368744177664 bytes)");
    TF_FAILS(kb_tensor_init(&t, KB_F32, 9, (int64_t[]){1, 1, 1, 1, 1, 1, 1, 1, 1}, &err), err,
             "tensor: 9 dimensions (at most 8)");
    /* empty, but its strides (2^124 elements) would overflow */
    TF_FAILS(kb_tensor_init(&t, KB_F32, 3, (int64_t[]){0, INT64_C(1) << 62, INT64_C(1) << 62}, &err), err,
             "tensor: shape [0, 4611686018427387904, 4611686018427387904] of f32 is too large");
    assert_true(kb_tensor_init(&t, KB_F32, 3, (int64_t[]){0, 1 << 20, 1 << 20}, &err));
    assert_int_equal(t.numel, 0);
}

/* Sizes whose product overflows int64 never match a tensor by wrapping
 * (2^32 * 2^32 * 2^2 wraps to 0 in 64 bits), and only -1 is inferred. */
static void test_reshape_products_are_checked(void **state)
{
    (void)state;
    kb_tensor t;
    char *err;
    assert_true(kb_tensor_init(&t, KB_F32, 1, (int64_t[]){0}, &err));
    TF_FAILS(kb_tensor_reshape(&t, 3, (int64_t[]){INT64_C(1) << 32, INT64_C(1) << 32, 4}, &err), err,
             "reshape: shape [4294967296, 4294967296, 4] is invalid for a tensor of 0 elements (shape [0])");
    assert_true(kb_tensor_init(&t, KB_F32, 2, (int64_t[]){2, 2}, &err));
    TF_FAILS(kb_tensor_reshape(&t, 2, (int64_t[]){-2, -2}, &err), err,
             "reshape: negative size in shape [-2, -2] (only -1, once, is inferred)");
}

static void test_offsets_views_and_reshape(void **state)
{
    (void)state;
    double v[6] = {0, 1, 2, 3, 4, 5};
    kb_tensor t = tf_of(KB_F32, 2, (int64_t[]){2, 3}, v), row;
    int64_t off;
    char *err;
    assert_true(kb_tensor_offset(&t, "index", 1, (int64_t[]){-1}, &off, &err));
    assert_int_equal(off, 3);
    kb_tensor_view(&t, off, 1, t.shape + 1, &row);
    kb_tensor_set(&row, 2, 42); /* writes through */
    assert_true(kb_tensor_get(&t, 5) == 42);
    TF_FAILS(kb_tensor_offset(&t, "get", 2, (int64_t[]){0, 3}, &off, &err), err,
             "get: index 3 is out of bounds for dimension 1 with size 3");
    TF_FAILS(kb_tensor_offset(&t, "index", 3, (int64_t[]){0, 0, 0}, &off, &err), err,
             "index: too many indices (3) for a 2-d tensor");
    int64_t shape[2] = {3, -1};
    assert_true(kb_tensor_reshape(&t, 2, shape, &err));
    assert_int_equal(shape[1], 2);
    TF_FAILS(kb_tensor_reshape(&t, 2, (int64_t[]){4, -1}, &err), err,
             "reshape: shape [4, -1] is invalid for a tensor of 6 elements (shape [2, 3])");
    int d;
    assert_true(kb_tensor_dim("sum", -1, 2, &d, &err));
    assert_int_equal(d, 1);
    TF_FAILS(kb_tensor_dim("sum", 2, 2, &d, &err), err, "sum: dim 2 is out of range for a 2-d tensor (expected -2 .. 1)");
    tf_free(&t);
}

/* [2, 3] + [3] (broadcast) + a number, and where(cond[2, 1], a, 0). */
static void test_elementwise_broadcasts_and_promotes(void **state)
{
    (void)state;
    kb_tensor m = tf_of(KB_I16, 2, (int64_t[]){2, 3}, (double[]){1, 2, 3, 4, 5, 6});
    kb_tensor r = tf_of(KB_I8, 1, (int64_t[]){3}, (double[]){10, 20, 30}), out;
    kb_operand args[3] = {{.t = &m}, {.t = &r}};
    char *err;
    assert_true(kb_tensor_ewise_shape(KB_OP_ADD, args, &out, &err));
    assert_int_equal(out.dtype, KB_I16);
    kb_tensor_ewise(KB_OP_ADD, args, tf_alloc(&out));
    assert_true(kb_tensor_get(&out, 0) == 11 && kb_tensor_get(&out, 5) == 36);
    tf_free(&out);
    /* a float number lifts integers to f32; an integer number does not */
    args[1] = (kb_operand){.v = 0.5};
    assert_true(kb_tensor_ewise_shape(KB_OP_MUL, args, &out, &err));
    assert_int_equal(out.dtype, KB_F32);
    args[1] = (kb_operand){.v = 2, .v_int = true};
    assert_true(kb_tensor_ewise_shape(KB_OP_MUL, args, &out, &err));
    assert_int_equal(out.dtype, KB_I16);
    assert_true(kb_tensor_ewise_shape(KB_OP_DIV, args, &out, &err));
    assert_int_equal(out.dtype, KB_F32); /* true division */
    /* unary: exp of integers gives f32, abs keeps them, neg of bool is refused */
    assert_true(kb_tensor_ewise_shape(KB_OP_EXP, args, &out, &err));
    assert_int_equal(out.dtype, KB_F32);
    assert_true(kb_tensor_ewise_shape(KB_OP_ABS, args, &out, &err));
    assert_int_equal(out.dtype, KB_I16);
    kb_tensor b = tf_new(KB_BOOL, 1, (int64_t[]){2});
    kb_operand nb = {.t = &b};
    TF_FAILS(kb_tensor_ewise_shape(KB_OP_NEG, &nb, &out, &err), err, "neg: negation of a bool tensor is not supported");
    /* where: the condition broadcasts and has no say in the dtype */
    kb_tensor c = tf_of(KB_BOOL, 2, (int64_t[]){2, 1}, (double[]){1, 0});
    kb_operand w[3] = {{.t = &c}, {.t = &r}, {.v = 0, .v_int = true}};
    assert_true(kb_tensor_ewise_shape(KB_OP_WHERE, w, &out, &err));
    assert_int_equal(out.dtype, KB_I8);
    assert_int_equal(out.ndim, 2);
    kb_tensor_ewise(KB_OP_WHERE, w, tf_alloc(&out));
    assert_true(kb_tensor_get(&out, 2) == 30 && kb_tensor_get(&out, 3) == 0);
    tf_free(&out);
    kb_operand bad[2] = {{.t = &m}, {.t = &b}};
    TF_FAILS(kb_tensor_ewise_shape(KB_OP_ADD, bad, &out, &err), err,
             "add: shapes [2, 3] and [2] cannot be broadcast together (3 vs 2 at dimension 1 of the result)");
    kb_operand none[2] = {{.v = 1}, {.v = 2}};
    TF_FAILS(kb_tensor_ewise_shape(KB_OP_ADD, none, &out, &err), err, "add: at least one argument must be a tensor");
    assert_int_equal(kb_tensor_promote(KB_I8, KB_U8), KB_I16);
    assert_int_equal(kb_tensor_promote(KB_F16, KB_BF16), KB_F32);
    assert_int_equal(kb_tensor_promote(KB_I32, KB_F16), KB_F16);
    tf_free(&m), tf_free(&r), tf_free(&b), tf_free(&c);
}

static void test_comparisons(void **state)
{
    (void)state;
    kb_tensor a = tf_of(KB_F32, 2, (int64_t[]){2, 2}, (double[]){1, 2, 3, NAN});
    kb_tensor b = tf_of(KB_F16, 1, (int64_t[]){2}, (double[]){1, 2}), out;
    kb_close c = {.rtol = 1e-5, .atol = 1e-8};
    bool all;
    char *err;
    assert_true(kb_tensor_compare_shape("isclose", &a, &b, &out, &err));
    kb_tensor_isclose(&c, &a, &b, tf_alloc(&out));
    assert_true(kb_tensor_get(&out, 0) == 1 && kb_tensor_get(&out, 2) == 0);
    tf_free(&out);
    assert_true(kb_tensor_allclose(&c, &a, &a, &all, &err));
    assert_false(all); /* NaN */
    c.equal_nan = true;
    assert_true(kb_tensor_allclose(&c, &a, &a, &all, &err));
    assert_true(all);
    assert_false(kb_tensor_equal(&a, &b));
    kb_tensor d = tf_of(KB_I32, 1, (int64_t[]){2}, (double[]){1, 2});
    assert_true(kb_tensor_equal(&b, &d)); /* dtypes may differ */
    kb_tensor e = tf_new(KB_F32, 1, (int64_t[]){3});
    TF_FAILS(kb_tensor_allclose(&c, &a, &e, &all, &err), err, "allclose: shapes [2, 2] and [3] cannot be broadcast");
    tf_free(&a), tf_free(&b), tf_free(&d), tf_free(&e);
}

static void test_reductions_and_softmax(void **state)
{
    (void)state;
    kb_tensor t = tf_of(KB_I16, 2, (int64_t[]){2, 3}, (double[]){1, 5, 3, 4, 2, 6}), v, i;
    double x;
    kb_dtype dt;
    char *err;
    assert_true(kb_tensor_reduce_all(KB_OP_SUM, &t, &x, &dt, &err));
    assert_true(x == 21 && dt == KB_I32);
    TF_FAILS(kb_tensor_reduce_all(KB_OP_MEAN, &t, &x, &dt, &err), err,
             "mean: needs a floating-point tensor, got i16 (convert with :float())");
    assert_true(kb_tensor_reduce_shape(KB_OP_MAX, &t, 1, true, &v, &i, &err));
    assert_int_equal(v.ndim, 2);
    assert_int_equal(v.shape[1], 1);
    assert_int_equal(i.dtype, KB_I32);
    kb_tensor_reduce(KB_OP_MAX, &t, 1, tf_alloc(&v), tf_alloc(&i));
    assert_true(kb_tensor_get(&v, 0) == 5 && kb_tensor_get(&v, 1) == 6);
    assert_true(kb_tensor_get(&i, 0) == 1 && kb_tensor_get(&i, 1) == 2);
    tf_free(&v), tf_free(&i);
    kb_tensor e = tf_new(KB_F32, 2, (int64_t[]){2, 0});
    TF_FAILS(kb_tensor_reduce_shape(KB_OP_MIN, &e, 1, false, &v, &i, &err), err,
             "min: cannot reduce over a dimension of 0 elements (shape [2, 0])");
    kb_tensor s;
    kb_tensor_softmax_shape(&t, &s);
    assert_int_equal(s.dtype, KB_F32);
    kb_tensor_softmax(&t, 0, tf_alloc(&s));
    assert_true(fabs(kb_tensor_get(&s, 0) - 1 / (1 + exp(3.0))) < 1e-7); /* exp(1-4) / (exp(1-4) + 1) */
    assert_true(fabs(kb_tensor_get(&s, 0) + kb_tensor_get(&s, 3) - 1) < 1e-7);
    tf_free(&s), tf_free(&t), tf_free(&e);
}

static void test_narrow_transpose_and_cat(void **state)
{
    (void)state;
    double v[6] = {0, 1, 2, 3, 4, 5};
    kb_tensor t = tf_of(KB_F16, 2, (int64_t[]){2, 3}, v), n, tr, c;
    char *err;
    assert_true(kb_tensor_narrow_shape(&t, 1, -2, 2, &n, &err));
    kb_tensor_narrow(&t, 1, -2, tf_alloc(&n));
    assert_true(kb_tensor_get(&n, 0) == 1 && kb_tensor_get(&n, 3) == 5);
    TF_FAILS(kb_tensor_narrow_shape(&t, 0, 1, 2, &n, &err), err,
             "narrow: start 1 and length 2 do not fit dimension 0 of size 2 (shape [2, 3])");
    kb_tensor_transpose_shape(&t, 0, 1, &tr);
    kb_tensor_transpose(&t, 0, 1, tf_alloc(&tr));
    assert_int_equal(tr.shape[0], 3);
    assert_true(kb_tensor_get(&tr, 1) == 3 && kb_tensor_get(&tr, 4) == 2);
    kb_tensor x = tf_of(KB_I32, 2, (int64_t[]){2, 1}, (double[]){7, 8});
    const kb_tensor *list[3] = {&t, &x, &n};
    int d;
    assert_true(kb_tensor_cat_shape(list, 3, -1, &c, &d, &err));
    assert_int_equal(d, 1);
    assert_int_equal(c.dtype, KB_F16);
    assert_int_equal(c.shape[1], 6);
    kb_tensor_cat(list, 3, d, tf_alloc(&c));
    assert_true(kb_tensor_get(&c, 3) == 7 && kb_tensor_get(&c, 11) == 5);
    const kb_tensor *bad[2] = {&t, &tr};
    TF_FAILS(kb_tensor_cat_shape(bad, 2, 0, &c, &d, &err), err,
             "cat: list[1] has shape [2, 3] and list[2] has shape [3, 2]; they may differ only in dimension 0");
    tf_free(&t), tf_free(&n), tf_free(&tr), tf_free(&c), tf_free(&x);
}

static void test_copy_broadcasts_and_blocks_move_bytes(void **state)
{
    (void)state;
    kb_tensor dst = tf_new(KB_F32, 2, (int64_t[]){3, 2});
    kb_tensor row = tf_of(KB_I8, 1, (int64_t[]){2}, (double[]){-1, 9});
    char *err;
    assert_true(kb_tensor_copy(&dst, &row, "copy_", &err));
    assert_true(kb_tensor_get(&dst, 4) == -1 && kb_tensor_get(&dst, 5) == 9);
    kb_tensor big = tf_new(KB_F32, 1, (int64_t[]){3});
    TF_FAILS(kb_tensor_copy(&row, &big, "index", &err), err,
             "index: a tensor of shape [3] cannot be copied into one of shape [2]");
    float blk[2];
    assert_true(kb_tensor_block_check(&dst, "block", (int64_t[]){1, 2, 1, 1}, &err));
    kb_tensor_block_read(&dst, (int64_t[]){1, 2, 1, 1}, blk);
    assert_true(blk[0] == 9 && blk[1] == 9);
    TF_FAILS(kb_tensor_block_check(&dst, "block", (int64_t[]){2, 2, 0, 1}, &err), err,
             "block: block rows 2+2, cols 0+1 outside the 3 x 2 view of [3, 2]");
    /* start + length would overflow int64: still outside, not wrapped around to inside */
    TF_FAILS(kb_tensor_block_check(&dst, "block", (int64_t[]){1, INT64_MAX, 0, 1}, &err), err,
             "block: block rows 1+9223372036854775807, cols 0+1 outside");
    TF_FAILS(kb_tensor_block_check(&dst, "block", (int64_t[]){0, 1, INT64_MAX, 1}, &err), err, "outside");
    TF_FAILS(kb_tensor_block_write(&dst, (int64_t[]){0, 1, 0, 1}, blk, 3, &err), err,
             "set_block: 3 bytes for a 1 x 1 block of f32");
    kb_tensor_fill(&dst, 0.5);
    assert_true(kb_tensor_get(&dst, 5) == 0.5);
    assert_true(kb_tensor_hash(&dst) != kb_tensor_hash(&big));
    tf_free(&dst), tf_free(&row), tf_free(&big);
}

static void test_arange_and_conversions(void **state)
{
    (void)state;
    int64_t n;
    char *err;
    assert_true(kb_tensor_arange_numel(5, 0, -2, &n, &err));
    assert_int_equal(n, 3); /* ceil((0 - 5) / -2) */
    TF_FAILS(kb_tensor_arange_numel(0, 3, -1, &n, &err), err,
             "arange: the bounds 0.0 .. 3.0 are inconsistent with the sign of step -1.0");
    TF_FAILS(kb_tensor_arange_numel(0, 3, 0, &n, &err), err, "arange: step must be nonzero");
    kb_tensor a = tf_new(KB_F32, 1, (int64_t[]){4});
    kb_tensor_arange(&a, 1, 0.25);
    assert_true(kb_tensor_get(&a, 3) == 1.75);
    kb_tensor u = tf_new(KB_U8, 1, (int64_t[]){4});
    kb_tensor_fill(&a, 300.7);
    kb_tensor_convert(&a, &u);
    assert_true(kb_tensor_get(&u, 0) == 44); /* truncates, wraps modulo 256 */
    double item;
    TF_FAILS(kb_tensor_item(&a, &item, &err), err, "item: a tensor of shape [4] has 4 elements, not 1");
    TF_FAILS(kb_tensor_check_bytes(&a, 15, &err), err, "from_bytes: 15 bytes given, a f32 tensor of shape [4] holds 16");
    tf_free(&a), tf_free(&u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_sizes_a_header_and_refuses_bad_shapes),
        cmocka_unit_test(test_offsets_views_and_reshape),
        cmocka_unit_test(test_reshape_products_are_checked),
        cmocka_unit_test(test_elementwise_broadcasts_and_promotes),
        cmocka_unit_test(test_comparisons),
        cmocka_unit_test(test_reductions_and_softmax),
        cmocka_unit_test(test_narrow_transpose_and_cat),
        cmocka_unit_test(test_copy_broadcasts_and_blocks_move_bytes),
        cmocka_unit_test(test_arange_and_conversions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
