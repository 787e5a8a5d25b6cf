/* Host tensors: dense, row-major tensors of at most 8 dimensions whose bytes
 * are in their dtype's encoding (an f16 tensor holds f16 bits). The C side
 * of the torch-like runtime's host tensors (`kernbench.tensor_c`, reference
 * docs/torch.md, "Host tensors"): creation, views, shape operations,
 * conversions, math (through engine.h), printing (print.c) and random
 * numbers (random.h). No Lua here.
 *
 * Memory: this module never allocates a tensor's bytes. A kb_tensor is a
 * header (dtype, shape, numel) and a pointer to bytes its caller owns. An
 * operation that makes a tensor is two calls:
 *   kb_tensor_X_shape(inputs..., &out[, &err])  checks the inputs and sets
 *       out's dtype and shape (data NULL), or returns false with a message;
 *   kb_tensor_X(inputs..., &out)  computes into out.data, which the caller
 *       has pointed at kb_tensor_nbytes(&out) bytes.
 * The Lua binding puts those bytes in the result's userdata, after its
 * header (one block), so Lua's collector sees every tensor's real size and
 * frees header and bytes together; a view (kb_tensor_view) shares its
 * source's bytes and the binding keeps the source alive. C callers and the
 * tests use malloc. The only memory allocated here is a matmul's temporary
 * scratch (non-f32 dtypes), freed before the call returns, and error
 * messages.
 *
 * Errors are returned, never raised: `char **err` receives a message
 * allocated with malloc (the caller frees it; the binding raises it with
 * lbind_raise) that names the call, e.g. "add: shapes [2, 3] and [2]
 * cannot be broadcast together (3 vs 2 at dimension 1 of the result)".
 *
 * Indices and dimensions are 0-based. Values are computed in double and
 * rounded once when stored in the result's dtype. Results' dtypes follow
 * torch's promotion (kb_tensor_promote). */
#ifndef KB_TENSOR_TENSOR_H
#define KB_TENSOR_TENSOR_H

#include "mem/dtype.h"
#include "tensor/engine.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KB_TENSOR_MAXDIM 8

typedef struct kb_tensor {
    kb_dtype dtype;
    int ndim;
    int64_t shape[KB_TENSOR_MAXDIM];
    int64_t numel;
    void *data; /* numel * kb_dtype_size(dtype) bytes, owned by the caller */
} kb_tensor;

/* An element-wise operand: a tensor, or (t NULL) the number v. A number
 * only lifts the result's category (v_int: it was an integer). */
typedef struct kb_operand {
    const kb_tensor *t;
    double v;
    bool v_int;
} kb_operand;

/* ==== headers, shapes, dimensions ==== */

/* Sets t's header (data NULL). Errors: more than 8 dimensions, a negative
 * size, more than 2^46 bytes. */
bool kb_tensor_init(kb_tensor *t, kb_dtype dtype, int ndim, const int64_t *shape, char **err);
size_t kb_tensor_nbytes(const kb_tensor *t);
int64_t kb_tensor_prod(const int64_t *shape, int from, int to);
/* Row-major element strides. */
void kb_tensor_strides(const kb_tensor *t, int64_t *strides);
/* Dimension d (negative counts from the end) of an ndim tensor, in *out. */
bool kb_tensor_dim(const char *fn, int64_t d, int ndim, int *out, char **err);
/* The tensor seen as 2-D: cols = the last dimension, rows = the others. */
void kb_tensor_rows_cols(const kb_tensor *t, int64_t *rows, int64_t *cols);

/* ==== elements and views ==== */

/* The element offset of t[idx[0]]...[idx[n-1]] (n <= ndim). */
bool kb_tensor_offset(const kb_tensor *t, const char *fn, int n, const int64_t *idx, int64_t *off, char **err);
/* A header over src's bytes from element off, of shape (ndim, shape). */
void kb_tensor_view(const kb_tensor *src, int64_t off, int ndim, const int64_t *shape, kb_tensor *out);
/* Resolves shape (at most one -1) for t's elements; reshape/view. */
bool kb_tensor_reshape(const kb_tensor *t, int ndim, int64_t *shape, char **err);
double kb_tensor_get(const kb_tensor *t, int64_t off);
/* Stores v at element off, rounded once (kb_dtype_store). */
void kb_tensor_set(const kb_tensor *t, int64_t off, double v);
/* The value of a one-element tensor. */
bool kb_tensor_item(const kb_tensor *t, double *v, char **err);
/* Every element = v (rounded once). */
void kb_tensor_fill(const kb_tensor *t, double v);
/* 64-bit FNV-1a of the bytes. */
uint64_t kb_tensor_hash(const kb_tensor *t);

/* ==== creation ==== */

/* arange: ceil((stop - start) / step) elements start + i*step. */
bool kb_tensor_arange_numel(double start, double stop, double step, int64_t *n, char **err);
void kb_tensor_arange(const kb_tensor *out, double start, double step);
/* len bytes must be exactly t's bytes (from_bytes). */
bool kb_tensor_check_bytes(const kb_tensor *t, size_t len, char **err);

/* ==== copies, conversions, blocks ==== */

