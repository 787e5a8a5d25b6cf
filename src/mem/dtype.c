/* Element types and their conversions. */
#include "mem/dtype.h"

#include <math.h>
#include <string.h>

static const char *const names[KB_NDTYPES] = {"f32", "f16", "bf16", "i32", "i16", "i8", "u8", "bool"};
static const char *const torch_names[KB_NDTYPES] = {"float32", "float16", "bfloat16", "int32",
                                                    "int16",   "int8",    "uint8",    "bool"};
static const size_t sizes[KB_NDTYPES] = {4, 2, 2, 4, 2, 1, 1, 1};

const char *kb_dtype_name(kb_dtype t) { return t < KB_NDTYPES ? names[t] : "?"; }
const char *kb_dtype_torch_name(kb_dtype t) { return t < KB_NDTYPES ? torch_names[t] : "?"; }
size_t kb_dtype_size(kb_dtype t) { return t < KB_NDTYPES ? sizes[t] : 0; }
bool kb_dtype_is_float(kb_dtype t) { return t == KB_F32 || t == KB_F16 || t == KB_BF16; }

bool kb_dtype_parse(const char *name, kb_dtype *out)
{
    /* torch's other names for some dtypes */
    static const struct {
        const char *name;
        kb_dtype t;
    } aliases[] = {{"float", KB_F32}, {"fp32", KB_F32}, {"half", KB_F16}, {"fp16", KB_F16},
                   {"int", KB_I32},   {"short", KB_I16}};
    for (int i = 0; i < KB_NDTYPES; i++)
        if (strcmp(name, names[i]) == 0 || strcmp(name, torch_names[i]) == 0) {
            *out = (kb_dtype)i;
            return true;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].name) == 0) {
            *out = aliases[i].t;
            return true;
        }
    return false;
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

uint16_t kb_f32_to_f16(float f)
{
    uint32_t x = bits_of(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or NaN (quiet, keep the top payload bits) */
        return (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    if (absx >= 0x477ff000u) /* >= 65520: rounds to inf */
        return (uint16_t)(sign | 0x7c00u);
    if (absx < 0x38800000u) { /* below the smallest normal f16 (2^-14): subnormal or zero */
        if (absx < 0x33000000u) /* < 2^-25: rounds to 0 (2^-25 itself ties to even 0) */
            return sign;
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(absx >> 23); /* 14 + (127 - exp) - 1 ... so that 2^-24 -> 1 */
        /* value = mant * 2^(e-150); f16 subnormal unit = 2^-24 -> q = mant * 2^(e-126) */
        uint32_t q = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
    /* normal: rebias exponent 127 -> 15, round the 13 dropped mantissa bits */
    uint32_t h = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* may carry into the exponent, up to inf: correct */
    return (uint16_t)(sign | h);
}

float kb_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0x1f)
        return float_of(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return float_of(sign);
        float v = (float)mant * 0x1p-24f; /* exact */
        return sign ? -v : v;
    }
    return float_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

uint16_t kb_f32_to_bf16(float f)
{
    uint32_t x = bits_of(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: quiet, keep sign */
        return (uint16_t)((x >> 16) | 0x40u);
    uint32_t rem = x & 0xffffu;
    uint32_t h = x >> 16;
    if (rem > 0x8000u || (rem == 0x8000u && (h & 1u)))
        h++; /* carries up to inf as RNE requires */
    return (uint16_t)h;
}

float kb_bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

double kb_dtype_load(kb_dtype t, const void *p)
{
    switch (t) {
    case KB_F32: {
        float f;
        memcpy(&f, p, 4);
        return f;
    }
    case KB_F16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return kb_f16_to_f32(h);
    }
    case KB_BF16: {
        uint16_t h;
        memcpy(&h, p, 2);
        return kb_bf16_to_f32(h);
    }
    case KB_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case KB_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case KB_I8: return *(const int8_t *)p;
    case KB_U8: return *(const uint8_t *)p;
    case KB_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
    default: return 0.0;
    }
}

/* Truncation toward zero, wrapped modulo 2^64 (then narrowed by the caller). */
static uint64_t wrap(double v)
{
    if (!isfinite(v))
        return 0;
    double t = trunc(v);
    if (fabs(t) < 9223372036854775808.0) /* 2^63: exact through int64 */
        return (uint64_t)(int64_t)t;
    double m = fmod(t, 18446744073709551616.0); /* |t| >= 2^63: a multiple of 2^11, exact */
    if (m < 0)
        m += 18446744073709551616.0;
    return m >= 9223372036854775808.0 ? (uint64_t)(m - 9223372036854775808.0) + (UINT64_C(1) << 63)
                                      : (uint64_t)m;
}

/* v rounded to f32 with round-to-odd: truncate, and if anything was lost
 * set the last bit. Rounding that result to nearest even at f16 or bf16
 * precision (at least 13 bits fewer) equals rounding v directly, so there
 * is no double rounding. */
static float f32_round_odd(double v)
{
    float f = (float)v;
    if (isnan(v) || (double)f == v)
        return f;
    if (fabs((double)f) > fabs(v))
        f = nextafterf(f, 0.0f); /* also brings inf back to FLT_MAX */
    return float_of(bits_of(f) | 1u);
}

void kb_dtype_store(kb_dtype t, void *p, double v)
{
    switch (t) {
    case KB_F32: {
        float f = (float)v;
        memcpy(p, &f, 4);
        break;
    }
    case KB_F16: {
        uint16_t h = kb_f32_to_f16(f32_round_odd(v));
        memcpy(p, &h, 2);
        break;
    }
    case KB_BF16: {
        uint16_t h = kb_f32_to_bf16(f32_round_odd(v));
        memcpy(p, &h, 2);
        break;
    }
    case KB_I32: {
        uint32_t u = (uint32_t)wrap(v);
        memcpy(p, &u, 4);
        break;
    }
    case KB_I16: {
        uint16_t u = (uint16_t)wrap(v);
        memcpy(p, &u, 2);
        break;
    }
    case KB_I8:
    case KB_U8: *(uint8_t *)p = (uint8_t)wrap(v); break;
    case KB_BOOL: *(uint8_t *)p = v != 0.0; break;
    default: break;
    }
}
