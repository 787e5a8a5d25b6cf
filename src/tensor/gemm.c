/* Matrix products through CBLAS (engine.h): OpenBLAS's single-threaded
 * build, row-major, no transposes. */
#include "tensor/engine.h"

#include <cblas.h>

void kb_compute_matmul_f32(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0f, a,
                (blasint)k, b, (blasint)n, 0.0f, c, (blasint)n);
}

void kb_compute_matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n)
{
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (blasint)m, (blasint)n, (blasint)k, 1.0, a,
                (blasint)k, b, (blasint)n, 0.0, c, (blasint)n);
}
