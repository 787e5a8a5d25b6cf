/* Digests of what the arithmetic engine (src/tensor/engine.h) computes on
 * fixed inputs, one "group digest" line per group of results. Not a ctest
 * executable of its own: tests/c/engine_flags.sh builds it with several
 * compilers and optimisation levels and requires the same lines from each
 * (docs/decisions.md, "The device's arithmetic").
 *
 * The inputs spread over 40 binades with random signs, so the order of
 * additions, a fused multiply-add or a wider intermediate changes
 * results. Each group hashes the doubles the engine returns, and apart
 * the same values stored as f32, f16 and bf16. */
#include "tensor/engine.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* FNV-1a over bytes. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * UINT64_C(1099511628211);
    return h;
}

static uint64_t rng = UINT64_C(0x9E3779B97F4A7C15);
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* A float in +-[2^-20, 2^20), its 24 bits random. */
static float spread(void)
{
    uint64_t r = next();
    float m = 1.0f + (float)(r & 0x7fffff) * 0x1p-23f;
    float v = ldexpf(m, (int)((r >> 23) % 40) - 20);
    return (r >> 63) ? -v : v;
}

/* "group D S": D hashes the doubles, S the same values stored in each
 * float dtype (what memory holds). */
static void report(const char *group, const double *y, int64_t n)
{
    uint64_t d = fnv(UINT64_C(14695981039346656037), y, (size_t)n * sizeof *y), s = UINT64_C(14695981039346656037);
    static const kb_dtype types[] = {KB_F32, KB_F16, KB_BF16};
    unsigned char *buf = malloc((size_t)n * 4 + 1);
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        kb_compute_store_run(types[t], buf, 1, y, n);
        s = fnv(s, buf, (size_t)n * kb_dtype_size(types[t]));
    }
    free(buf);
    printf("%s %016" PRIx64 " %016" PRIx64 "\n", group, d, s);
}

static void matmuls(void)
{
    static const int64_t shapes[][3] = {{1, 1, 1}, {4, 16, 8}, {5, 7, 9}, {37, 300, 45}, {64, 256, 64},
                                        {3, 4096, 17}, {8, 0, 8}, {128, 64, 130}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        int64_t m = shapes[s][0], k = shapes[s][1], n = shapes[s][2];
        float *a = malloc((size_t)(m * k + 1) * sizeof *a), *b = malloc((size_t)(k * n + 1) * sizeof *b);
        float *c = malloc((size_t)(m * n) * sizeof *c);
        double *da = malloc((size_t)(m * k + 1) * sizeof *da), *db = malloc((size_t)(k * n + 1) * sizeof *db);
        double *dc = malloc((size_t)(m * n) * sizeof *dc);
        for (int64_t i = 0; i < m * k; i++)
            da[i] = a[i] = spread();
        for (int64_t i = 0; i < k * n; i++)
            db[i] = b[i] = spread();
        char group[64];
        kb_compute_matmul_f32(a, b, c, m, k, n);
        for (int64_t i = 0; i < m * n; i++)
            dc[i] = c[i];
        snprintf(group, sizeof group, "matmul_f32_%" PRId64 "x%" PRId64 "x%" PRId64, m, k, n);
        report(group, dc, m * n);
        kb_compute_matmul_f64(da, db, dc, m, k, n);
        snprintf(group, sizeof group, "matmul_f64_%" PRId64 "x%" PRId64 "x%" PRId64, m, k, n);
        report(group, dc, m * n);
        free(a), free(b), free(c), free(da), free(db), free(dc);
    }
}

enum { N = 4099, OUTER = 3, LEN = 257, INNER = 5 };

static void ops(void)
{
    static double x[3][N], y[N];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < N; j++)
            x[i][j] = spread() * (double)spread(); /* a double-precision product, exact */
    x[0][0] = NAN, x[0][1] = INFINITY, x[0][2] = -0.0, x[1][3] = 0.0, x[0][4] = -1e300;
    const double *in[3] = {x[0], x[1], x[2]};
    double small[N]; /* inside every op's domain of interest: exp, tanh, gelu ... */
    for (int j = 0; j < N; j++)
        small[j] = x[0][j] * 0x1p-38;
    for (int op = 0; op < KB_NOPS; op++) {
        const kb_mop_info *info = kb_mop_info_of((kb_mop)op);
        char group[64];
        if (info->axis) {
            kb_compute_axis((kb_mop)op, small + 4, y, OUTER, LEN, INNER);
            snprintf(group, sizeof group, "axis_%s", info->name);
            report(group, y, op == KB_OP_SOFTMAX ? OUTER * LEN * INNER : OUTER * INNER);
            continue;
        }
        kb_compute_ewise((kb_mop)op, in, y, N);
        snprintf(group, sizeof group, "ewise_%s", info->name);
        report(group, y, N);
        const double *tiny[3] = {small, x[1], x[2]};
        kb_compute_ewise((kb_mop)op, tiny, y, N);
        snprintf(group, sizeof group, "ewise_%s_small", info->name);
        report(group, y, N);
    }
    /* softmax in pieces, as PE_MATH feeds it */
    kb_reducer r;
    kb_reducer_init(&r, KB_OP_MAX);
    kb_reducer_feed(&r, small, 1, 1000);
    kb_reducer_feed(&r, small + 1000, 1, 999);
    double mx = kb_reducer_result(&r, NULL);
    double sum = kb_compute_softmax_sum(kb_compute_softmax_sum(0.0, small, 1, 1000, mx), small + 1000, 1, 999, mx);
    kb_compute_softmax_apply(small, 1, 1999, mx, sum, y, 1);
    report("softmax_pieces", y, 1999);
}

int main(void)
{
    matmuls();
    ops();
    return 0;
}
