/* Matrix products (engine.h): the MAC array's arithmetic, defined here and
 * not by a library (docs/decisions.md, "The device's arithmetic"). Every
 * output element accumulates along k in order, from +0, each product
 * rounded to the type and then added (no fused multiply-add):
 *   c[i][j] = (...((0 + a[i][0] b[0][j]) + a[i][1] b[1][j]) + ...) + a[i][k-1] b[k-1][j]
 * IEEE multiplication and addition are correctly rounded, so this order
 * gives the same bits on every machine; engine.h refuses the compiler
 * options that would change it, and CMakeLists.txt turns contraction off.
 *
 * The loops vectorise across output columns, never along k: a tile of
 * TILE_ROWS rows and two vectors of columns keeps its accumulators in
 * registers while p runs from 0 to k - 1, each lane one output element
 * doing exactly the sequence above. GCC's and clang's vector types lower
 * to whatever SIMD the target has (SSE2 on any x86-64). */
#include "tensor/engine.h"

#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

enum { TILE_ROWS = 4, VEC_BYTES = 16 };

/* GEMM_TYPE(T, SUF): the product for element type T. A full tile is
 * TILE_ROWS x (2 vectors) outputs; the edges (fewer rows or columns) run
 * the same order one row at a time. */
#define GEMM_TYPE(T, SUF)                                                                                     \
    typedef T vec_##SUF __attribute__((vector_size(VEC_BYTES)));                                              \
    enum { LANES_##SUF = VEC_BYTES / sizeof(T), TILE_COLS_##SUF = 2 * LANES_##SUF };                           \
                                                                                                              \
    static inline vec_##SUF load_##SUF(const T *p)                                                           \
    {                                                                                                         \
        vec_##SUF v;                                                                                          \
        memcpy(&v, p, sizeof v);                                                                              \
        return v;                                                                                             \
    }                                                                                                         \
                                                                                                              \
    static void tile_##SUF(const T *restrict a, const T *restrict b, T *restrict c, int64_t k, int64_t n)     \
    {                                                                                                         \
        vec_##SUF acc[TILE_ROWS][2];                                                                          \
        for (int i = 0; i < TILE_ROWS; i++)                                                                   \
            acc[i][0] = acc[i][1] = (vec_##SUF){0};                                                           \
        for (int64_t p = 0; p < k; p++) {                                                                     \
            vec_##SUF b0 = load_##SUF(b + p * n), b1 = load_##SUF(b + p * n + LANES_##SUF);                   \
            for (int i = 0; i < TILE_ROWS; i++) {                                                             \
                vec_##SUF ai = {0};                                                                           \
                for (int l = 0; l < LANES_##SUF; l++)                                                         \
                    ai[l] = a[i * k + p];                                                                     \
                vec_##SUF prod0 = ai * b0, prod1 = ai * b1;                                                   \
                acc[i][0] += prod0;                                                                           \
                acc[i][1] += prod1;                                                                           \
            }                                                                                                 \
        }                                                                                                     \
        for (int i = 0; i < TILE_ROWS; i++) {                                                                 \
            memcpy(c + i * n, &acc[i][0], sizeof acc[i][0]);                                                  \
            memcpy(c + i * n + LANES_##SUF, &acc[i][1], sizeof acc[i][1]);                                    \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    static void edge_##SUF(const T *a, const T *b, T *c, int64_t k, int64_t n, int64_t rows, int64_t cols)    \
    {                                                                                                         \
        for (int64_t i = 0; i < rows; i++) {                                                                  \
            T acc[TILE_COLS_##SUF] = {0};                                                                     \
            for (int64_t p = 0; p < k; p++) {                                                                 \
                T aip = a[i * k + p];                                                                         \
                for (int64_t j = 0; j < cols; j++) {                                                          \
                    T prod = aip * b[p * n + j];                                                              \
                    acc[j] += prod;                                                                           \
                }                                                                                             \
            }                                                                                                 \
            memcpy(c + i * n, acc, (size_t)cols * sizeof *acc);                                               \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    /* Column panels outside, row tiles inside: b's panel (k x TILE_COLS)                                     \
     * stays in cache while every row tile of a passes it. */                                                 \
    static void gemm_##SUF(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n)                     \
    {                                                                                                         \
        for (int64_t j0 = 0; j0 < n; j0 += TILE_COLS_##SUF) {                                                 \
            int64_t cols = n - j0 < TILE_COLS_##SUF ? n - j0 : TILE_COLS_##SUF;                               \
            for (int64_t i0 = 0; i0 < m; i0 += TILE_ROWS) {                                                   \
                int64_t rows = m - i0 < TILE_ROWS ? m - i0 : TILE_ROWS;                                       \
                if (rows == TILE_ROWS && cols == TILE_COLS_##SUF)                                             \
                    tile_##SUF(a + i0 * k, b + j0, c + i0 * n + j0, k, n);                                    \
                else                                                                                          \
                    edge_##SUF(a + i0 * k, b + j0, c + i0 * n + j0, k, n, rows, cols);                        \
            }                                                                                                 \
        }                                                                                                     \
    }

GEMM_TYPE(float, f32)
GEMM_TYPE(double, f64)

void kb_compute_matmul_f32(const float *a, const float *b, float *c, int64_t m, int64_t k, int64_t n)
{
    gemm_f32(a, b, c, m, k, n);
}

void kb_compute_matmul_f64(const double *a, const double *b, double *c, int64_t m, int64_t k, int64_t n)
{
    gemm_f64(a, b, c, m, k, n);
}
