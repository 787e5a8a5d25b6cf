/* Building commands and composites (src/comp/pe/ops.c) from plain C
 * values, with no Lua and no simulated time: result shapes and dtypes,
 * broadcasting, the axis rules of reductions and softmax, composite plans
 * (M, K, N, tile sizes, epilogue operands) and the error texts the tl
 * calls raise. A plan leaves the tile sizes it is not given at 0:
 * PE_SCHEDULER's are taken when the composite is submitted (test_kernel.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "check.h"
#include "comp/pe/engines.h" /* kb_pe_operands: the compute commands' fields */

/* A contiguous TCM view of the given shape at offset 0. */
static kb_tview view(kb_dtype dt, int nd, const int64_t *shape)
{
    kb_tview v;
    kb_tview_init(&v, 7, 0, dt, nd, shape);
    return v;
}

#define SHAPE(...) ((const int64_t[]){__VA_ARGS__})
#define VIEW(dt, ...) view(dt, (int)(sizeof SHAPE(__VA_ARGS__) / sizeof(int64_t)), SHAPE(__VA_ARGS__))

static kb_pe_operand tensor(kb_tview v) { return (kb_pe_operand){.v = v}; }
static kb_pe_operand imm(double x) { return (kb_pe_operand){.is_imm = true, .imm = x}; }

static void assert_shape(const kb_tview *v, int nd, const int64_t *shape)
{
    assert_int_equal(v->ndim, nd);
    for (int d = 0; d < nd; d++)
        assert_int_equal(v->shape[d], shape[d]);
}

/* The error of a failed call (in *err once the call has run): checked,
 * then freed. */
static void assert_err(bool ok, char **err, const char *want)
{
    assert_false(ok);
    assert_non_null(*err);
    assert_string_equal(*err, want);
    free(*err);
    *err = NULL;
}

/* ---- simple commands ---- */

static void test_a_load_is_an_unplaced_result_of_its_shape_and_dtype(void **state)
{
    (void)state;
    kb_pe_op op = {0};
    kb_pe_op_load(&op, 0x1000, KB_BF16, 2, SHAPE(4, 8));
    assert_string_equal(op.cmd->name, "load");
    assert_int_equal(op.out.dtype, KB_BF16);
    assert_shape(&op.out, 2, SHAPE(4, 8));
}

static void test_a_store_moves_contiguous_bytes_only(void **state)
{
    (void)state;
    kb_pe_op op = {0};
    kb_tview v = VIEW(KB_F16, 4, 8), t;
    char *err = NULL;
    assert_true(kb_pe_op_store(&op, 64, &v, &err));
    assert_string_equal(op.cmd->name, "store");
    assert_true(kb_pe_trans(&v, &t, &err));
    assert_err(kb_pe_op_store(&op, 64, &t, &err), &err,
               "tl.store: the handle is a transposed view (tl.trans); a store moves contiguous bytes: compute a "
               "contiguous result first");
}

static void test_cycles_are_counted_from_zero(void **state)
{
    (void)state;
    kb_pe_op op = {0};
    char *err = NULL;
    assert_true(kb_pe_op_cycles(&op, 0, &err)); /* tl.composite's dispatch alone */
    assert_string_equal(op.cmd->name, "cycles");
    assert_err(kb_pe_op_cycles(&op, -3, &err), &err, "tl.cycles: the count must be >= 0 (got -3)");
}

static void test_trans_swaps_the_last_two_dimensions_and_their_strides(void **state)
{
    (void)state;
    kb_tview v = VIEW(KB_F32, 2, 3, 4), t;
    char *err = NULL;
    assert_true(kb_pe_trans(&v, &t, &err));
    assert_shape(&t, 3, SHAPE(2, 4, 3));
    assert_int_equal(t.stride[1], 1);
    assert_int_equal(t.stride[2], 4);
    assert_int_equal(t.offset, v.offset);
    kb_tview one = VIEW(KB_F32, 5);
    assert_err(kb_pe_trans(&one, &t, &err), &err, "tl.trans: needs at least 2 dimensions (got 1)");
}

