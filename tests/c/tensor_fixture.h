/* Host tensors for the C tests of src/tensor/: the caller owns the bytes
 * (tensor.h's rule), so the tests allocate them with calloc. Include after
 * <cmocka.h>. */
#ifndef KB_TEST_TENSOR_FIXTURE_H
#define KB_TEST_TENSOR_FIXTURE_H

#include "tensor/tensor.h"

#include <stdlib.h>

/* Bytes for a header made by kb_tensor_init or a *_shape function. */
static inline kb_tensor *tf_alloc(kb_tensor *t)
{
    t->data = calloc(1, kb_tensor_nbytes(t) + 1);
    assert_non_null(t->data);
    return t;
}

static inline kb_tensor tf_new(kb_dtype dt, int ndim, const int64_t *shape)
{
    kb_tensor t;
    char *err = NULL;
    assert_true(kb_tensor_init(&t, dt, ndim, shape, &err));
    tf_alloc(&t);
    return t;
}

/* A tensor holding vals (numel of them), each stored with kb_tensor_set. */
static inline kb_tensor tf_of(kb_dtype dt, int ndim, const int64_t *shape, const double *vals)
{
    kb_tensor t = tf_new(dt, ndim, shape);
    for (int64_t i = 0; i < t.numel; i++)
        kb_tensor_set(&t, i, vals[i]);
    return t;
}

static inline void tf_free(kb_tensor *t)
{
    free(t->data);
    t->data = NULL;
}

/* Asserts that a call failed with a message containing `want`, and frees it. */
#define TF_FAILS(call, err, want)                                                                                 \
    do {                                                                                                          \
        (err) = NULL;                                                                                             \
        assert_false(call);                                                                                       \
        assert_has((err), (want));                                                                                \
        free(err);                                                                                                \
    } while (0)

#endif
