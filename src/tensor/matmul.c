/* matmul of host tensors (tensor.h) with torch's rules, one GEMM per batch
 * matrix through engine.h: f32 operands straight through the f32 product
 * (f32 accumulation in k order, as the device's); the other dtypes widened
 * to double for the double product (the products of f16, bf16 and integers
 * below 2^26 are exact there), rounded once when stored. */
#include "tensor/tensor_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a per double product: the widened row block and its results stay
 * within about 8 MiB of scratch (all rows at once for most shapes). */
#define SCRATCH_DOUBLES (INT64_C(1) << 20)

typedef struct mm_plan {
    int64_t m, k, n, nbatch;
    int nbat;
    int64_t bshape[MAXD]; /* the broadcast batch shape */
    kb_ew_operand ba, bb; /* a's and b's batch strides over it, in matrices (0 where broadcast) */
} mm_plan;

/* The leading (batch) dimensions of t, as a header. */
static void batch_dims(const kb_tensor *t, kb_tensor *out)
{
    kb_tensor_view(t, 0, t->ndim > 2 ? t->ndim - 2 : 0, t->shape, out);
}

/* The plan of a checked pair, or false if the batch shapes do not broadcast. */
static bool plan_of(const kb_tensor *a, const kb_tensor *b, mm_plan *p)
{
    p->m = a->ndim == 1 ? 1 : a->shape[a->ndim - 2];
    p->k = a->shape[a->ndim - 1];
    p->n = b->ndim == 1 ? 1 : b->shape[b->ndim - 1];
    kb_tensor ab, bb;
    batch_dims(a, &ab);
    batch_dims(b, &bb);
    if (!kb_tensor_broadcast("matmul", ab.ndim, ab.shape, bb.ndim, bb.shape, &p->nbat, p->bshape, NULL))
        return false;
    kb_ew_tensor(&p->ba, &ab, p->nbat);
    kb_ew_tensor(&p->bb, &bb, p->nbat);
    p->nbatch = kb_tensor_prod(p->bshape, 0, p->nbat);
    return true;
}

bool kb_tensor_matmul_shape(const kb_tensor *a, const kb_tensor *b, kb_tensor *out, char **err)
{
    char s1[KB_TENSOR_SHAPE_STRLEN], s2[KB_TENSOR_SHAPE_STRLEN];
    kb_tensor_shape_str(a->ndim, a->shape, s1);
    kb_tensor_shape_str(b->ndim, b->shape, s2);
    if (a->ndim == 0 || b->ndim == 0)
        return kb_tensor_fail(err, "matmul: both arguments need at least 1 dimension, got shapes %s and %s", s1, s2);
    if (a->dtype != b->dtype)
        return kb_tensor_fail(err, "matmul: dtypes %s and %s differ (convert one with :to())",
                              kb_dtype_name(a->dtype), kb_dtype_name(b->dtype));
    int64_t kb = b->ndim == 1 ? b->shape[0] : b->shape[b->ndim - 2];
    mm_plan p;
    bool batch_ok = plan_of(a, b, &p);
    if (p.k != kb)
        return kb_tensor_fail(err, "matmul: shapes %s and %s cannot be multiplied (%" PRId64 " != %" PRId64 ")", s1, s2,
                              p.k, kb);
    if (!batch_ok)
        return kb_tensor_fail(err, "matmul: the batch dimensions of shapes %s and %s cannot be broadcast together",
                              s1, s2);
    int nd = p.nbat;
    int64_t shape[MAXD];
    memcpy(shape, p.bshape, (size_t)nd * sizeof *shape);
    if (a->ndim > 1)
        shape[nd++] = p.m;
    if (b->ndim > 1)
        shape[nd++] = p.n;
    return kb_tensor_init(out, a->dtype, nd, shape, err);
}

/* One batch matrix through the double product: b's matrix widened once per distinct
 * matrix (*loaded tracks it), a's rows in blocks of `rows`. */
static void batch_f64(const kb_tensor *a, const kb_tensor *b, const kb_tensor *out, const mm_plan *p, int64_t bi,
                      int64_t offa, int64_t offb, int64_t *loaded, double *bd, double *ad, double *cd, int64_t rows)
{
    int64_t m = p->m, k = p->k, n = p->n;
    if (offb != *loaded) {
        kb_compute_load_run(b->dtype, kb_tensor_eptr(b, offb * k * n), 1, bd, k * n);
        *loaded = offb;
    }
    for (int64_t r0 = 0; r0 < m; r0 += rows) {
        int64_t r = m - r0 < rows ? m - r0 : rows;
        kb_compute_load_run(a->dtype, kb_tensor_eptr(a, (offa * m + r0) * k), 1, ad, r * k);
        kb_compute_matmul_f64(ad, bd, cd, r, k, n);
        kb_compute_store_run(out->dtype, kb_tensor_eptr(out, (bi * m + r0) * n), 1, cd, r * n);
    }
}

bool kb_tensor_matmul(const kb_tensor *a, const kb_tensor *b, const kb_tensor *out, char **err)
{
    mm_plan p;
    plan_of(a, b, &p);
    int64_t m = p.m, k = p.k, n = p.n;
    if (out->numel == 0)
        return true;
    bool f32 = a->dtype == KB_F32;
    double *bd = NULL, *ad = NULL, *cd = NULL;
    int64_t rows = SCRATCH_DOUBLES / (k + n);
    rows = rows < 1 ? 1 : rows > m ? m : rows;
    if (!f32) {
        size_t need = (size_t)(k * n + rows * (k + n)) * sizeof(double);
        bd = malloc(need);
        if (!bd)
            return kb_tensor_fail(err, "matmul: cannot allocate %zu bytes of scratch", need);
        ad = bd + k * n;
        cd = ad + rows * k;
    }
    int64_t idx[MAXD] = {0}, offa = 0, offb = 0, loaded = -1;
    for (int64_t bi = 0; bi < p.nbatch; bi++) {
        if (f32)
            kb_compute_matmul_f32((const float *)a->data + offa * m * k, (const float *)b->data + offb * k * n,
                                  (float *)out->data + bi * m * n, m, k, n);
        else
            batch_f64(a, b, out, &p, bi, offa, offb, &loaded, bd, ad, cd, rows);
        for (int d = p.nbat - 1; d >= 0; d--) {
            offa += p.ba.stride[d];
            offb += p.bb.stride[d];
            if (++idx[d] < p.bshape[d])
                break;
            offa -= p.ba.stride[d] * p.bshape[d];
            offb -= p.bb.stride[d] * p.bshape[d];
            idx[d] = 0;
        }
    }
    free(bd);
    return true;
}
