/* Tensor views over the memory store: a dtype, a shape and element strides
 * from a byte offset in one memory domain. Kernels' values (TCM scratch,
 * loaded tiles) are views; data-mode arithmetic reads its operands through
 * them in logical (row-major) order and writes its results back.
 *
 * A stride of 0 repeats an element (broadcasting); a transposed view swaps
 * two shapes and their strides. Reads and writes of a view whose last
 * stride is 1 move whole rows at a time. */
#ifndef KB_MEM_VIEW_H
#define KB_MEM_VIEW_H

#include "mem/dtype.h"
#include "mem/memstore.h"

#include <stdbool.h>
#include <stdint.h>

#define KB_VIEW_MAXDIM 8
/* The largest tensor a shape may describe: 2^46 bytes (64 TiB, as host
 * tensors, src/tensor/tensor.h), so that element counts, strides and byte
 * offsets of a checked shape never overflow. */
#define KB_VIEW_MAX_BYTES (UINT64_C(1) << 46)

/* The bytes of a [shape] tensor of elem_size-byte elements, checked: false
 * if a size is negative or the bytes pass KB_VIEW_MAX_BYTES. The sizes
 * other than 0 are counted as well, so that an empty tensor's strides fit
 * too. Every shape from a user passes here before a view is made of it. */
bool kb_shape_nbytes(int ndim, const int64_t *shape, uint64_t elem_size, uint64_t *nbytes);

typedef struct kb_tview {
    uint64_t domain;  /* memory store domain (the node holding the memory) */
    uint64_t offset;  /* byte offset of element [0, 0, ...] */
    kb_dtype dtype;
    int ndim;         /* 1 .. KB_VIEW_MAXDIM */
    int64_t shape[KB_VIEW_MAXDIM];
    int64_t stride[KB_VIEW_MAXDIM]; /* in elements */
} kb_tview;

/* A contiguous row-major view of `shape`. */
void kb_tview_init(kb_tview *v, uint64_t domain, uint64_t offset, kb_dtype dtype, int ndim,
                   const int64_t *shape);
int64_t kb_tview_numel(const kb_tview *v);
uint64_t kb_tview_nbytes(const kb_tview *v); /* numel * itemsize */
bool kb_tview_contiguous(const kb_tview *v);
/* Byte offset of the element at idx (ndim indices, in range). */
uint64_t kb_tview_elem_offset(const kb_tview *v, const int64_t *idx);

/* The view's elements in row-major order, as doubles (numel of them). */
void kb_tview_read(const kb_memstore *m, const kb_tview *v, double *out);
/* Stores numel values (rounded to the dtype) into the view's elements. */
void kb_tview_write(kb_memstore *m, const kb_tview *v, const double *vals);

/* The shape two shapes broadcast to (numpy rules: trailing dimensions
 * aligned, sizes equal or 1). False if they do not. */
bool kb_broadcast_shapes(int na, const int64_t *a, int nb, const int64_t *b, int *nout, int64_t *out);
/* v seen with `shape` (which v broadcasts to): size-1 and missing leading
 * dimensions get stride 0. False if v does not broadcast to it. */
bool kb_tview_broadcast(const kb_tview *v, int ndim, const int64_t *shape, kb_tview *out);

/* "[2, 3]" into buf. */
const char *kb_shape_str(int ndim, const int64_t *shape, char *buf, size_t n);

#endif