/* ---- dot ---- */

static void test_dot_is_m_by_n_in_the_operands_dtype_unless_asked(void **state)
{
    (void)state;
    kb_pe_op op = {0};
    kb_tview a = VIEW(KB_F16, 8, 16), b = VIEW(KB_F16, 16, 4);
    char *err = NULL;
    assert_true(kb_pe_op_dot(&op, &a, &b, NULL, &err));
    assert_string_equal(op.cmd->name, "dot");
    assert_int_equal(KB_PE_ARGS(&op, kb_pe_operands)->nin, 2);
    assert_shape(&op.out, 2, SHAPE(8, 4));
    assert_int_equal(op.out.dtype, KB_F16);
    kb_dtype f32 = KB_F32;
    assert_true(kb_pe_op_dot(&op, &a, &b, &f32, &err));
    assert_int_equal(op.out.dtype, KB_F32);
}

static void test_dot_names_both_shapes_or_dtypes_when_it_cannot_multiply(void **state)
{
    (void)state;
    kb_pe_op op = {0};
    kb_tview a = VIEW(KB_F16, 2, 3), b = VIEW(KB_F16, 4, 5), v = VIEW(KB_F16, 3), c = VIEW(KB_BF16, 3, 5);
    char *err = NULL;
    assert_err(kb_pe_op_dot(&op, &a, &b, NULL, &err), &err,
               "tl.dot: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)");
    assert_err(kb_pe_op_dot(&op, &a, &v, NULL, &err), &err,
               "tl.dot: operands must be 2-D (got shapes [2, 3] and [3])");
    assert_err(kb_pe_op_dot(&op, &a, &c, NULL, &err), &err, "tl.dot: operand dtypes differ (f16 and bf16)");
}

/* ---- math ---- */

/* The result dtype and shape of mop over in (no axis); fails the test on an error. */
static kb_pe_op math(kb_mop mop, int nin, const kb_pe_operand *in)
{
    kb_pe_op op = {0};
    char *err = NULL;
    if (!kb_pe_op_math(&op, mop, nin, in, NULL, &err))
        fail_msg("%s", err);
    return op;
}

static void test_math_broadcasts_tensors_and_immediates_to_the_result(void **state)
{
    (void)state;
    kb_pe_operand in[3] = {tensor(VIEW(KB_F16, 2, 3)), tensor(VIEW(KB_F16, 3))};
    kb_pe_op op = math(KB_OP_ADD, 2, in);
    assert_string_equal(op.cmd->name, "math");
    assert_int_equal(KB_PE_ARGS(&op, kb_pe_operands)->mop, KB_OP_ADD);
    assert_shape(&op.out, 2, SHAPE(2, 3));
    in[0] = tensor(VIEW(KB_F32, 4, 1)), in[1] = imm(2), in[2] = tensor(VIEW(KB_F32, 1, 5));
    op = math(KB_OP_FMA, 3, in);
    assert_shape(&op.out, 2, SHAPE(4, 5));
    assert_true(KB_PE_ARGS(&op, kb_pe_operands)->in[1].is_imm);
    assert_true(KB_PE_ARGS(&op, kb_pe_operands)->in[1].imm == 2);
}

static void test_math_result_dtype_is_the_tensors_common_one(void **state)
{
    (void)state;
    assert_int_equal(kb_pe_common_dtype(KB_BF16, KB_BF16), KB_BF16);
    assert_int_equal(kb_pe_common_dtype(KB_F16, KB_BF16), KB_F32); /* mixed floats */
    assert_int_equal(kb_pe_common_dtype(KB_I8, KB_I32), KB_I32);   /* mixed integers */
    assert_int_equal(kb_pe_common_dtype(KB_U8, KB_F16), KB_F32);   /* a float and an integer */
    kb_pe_operand in[3] = {tensor(VIEW(KB_F16, 4)), imm(1.5)};
    assert_int_equal(math(KB_OP_MUL, 2, in).out.dtype, KB_F16); /* immediates do not count */
    in[0] = tensor(VIEW(KB_I32, 4));
    assert_int_equal(math(KB_OP_EXP, 1, in).out.dtype, KB_I32); /* a float op on integers stays integer */
}

