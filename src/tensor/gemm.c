/* Matrix products through CBLAS (engine.h): OpenBLAS's single-threaded
 * build, row-major, no transposes. */
#include "tensor/engine.h"

#include <cblas.h>
#include <string.h>

/* BLAS refuses leading dimensions of 0, so a product with an empty
 * dimension makes no call: k = 0 gives zeros (empty sums), m or n = 0
 * nothing to write. True when the product was empty. */
static bool empty_product(void *c, size_t esize, int64_t m, int64_t k, int64_t n)
{
    if (m > 0 && k > 0 && n > 0)
        return false;
    if (m > 0 && n > 0)
        memset(c, 0, (size_t)(m * n) * esize);
    return true;
}

void kb_compute_matmul_f32(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n)
{
    if (empty_product(c, sizeof *c, m, k, n))
        return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f, a,
                (blasint)k, b, (blasint)n, 0.0f, c, (blasint)n);
}

void kb_compute_matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n)
{
    if (empty_product(c, sizeof *c, m, k, n))
        return;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0, a,
                (blasint)k, b, (blasint)n, 0.0, c, (blasint)n);
}
