/* PE engine latency formulas (pe_model.h). */
#include "comp/pe/model.h"

#include <math.h>

kb_time kb_cycles_ps(double cycles, double clock_ghz)
{
    if (clock_ghz <= 0) /* a part whose implementation has no clock (not a builtin) */
        return 0;
    return (kb_time)llround(cycles * 1000.0 / clock_ghz);
}

kb_time kb_bw_ps(uint64_t nbytes, double bw_gbs)
{
    if (bw_gbs <= 0 || nbytes == 0)
        return 0;
    return (kb_time)ceil((double)nbytes * 1000.0 / bw_gbs - 1e-9);
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

double kb_gemm_cycles(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in)
{
    if (m <= 0 || k <= 0 || n <= 0)
        return 0;
    double c = (double)cdiv(m, g->rows) * (double)cdiv(n, g->cols) * (double)cdiv(k, g->depth);
    return kb_dtype_size(in) >= 4 ? c * g->f32_slowdown : c;
}

kb_time kb_gemm_ps(const kb_gemm_model *g, int64_t m, int64_t k, int64_t n, kb_dtype in)
{
    return g->overhead_ps + kb_cycles_ps(kb_gemm_cycles(g, m, k, n, in), g->clock_ghz);
}

double kb_math_cycles(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t)
{
    int64_t lanes = m->simd_bytes / (int64_t)kb_dtype_size(t);
    if (lanes < 1)
        lanes = 1;
    double vectors = (double)cdiv(elems > 0 ? elems : 0, lanes);
    const kb_mop_info *info = kb_mop_info_of(op);
    switch (info->cost) {
    case KB_COST_SIMPLE: return vectors;
    case KB_COST_TRANSCENDENTAL: return vectors * m->transcendental_cycles;
    case KB_COST_REDUCE: return vectors + ceil(log2((double)lanes)) * (double)outs;
    case KB_COST_SOFTMAX: return vectors * (3.0 + 2.0 * m->transcendental_cycles);
    }
    return vectors;
}

kb_time kb_math_ps(const kb_math_model *m, kb_mop op, int64_t elems, int64_t outs, kb_dtype t)
{
    return m->overhead_ps + kb_cycles_ps(kb_math_cycles(m, op, elems, outs, t), m->clock_ghz);
}