static void test_where_takes_its_dtype_from_the_values_not_the_condition(void **state)
{
    (void)state;
    kb_pe_operand in[3] = {tensor(VIEW(KB_BOOL, 4)), tensor(VIEW(KB_BF16, 4)), imm(0)};
    assert_int_equal(math(KB_OP_WHERE, 3, in).out.dtype, KB_BF16);
    /* both values immediates: the condition's dtype if a float, else f32 */
    in[1] = imm(1);
    assert_int_equal(math(KB_OP_WHERE, 3, in).out.dtype, KB_F32);
    in[0] = tensor(VIEW(KB_F16, 4));
    assert_int_equal(math(KB_OP_WHERE, 3, in).out.dtype, KB_F16);
}

static void test_math_errors_name_the_call_and_the_shapes(void **state)
{
    (void)state;
    kb_pe_op op = {0};
    char *err = NULL;
    kb_pe_operand in[3] = {tensor(VIEW(KB_F16, 2, 3)), tensor(VIEW(KB_F16, 4))};
    assert_err(kb_pe_op_math(&op, KB_OP_ADD, 2, in, NULL, &err), &err,
               "tl.add: shapes [2, 3] and [4] cannot be broadcast together");
    in[1] = imm(1), in[2] = tensor(VIEW(KB_F16, 5));
    assert_err(kb_pe_op_math(&op, KB_OP_CLAMP, 3, in, NULL, &err), &err,
               "tl.clamp: shapes [2, 3] and [5] cannot be broadcast together"); /* tensors only */
    assert_err(kb_pe_op_math(&op, KB_OP_EXP, 2, in, NULL, &err), &err, "tl.exp: takes 1 operand(s), got 2");
    assert_err(kb_pe_op_math(&op, KB_OP_ADD, 5, in, NULL, &err), &err, "tl.add: takes 2 operand(s), got 5");
    in[0] = imm(1), in[1] = imm(2);
    assert_err(kb_pe_op_math(&op, KB_OP_SUB, 2, in, NULL, &err), &err,
               "tl.sub: at least one operand must be a tensor handle");
    assert_err(kb_pe_op_math(&op, KB_OP_SUM, 1, in, NULL, &err), &err, "tl.sum: the operand must be a tensor handle");
}

/* ---- axes ---- */

static bool axis_op(kb_pe_op *op, kb_mop mop, kb_tview x, const int64_t *axis, char **err)
{
    kb_pe_operand in[1] = {tensor(x)};
    memset(op, 0, sizeof *op);
    return kb_pe_op_math(op, mop, 1, in, axis, err);
}

static void test_a_reduction_keeps_its_axis_with_size_one(void **state)
{
    (void)state;
    kb_pe_op op;
    char *err = NULL;
    int64_t last = -1, first = 0;
    assert_true(axis_op(&op, KB_OP_SUM, VIEW(KB_F16, 4, 8), &last, &err));
    assert_int_equal(KB_PE_ARGS(&op, kb_pe_operands)->axis, 1);
    assert_shape(&op.out, 2, SHAPE(4, 1));
    assert_true(axis_op(&op, KB_OP_MAX, VIEW(KB_F16, 4, 8), &first, &err));
    assert_int_equal(KB_PE_ARGS(&op, kb_pe_operands)->axis, 0);
    assert_shape(&op.out, 2, SHAPE(1, 8));
}

static void test_without_an_axis_a_reduction_takes_every_element_of_a_contiguous_view(void **state)
{
    (void)state;
    kb_pe_op op;
    char *err = NULL;
    assert_true(axis_op(&op, KB_OP_MIN, VIEW(KB_F32, 4, 8), NULL, &err));
    assert_shape(&KB_PE_ARGS(&op, kb_pe_operands)->in[0].v, 1, SHAPE(32)); /* the operand seen as 1-D */
    assert_int_equal(KB_PE_ARGS(&op, kb_pe_operands)->axis, 0);
    assert_shape(&op.out, 1, SHAPE(1));
    kb_tview v = VIEW(KB_F32, 4, 8), t;
    kb_pe_trans(&v, &t, &err);
    assert_err(axis_op(&op, KB_OP_SUM, t, NULL, &err), &err,
               "tl.sum: reducing every element of a transposed view: give an axis");
}

