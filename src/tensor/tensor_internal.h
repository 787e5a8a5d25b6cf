/* Internal to the src/tensor/ sources: shape strings, error messages,
 * element pointers and the element-wise runner (ewise.c) every copy,
 * conversion and element-wise op goes through. */
#ifndef KB_TENSOR_INTERNAL_H
#define KB_TENSOR_INTERNAL_H

#include "mem/view.h"
#include "tensor/tensor.h"

#define MAXD KB_TENSOR_MAXDIM
/* Elements per chunk of the double-precision loops (a few chunks live on the C stack). */
#define RUN 512

static inline int64_t kb_tensor_esize(const kb_tensor *t) { return (int64_t)kb_dtype_size(t->dtype); }
static inline char *kb_tensor_eptr(const kb_tensor *t, int64_t off)
{
    return (char *)t->data + off * kb_tensor_esize(t);
}

/* Bytes of a shape string such as "[2, 3]" (kb_tensor_shape_str). */
#define KB_TENSOR_SHAPE_STRLEN 192
/* "[2, 3]" into buf (KB_TENSOR_SHAPE_STRLEN bytes); returns buf. */
static inline const char *kb_tensor_shape_str(int ndim, const int64_t *shape, char *buf)
{
    return kb_shape_str(ndim, shape, buf, KB_TENSOR_SHAPE_STRLEN);
}
bool kb_tensor_same_shape(const kb_tensor *a, const kb_tensor *b);

/* Sets *err (if err is not NULL) to the formatted message; returns false. */
bool kb_tensor_fail(char **err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A double as Lua prints it ("%.14g", ".0" added to integral values), for
 * messages that Lua's %f used to format. buf: 48 bytes. */
const char *kb_tensor_numstr(double v, char *buf);

/* The broadcast shape of (na, a) and (nb, b), or an error naming both
 * (err may be NULL). */
bool kb_tensor_broadcast(const char *fn, int na, const int64_t *a, int nb, const int64_t *b, int *nout,
                         int64_t *out, char **err);

/* One input of the runner: a tensor read with per-dimension element strides
 * over the iteration shape (0 where it is broadcast), or the constant v. */
typedef struct kb_ew_operand {
    const kb_tensor *t;
    double v;
    int64_t stride[MAXD];
} kb_ew_operand;

/* t read over an iteration shape of ndim dimensions, broadcast numpy-style. */
void kb_ew_tensor(kb_ew_operand *o, const kb_tensor *t, int ndim);
void kb_ew_number(kb_ew_operand *o, double v);

/* What the runner computes per chunk. */
typedef enum kb_ew_kind { KB_EW_COPY, KB_EW_MOP, KB_EW_ISCLOSE, KB_EW_EQUAL } kb_ew_kind;
typedef struct kb_ew_kernel {
    kb_ew_kind kind;
    kb_mop op;             /* KB_EW_MOP */
    const kb_close *close; /* KB_EW_ISCLOSE */
} kb_ew_kernel;

/* Runs k over the iteration shape with nops (1 .. 3) operands; results go
 * to out (contiguous, row-major) or, with out NULL, are only checked:
 * returns whether every result was nonzero. */
bool kb_ew_run(const kb_ew_kernel *k, const kb_ew_operand *ops, int nops, int ndim, const int64_t *shape,
               const kb_tensor *out);

#endif
