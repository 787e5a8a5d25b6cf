/* Random host tensors (random.h). */
#include "tensor/random.h"

#include "tensor/tensor_internal.h"

#include <math.h>
#include <string.h>

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static uint64_t next(uint64_t *s)
{
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
}

uint64_t kb_rng_next(kb_rng *g) { return next(g->s); }

void kb_rng_seed(kb_rng *g, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        uint64_t z = (x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        g->s[i] = z ^ (z >> 31);
    }
    g->seed = seed;
}

void kb_rng_state(const kb_rng *g, unsigned char *out)
{
    for (int i = 0; i < 32; i++)
        out[i] = (unsigned char)(g->s[i / 8] >> (8 * (i % 8)));
}

bool kb_rng_set_state(kb_rng *g, const unsigned char *b, size_t len, char **err)
{
    if (len != 32)
        return kb_tensor_fail(err, "set_state: a state is 32 bytes, got %zu", len);
    uint64_t s[4] = {0};
    for (int i = 0; i < 32; i++)
        s[i / 8] |= (uint64_t)b[i] << (8 * (i % 8));
    if (!(s[0] | s[1] | s[2] | s[3]))
        return kb_tensor_fail(err, "set_state: the all-zero state is not valid for xoshiro256**");
    memcpy(g->s, s, sizeof s);
    return true;
}

static bool check_dtype(const char *fn, kb_dtype dtype, char **err)
{
    if (!kb_dtype_is_float(dtype))
        return kb_tensor_fail(err, "%s: dtype %s is not a floating-point type", fn, kb_dtype_name(dtype));
    return true;
}

bool kb_tensor_rand(kb_rng *g, const kb_tensor *t, char **err)
{
    if (!check_dtype("rand", t->dtype, err))
        return false;
    uint64_t s[4];
    memcpy(s, g->s, sizeof s);
    int64_t n = t->numel;
    if (t->dtype == KB_F32) {
        float *p = t->data;
        for (int64_t i = 0; i < n; i++)
            p[i] = (float)(next(s) >> 40) * 0x1p-24f;
    } else if (t->dtype == KB_F16) {
        uint16_t tab[2048], *p = t->data;
        for (int k = 0; k < 2048; k++)
            tab[k] = kb_f32_to_f16((float)k * 0x1p-11f);
        for (int64_t i = 0; i < n; i++)
            p[i] = tab[next(s) >> 53];
    } else { /* bf16 */
        uint16_t tab[256], *p = t->data;
        for (int k = 0; k < 256; k++)
            tab[k] = kb_f32_to_bf16((float)k * 0x1p-8f);
        for (int64_t i = 0; i < n; i++)
            p[i] = tab[next(s) >> 56];
    }
    memcpy(g->s, s, sizeof s);
    return true;
}

bool kb_tensor_randn(kb_rng *g, const kb_tensor *t, char **err)
{
    if (!check_dtype("randn", t->dtype, err))
        return false;
    uint64_t s[4];
    memcpy(s, g->s, sizeof s);
    double buf[RUN]; /* RUN is even: pairs never straddle chunks */
    for (int64_t c = 0; c < t->numel; c += RUN) {
        int64_t m = t->numel - c < RUN ? t->numel - c : RUN;
        for (int64_t i = 0; i < m; i += 2) {
            double u, v, q;
            do {
                u = (double)(next(s) >> 11) * 0x1p-52 - 1.0;
                v = (double)(next(s) >> 11) * 0x1p-52 - 1.0;
                q = u * u + v * v;
            } while (q >= 1.0 || q == 0.0);
            double f = sqrt(-2.0 * log(q) / q);
            buf[i] = u * f;
            if (i + 1 < m)
                buf[i + 1] = v * f;
        }
        kb_compute_store_run(t->dtype, kb_tensor_eptr(t, c), 1, buf, m);
    }
    memcpy(g->s, s, sizeof s);
    return true;
}