static void test_softmax_takes_the_last_axis_by_default_and_keeps_the_shape(void **state)
{
    (void)state;
    kb_pe_op op;
    char *err = NULL;
    assert_true(axis_op(&op, KB_OP_SOFTMAX, VIEW(KB_F16, 4, 8), NULL, &err));
    assert_int_equal(KB_PE_ARGS(&op, kb_pe_operands)->axis, 1);
    assert_shape(&op.out, 2, SHAPE(4, 8));
}

static void test_an_axis_out_of_range_is_an_error(void **state)
{
    (void)state;
    kb_pe_op op;
    char *err = NULL;
    int64_t two = 2, minus3 = -3;
    assert_err(axis_op(&op, KB_OP_SUM, VIEW(KB_F16, 4, 8), &two, &err), &err,
               "tl.sum: axis 2 is out of range for 2 dimension(s)");
    assert_err(axis_op(&op, KB_OP_SOFTMAX, VIEW(KB_F16, 4, 8), &minus3, &err), &err,
               "tl.softmax: axis -3 is out of range for 2 dimension(s)");
}

/* ---- composites ---- */

static kb_composite_arg streamed(uint64_t va, kb_dtype dt, int64_t rows, int64_t cols)
{
    kb_composite_arg a = {.va = va};
    kb_tview_init(&a.v, 0, 0, dt, 2, SHAPE(rows, cols));
    return a;
}

static kb_composite_arg pinned(kb_tview v) { return (kb_composite_arg){.pinned = true, .v = v}; }

/* A streamed [64, 128] x pinned [128, 48] f16 GEMM to 0x9000. */
static kb_composite_args gemm_args(void)
{
    kb_composite_args a = {.op = "gemm", .nin = 2, .out_va = 0x9000};
    a.in[0] = streamed(0x1000, KB_F16, 64, 128);
    a.in[1] = pinned(VIEW(KB_F16, 128, 48));
    return a;
}

static void test_a_gemm_plan_takes_m_k_n_and_the_calls_tiles(void **state)
{
    (void)state;
    kb_composite_args a = gemm_args();
    kb_composite c;
    char *err = NULL;
    assert_true(kb_composite_plan(&a, &c, &err));
    const kb_plan_spec *s = &c.plan;
    assert_true(s->gemm && s->has[0] && s->has[1]);
    assert_int_equal(s->M, 64);
    assert_int_equal(s->K, 128);
    assert_int_equal(s->N, 48);
    assert_int_equal(s->tm, 0); /* none given: PE_SCHEDULER's at submission */
    assert_int_equal(s->tk, 0);
    assert_int_equal(s->tn, 0);
    assert_false(s->pinned[0]);
    assert_true(s->pinned[1]);
    assert_int_equal(c.in[0].va, 0x1000);
    assert_int_equal(c.in[1].v.domain, 7); /* the pinned operand keeps its view */
    assert_int_equal(s->in_size[0], 2);
    assert_int_equal(s->acc_size, 4);
    assert_int_equal(c.out_dtype, KB_F16); /* A's */
    assert_int_equal(s->out_size, 2);
    assert_int_equal(c.out_va, 0x9000);
    /* the call's tile sizes and output dtype; tk left to PE_SCHEDULER */
    kb_dtype f32 = KB_F32;
    a.out_dtype = &f32;
    a.has_tile[0] = a.has_tile[2] = true;
    a.tile[0] = 16, a.tile[2] = 8;
    assert_true(kb_composite_plan(&a, &c, &err));
    assert_int_equal(s->tm, 16);
    assert_int_equal(s->tk, 0);
    assert_int_equal(s->tn, 8);
    assert_int_equal(s->out_size, 4);
}

