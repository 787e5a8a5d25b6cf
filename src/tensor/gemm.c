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
 * doing exactly the sequence above; columns left over run one vector, then
 * one column at a time. GCC's and clang's vector types lower to whatever
 * SIMD the target has (SSE2 on any x86-64). */
#include "tensor/engine.h"

#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

enum { TILE_ROWS = 4, VEC_BYTES = 16 };

/* GEMM_TYPE(T, SUF): the product for element type T. Rows go by tiles of
 * TILE_ROWS (fewer at the bottom edge, one row at a time there); columns by
 * two vectors, then one, then single columns. Every kernel runs each
 * output element through the same order. */
#define GEMM_TYPE(T, SUF)                                                                                     \
    typedef T vec_##SUF __attribute__((vector_size(VEC_BYTES)));                                              \
    enum { LANES_##SUF = VEC_BYTES / sizeof(T), PANEL_##SUF = 2 * LANES_##SUF };                              \
                                                                                                              \
    static inline vec_##SUF load_##SUF(const T *p)                                                           \
    {                                                                                                         \
        vec_##SUF v;                                                                                          \
        memcpy(&v, p, sizeof v);                                                                              \
        return v;                                                                                             \
    }                                                                                                         \
                                                                                                              \
    /* TILE_ROWS rows x two vectors; b's rows ldb apart. A scalar times a                                     \
     * vector multiplies every lane. */                                                                       \
    static void tile2_##SUF(const T *restrict a, const T *restrict b, int64_t ldb, T *restrict c, int64_t k, \
                            int64_t n)                                                                        \
    {                                                                                                         \
        vec_##SUF acc[TILE_ROWS][2];                                                                          \
        for (int i = 0; i < TILE_ROWS; i++)                                                                   \
            acc[i][0] = acc[i][1] = (vec_##SUF){0};                                                           \
        for (int64_t p = 0; p < k; p++) {                                                                     \
            vec_##SUF b0 = load_##SUF(b + p * ldb), b1 = load_##SUF(b + p * ldb + LANES_##SUF);               \
            for (int i = 0; i < TILE_ROWS; i++) {                                                             \
                vec_##SUF prod0 = a[i * k + p] * b0, prod1 = a[i * k + p] * b1;                               \
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
    /* TILE_ROWS rows x one vector. */                                                                        \
    static void tile1_##SUF(const T *restrict a, const T *restrict b, T *restrict c, int64_t k, int64_t n)    \
    {                                                                                                         \
        vec_##SUF acc[TILE_ROWS];                                                                             \
        for (int i = 0; i < TILE_ROWS; i++)                                                                   \
            acc[i] = (vec_##SUF){0};                                                                          \
        for (int64_t p = 0; p < k; p++) {                                                                     \
            vec_##SUF b0 = load_##SUF(b + p * n);                                                             \
            for (int i = 0; i < TILE_ROWS; i++) {                                                             \
                vec_##SUF prod = a[i * k + p] * b0;                                                           \
                acc[i] += prod;                                                                               \
            }                                                                                                 \
        }                                                                                                     \
        for (int i = 0; i < TILE_ROWS; i++)                                                                   \
            memcpy(c + i * n, &acc[i], sizeof acc[i]);                                                        \
    }                                                                                                         \
                                                                                                              \
    /* TILE_ROWS rows x `cols` single columns: the rows' sums are                                             \
     * independent chains, so they overlap. */                                                               \
    static void columns_##SUF(const T *a, const T *b, T *c, int64_t k, int64_t n, int64_t cols)               \
    {                                                                                                         \
        for (int64_t j = 0; j < cols; j++) {                                                                  \
            T acc[TILE_ROWS] = {0};                                                                           \
            for (int64_t p = 0; p < k; p++)                                                                   \
                for (int i = 0; i < TILE_ROWS; i++) {                                                         \
                    T prod = a[i * k + p] * b[p * n + j];                                                     \
                    acc[i] += prod;                                                                           \
                }                                                                                             \
            for (int i = 0; i < TILE_ROWS; i++)                                                               \
                c[i * n + j] = acc[i];                                                                        \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    /* Fewer than TILE_ROWS rows, one at a time, up to PANEL columns. */                                      \
    static void rows_##SUF(const T *a, const T *b, T *c, int64_t k, int64_t n, int64_t rows, int64_t cols)    \
    {                                                                                                         \
        for (int64_t i = 0; i < rows; i++) {                                                                  \
            T acc[PANEL_##SUF] = {0};                                                                         \
            for (int64_t p = 0; p < k; p++)                                                                   \
                for (int64_t j = 0; j < cols; j++) {                                                          \
                    T prod = a[i * k + p] * b[p * n + j];                                                     \
                    acc[j] += prod;                                                                           \
                }                                                                                             \
            memcpy(c + i * n, acc, (size_t)cols * sizeof *acc);                                               \
        }                                                                                                     \
    }                                                                                                         \
                                                                                                              \
    /* A full tile's TILE_ROWS rows of a column panel of `cols` columns. */                                   \
    static void panel_rows_##SUF(const T *a, const T *b, const T *packed, T *c, int64_t k, int64_t n,         \
                                 int64_t cols)                                                                \
    {                                                                                                         \
        if (cols == PANEL_##SUF) {                                                                            \
            tile2_##SUF(a, packed ? packed : b, packed ? PANEL_##SUF : n, c, k, n);                           \
            return;                                                                                           \
        }                                                                                                     \
        int64_t j = 0;                                                                                        \
        if (cols >= LANES_##SUF) {                                                                            \
            tile1_##SUF(a, b, c, k, n);                                                                       \
            j = LANES_##SUF;                                                                                  \
        }                                                                                                     \
        columns_##SUF(a, b + j, c + j, k, n, cols - j);                                                       \
    }                                                                                                         \
                                                                                                              \
    /* Column panels outside, row tiles inside: b's panel (k x PANEL) stays                                   \
     * in cache while every row tile of a passes it. A full panel is first                                    \
     * copied to consecutive rows when the buffer can be had (rows n apart                                    \
     * fall into the same cache sets); without it the same values are read                                    \
     * where they are. */                                                                                     \
    static void gemm_##SUF(const T *a, const T *b, T *c, int64_t m, int64_t k, int64_t n)                     \
    {                                                                                                         \
        T *packed = m > TILE_ROWS && n > PANEL_##SUF ? malloc((size_t)k * sizeof(T[PANEL_##SUF]) + 1) : NULL; \
        for (int64_t j0 = 0; j0 < n; j0 += PANEL_##SUF) {                                                     \
            int64_t cols = n - j0 < PANEL_##SUF ? n - j0 : PANEL_##SUF;                                       \
            bool pack = packed && cols == PANEL_##SUF;                                                        \
            for (int64_t p = 0; pack && p < k; p++)                                                           \
                memcpy(packed + p * PANEL_##SUF, b + p * n + j0, sizeof(T[PANEL_##SUF]));                     \
            for (int64_t i0 = 0; i0 < m; i0 += TILE_ROWS) {                                                   \
                if (m - i0 >= TILE_ROWS)                                                                      \
                    panel_rows_##SUF(a + i0 * k, b + j0, pack ? packed : NULL, c + i0 * n + j0, k, n, cols);  \
                else                                                                                          \
                    rows_##SUF(a + i0 * k, b + j0, c + i0 * n + j0, k, n, m - i0, cols);                      \
            }                                                                                                 \
        }                                                                                                     \
        free(packed);                                                                                         \
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
