/* Typed element runs (engine.h): loads to double and stores from double,
 * with the dtype switch outside the loops. */
#include "tensor/engine.h"

void kb_compute_load_run(kb_dtype t, const void *p, int64_t stride, double *dst, int64_t n)
{
    if (stride == 0) {
        double v = kb_dtype_load(t, p);
        for (int64_t i = 0; i < n; i++)
            dst[i] = v;
        return;
    }
    switch (t) {
    case KB_F32: {
        const float *f = p;
        for (int64_t i = 0; i < n; i++)
            dst[i] = f[i * stride];
        break;
    }
    case KB_F16: {
        const uint16_t *h = p;
        for (int64_t i = 0; i < n; i++)
            dst[i] = kb_f16_to_f32(h[i * stride]);
        break;
    }
    case KB_BF16: {
        const uint16_t *h = p;
        for (int64_t i = 0; i < n; i++)
            dst[i] = kb_bf16_to_f32(h[i * stride]);
        break;
    }
    default: {
        const char *c = p;
        int64_t step = stride * (int64_t)kb_dtype_size(t);
        for (int64_t i = 0; i < n; i++)
            dst[i] = kb_dtype_load(t, c + i * step);
    }
    }
}

void kb_compute_store_run(kb_dtype t, void *p, int64_t stride, const double *src, int64_t n)
{
    switch (t) {
    case KB_F32: {
        float *f = p;
        for (int64_t i = 0; i < n; i++)
            f[i * stride] = (float)src[i];
        break;
    }
    case KB_F16: {
        uint16_t *h = p;
        for (int64_t i = 0; i < n; i++)
            h[i * stride] = kb_f32_to_f16((float)src[i]);
        break;
    }
    case KB_BF16: {
        uint16_t *h = p;
        for (int64_t i = 0; i < n; i++)
            h[i * stride] = kb_f32_to_bf16((float)src[i]);
        break;
    }
    default: {
        char *c = p;
        int64_t step = stride * (int64_t)kb_dtype_size(t);
        for (int64_t i = 0; i < n; i++)
            kb_dtype_store(t, c + i * step, src[i]);
    }
    }
}