static void test_epilogue_operands_are_classed_by_how_they_broadcast_over_the_output(void **state)
{
    (void)state;
    kb_composite_args a = gemm_args(); /* output [64, 48] */
    a.nepi = 6;
    a.epi[0] = (kb_epilogue_arg){.op = "dequant", .scope = "k_tile", .value = 0.5};
    a.epi[1] = (kb_epilogue_arg){.op = "bias", .has_view = true, .v = VIEW(KB_F32, 48)};
    a.epi[2] = (kb_epilogue_arg){.op = "scale", .has_view = true, .v = VIEW(KB_F16, 1, 48)};
    a.epi[3] = (kb_epilogue_arg){.op = "add", .has_view = true, .v = VIEW(KB_F16, 64, 1)};
    a.epi[4] = (kb_epilogue_arg){.op = "add", .scope = "output_tile", .has_view = true, .v = VIEW(KB_F16, 64, 48)};
    a.epi[5] = (kb_epilogue_arg){.op = "relu"};
    kb_composite c;
    char *err = NULL;
    assert_true(kb_composite_plan(&a, &c, &err));
    const kb_plan_spec *s = &c.plan;
    assert_int_equal(s->nepi, 6);
    assert_int_equal(c.epi[0].kind, KB_EPI_DEQUANT);
    assert_int_equal(s->scope[0], KB_SCOPE_K_TILE);
    assert_false(c.epi[0].has_view);
    assert_true(c.epi[0].value == 0.5);
    assert_int_equal(s->epi_operand[0], KB_EPI_NONE);
    assert_int_equal(s->scope[1], KB_SCOPE_OUTPUT_TILE); /* the default */
    assert_int_equal(s->epi_operand[1], KB_EPI_COLS);
    assert_int_equal(s->epi_size[1], 4);
    assert_int_equal(s->epi_operand[2], KB_EPI_COLS);
    assert_int_equal(s->epi_operand[3], KB_EPI_ROWS);
    assert_int_equal(s->epi_operand[4], KB_EPI_TILE);
    assert_int_equal(c.epi[5].kind, KB_EPI_RELU);
    /* an operand that does not broadcast to [64, 48] */
    a.nepi = 1;
    a.epi[0] = (kb_epilogue_arg){.op = "bias", .has_view = true, .v = VIEW(KB_F16, 7)};
    assert_err(kb_composite_plan(&a, &c, &err), &err,
               "tl.composite: the bias operand of shape [7] does not broadcast to the output [64, 48]");
}

static void test_a_math_plan_is_its_element_wise_op_over_m_by_n(void **state)
{
    (void)state;
    kb_composite_args a = {.op = "math", .math_op = "maximum", .nin = 2, .out_va = 0x9000};
    a.in[0] = streamed(0x1000, KB_BF16, 100, 70);
    a.in[1] = pinned(VIEW(KB_BF16, 100, 70));
    kb_composite c;
    char *err = NULL;
    assert_true(kb_composite_plan(&a, &c, &err));
    assert_false(c.plan.gemm);
    assert_int_equal(c.mop, KB_OP_MAXIMUM);
    assert_int_equal(c.plan.M, 100);
    assert_int_equal(c.plan.N, 70);
    assert_true(c.plan.has[1]);
    assert_int_equal(c.plan.in_size[1], 2);
}

/* Plans a modified gemm_args (or a math composite) and checks its error. */
static void assert_plan_error(kb_composite_args a, const char *want)
{
    kb_composite c;
    char *err = NULL;
    assert_err(kb_composite_plan(&a, &c, &err), &err, want);
}