/* out (same shape, any dtype) = src converted. */
void kb_tensor_convert(const kb_tensor *src, const kb_tensor *out);
/* dst = src broadcast to dst's shape, converted (copy_, assignment). */
bool kb_tensor_copy(const kb_tensor *dst, const kb_tensor *src, const char *fn, char **err);
/* Blocks b = {row0, rows, col0, cols} of the 2-D view, as row-major bytes. */
bool kb_tensor_block_check(const kb_tensor *t, const char *fn, const int64_t *b, char **err);
void kb_tensor_block_read(const kb_tensor *t, const int64_t *b, void *out);
/* Checks len against the block's bytes, then writes them. */
bool kb_tensor_block_write(const kb_tensor *t, const int64_t *b, const void *src, size_t len, char **err);

/* ==== shape operations (copies) ==== */

/* narrow(dim, start, length); a negative start counts from the end. */
bool kb_tensor_narrow_shape(const kb_tensor *t, int dim, int64_t start, int64_t len, kb_tensor *out, char **err);
void kb_tensor_narrow(const kb_tensor *t, int dim, int64_t start, const kb_tensor *out);
void kb_tensor_transpose_shape(const kb_tensor *t, int d0, int d1, kb_tensor *out);
void kb_tensor_transpose(const kb_tensor *t, int d0, int d1, const kb_tensor *out);
/* T(): the transpose of at most 2 dimensions (0-d and 1-D: a copy). */
bool kb_tensor_T_shape(const kb_tensor *t, kb_tensor *out, char **err);
void kb_tensor_T(const kb_tensor *t, const kb_tensor *out);
/* cat(list, dim): sizes match except along dim (negative counts from the
 * end of list[0]'s dimensions); dtypes promote. *dim_out: the dimension.
 * Messages number the list from 1, as Lua does. */
bool kb_tensor_cat_shape(const kb_tensor *const *list, int64_t n, int64_t dim, kb_tensor *out, int *dim_out,
                         char **err);
void kb_tensor_cat(const kb_tensor *const *list, int64_t n, int dim, const kb_tensor *out);

/* ==== element-wise math (ewise.c) ==== */

/* torch's categories bool < integer < float: the higher wins; two float
 * dtypes give f32, two integer dtypes the wider (i8 with u8: i16). */
kb_dtype kb_tensor_promote(kb_dtype a, kb_dtype b);
/* An element-wise op over kb_mop_info_of(op)->arity operands, broadcast
 * numpy-style (trailing dimensions aligned; size-1 and missing dimensions
 * repeat); at least one operand is a tensor. Result dtype: the operands'
 * promotion (where: of a and b); integer and bool inputs give f32 for div
 * and for unary ops other than neg, abs and relu. */
bool kb_tensor_ewise_shape(kb_mop op, const kb_operand *args, kb_tensor *out, char **err);
void kb_tensor_ewise(kb_mop op, const kb_operand *args, const kb_tensor *out);
/* A bool tensor of a and b's broadcast shape (isclose); fn names errors. */
bool kb_tensor_compare_shape(const char *fn, const kb_tensor *a, const kb_tensor *b, kb_tensor *out, char **err);
void kb_tensor_isclose(const kb_close *c, const kb_tensor *a, const kb_tensor *b, const kb_tensor *out);
bool kb_tensor_allclose(const kb_close *c, const kb_tensor *a, const kb_tensor *b, bool *all, char **err);
/* Same shape and equal values (NaN unequal; dtypes may differ). */
bool kb_tensor_equal(const kb_tensor *a, const kb_tensor *b);

/* ==== reductions and softmax (reduce.c); op: KB_OP_SUM, MEAN, MAX, MIN ==== */

/* Over all elements: the value, and the dtype it has (sum of integers and
 * bool: i32; mean needs a float tensor; max/min need an element). */
bool kb_tensor_reduce_all(kb_mop op, const kb_tensor *t, double *v, kb_dtype *dtype, char **err);
/* Along dim (checked by the caller): vals, and for max/min idx (i32). */
bool kb_tensor_reduce_shape(kb_mop op, const kb_tensor *t, int dim, bool keepdim, kb_tensor *vals, kb_tensor *idx,
                            char **err);
void kb_tensor_reduce(kb_mop op, const kb_tensor *t, int dim, const kb_tensor *vals, const kb_tensor *idx);
/* exp(x - max) / sum along dim; float dtypes keep theirs, others give f32. */
void kb_tensor_softmax_shape(const kb_tensor *t, kb_tensor *out);
void kb_tensor_softmax(const kb_tensor *t, int dim, const kb_tensor *out);

/* ==== matmul (matmul.c) ==== */

/* torch's rules: 1-D operands become a row (a) or a column (b) and that
 * dimension is dropped; leading (batch) dimensions broadcast; both dtypes
 * equal, which the result has. f32: f32 accumulation along k in order
 * (engine.h, as the device's GEMM); f16, bf16, integers and bool: double
 * accumulation along k in order, rounded once to the dtype. */
bool kb_tensor_matmul_shape(const kb_tensor *a, const kb_tensor *b, kb_tensor *out, char **err);
/* False only when the scratch cannot be allocated. */
bool kb_tensor_matmul(const kb_tensor *a, const kb_tensor *b, const kb_tensor *out, char **err);

/* ==== printing (print.c) ==== */

/* torch's repr with its default print options: "tensor([[1., 2.],\n ...])".
 * A string allocated with malloc. */
char *kb_tensor_format(const kb_tensor *t);

#endif