static void test_a_composite_that_cannot_run_is_refused_with_the_calls_message(void **state)
{
    (void)state;
    kb_composite_args a = gemm_args();
    a.op = "conv";
    assert_plan_error(a, "tl.composite: op must be \"gemm\" or \"math\", got conv");
    a = gemm_args();
    a.in[1] = streamed(0x2000, KB_F16, 32, 64);
    assert_plan_error(a, "tl.composite: cannot be multiplied: shapes [64, 128] and [32, 64]");
    a.in[1] = streamed(0x2000, KB_F32, 128, 64);
    assert_plan_error(a, "tl.composite: operand dtypes differ (f16 and f32)");
    a.in[1] = pinned(VIEW(KB_F16, 128));
    assert_plan_error(a, "tl.composite: b must be 2-D");
    a.nin = 1;
    assert_plan_error(a, "tl.composite: a gemm needs b");
    a = gemm_args();
    a.has_tile[1] = true; /* a given 0 is not "PE_SCHEDULER's" */
    assert_plan_error(a, "tl.composite: tile sizes must be >= 1");
    a = gemm_args();
    a.nepi = KB_MAX_EPILOGUE + 1;
    assert_plan_error(a, "tl.composite: at most 8 epilogue ops (got 9)");
    a.nepi = 1;
    a.epi[0] = (kb_epilogue_arg){.op = "sqrtx"};
    assert_plan_error(a, "tl.composite: unknown epilogue op 'sqrtx'");
    a.epi[0] = (kb_epilogue_arg){.op = "relu", .scope = "kernel"};
    assert_plan_error(a, "tl.composite: epilogue[1]: scope must be k_tile or output_tile, got kernel");
    kb_composite_args m = {.op = "math", .math_op = "sum", .nin = 1};
    m.in[0] = streamed(0x1000, KB_F16, 32, 64);
    assert_plan_error(m, "tl.composite: math_op 'sum' is not an element-wise op taking 1 operand(s)");
    m.math_op = "add";
    assert_plan_error(m, "tl.composite: math_op 'add' is not an element-wise op taking 1 operand(s)");
    m.math_op = NULL;
    assert_plan_error(m, "tl.composite: a math composite needs math_op (\"exp\", \"add\" ...)");
    m.math_op = "exp";
    m.nepi = 1;
    m.epi[0] = (kb_epilogue_arg){.op = "relu"};
    assert_plan_error(m, "tl.composite: epilogues belong to gemm composites");
    m.nepi = 0, m.nin = 2;
    m.in[1] = streamed(0x2000, KB_F16, 64, 32);
    m.math_op = "add";
    assert_plan_error(m, "tl.composite: must be the same: shapes [32, 64] and [64, 32]");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_load_is_an_unplaced_result_of_its_shape_and_dtype),
        cmocka_unit_test(test_a_store_moves_contiguous_bytes_only),
        cmocka_unit_test(test_cycles_are_counted_from_zero),
        cmocka_unit_test(test_trans_swaps_the_last_two_dimensions_and_their_strides),
        cmocka_unit_test(test_dot_is_m_by_n_in_the_operands_dtype_unless_asked),
        cmocka_unit_test(test_dot_names_both_shapes_or_dtypes_when_it_cannot_multiply),
        cmocka_unit_test(test_math_broadcasts_tensors_and_immediates_to_the_result),
        cmocka_unit_test(test_math_result_dtype_is_the_tensors_common_one),
        cmocka_unit_test(test_where_takes_its_dtype_from_the_values_not_the_condition),
        cmocka_unit_test(test_math_errors_name_the_call_and_the_shapes),
        cmocka_unit_test(test_a_reduction_keeps_its_axis_with_size_one),
        cmocka_unit_test(test_without_an_axis_a_reduction_takes_every_element_of_a_contiguous_view),
        cmocka_unit_test(test_softmax_takes_the_last_axis_by_default_and_keeps_the_shape),
        cmocka_unit_test(test_an_axis_out_of_range_is_an_error),
        cmocka_unit_test(test_a_gemm_plan_takes_m_k_n_and_the_calls_tiles),
        cmocka_unit_test(test_epilogue_operands_are_classed_by_how_they_broadcast_over_the_output),
        cmocka_unit_test(test_a_math_plan_is_its_element_wise_op_over_m_by_n),
        cmocka_unit_test(test_a_composite_that_cannot_run_is_refused_with_the_calls_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
