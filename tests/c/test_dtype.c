/* Element types (src/mem/dtype.h): names, sizes, exact f16/bf16 conversions
 * checked against an independent reference, and the load/store casts.
 *
 * The reference rounds a float x to p significant bits with exponent floor
 * emin by scaling: q = rint(x / ulp) in the default round-to-nearest-even
 * mode; x / ulp and q * ulp are exact in double, so it shares no code or
 * bit tricks with dtype.c. */
#include "mem/dtype.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

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

/* Nearest value with p significant bits, exponent >= emin, magnitude at most
 * maxfin (beyond it: infinity); ties to even. x is finite. */
static double ref_round(float x, int p, int emin, double maxfin)
{
    if (x == 0.0f)
        return x;
    int k;
    frexp(x, &k); /* |x| = m * 2^k, m in [0.5, 1): exponent is k - 1 */
    int e = k - 1 < emin ? emin : k - 1;
    double ulp = ldexp(1.0, e - (p - 1));
    double r = rint((double)x / ulp) * ulp;
    if (fabs(r) > maxfin)
        return copysign(INFINITY, x);
    return r;
}

static double ref_f16(float x) { return ref_round(x, 11, -14, 65504.0); }
static double ref_bf16(float x) { return ref_round(x, 8, -126, ldexp(255.0, 120)); } /* (2 - 2^-7) * 2^127 */

static void check_f16(float x)
{
    double got = kb_f16_to_f32(kb_f32_to_f16(x)), want = ref_f16(x);
    if (got != want || signbit(got) != signbit(want))
        fail_msg("f16(%a = 0x%08x): got %a, want %a", (double)x, bits_of(x), got, want);
}

static void check_bf16(float x)
{
    double got = kb_bf16_to_f32(kb_f32_to_bf16(x)), want = ref_bf16(x);
    if (got != want || signbit(got) != signbit(want))
        fail_msg("bf16(%a = 0x%08x): got %a, want %a", (double)x, bits_of(x), got, want);
}

/* ---- names and sizes ---- */

static void test_every_name_parses_back_to_its_dtype(void **state)
{
    (void)state;
    static const char *const names[] = {"f32", "f16", "bf16", "i32", "i16", "i8", "u8", "bool"};
    static const size_t sizes[] = {4, 2, 2, 4, 2, 1, 1, 1};
    for (int t = 0; t < KB_NDTYPES; t++) {
        assert_string_equal(kb_dtype_name((kb_dtype)t), names[t]);
        assert_int_equal(kb_dtype_size((kb_dtype)t), sizes[t]);
        kb_dtype got = KB_NDTYPES;
        assert_true(kb_dtype_parse(names[t], &got));
        assert_int_equal(got, t);
    }
    assert_true(kb_dtype_is_float(KB_BF16));
    assert_false(kb_dtype_is_float(KB_I32));
}

static void test_torch_aliases_parse_and_unknown_names_do_not(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        kb_dtype t;
    } aliases[] = {{"float32", KB_F32}, {"float16", KB_F16}, {"bfloat16", KB_BF16}, {"int32", KB_I32},
                   {"int16", KB_I16},   {"int8", KB_I8},     {"uint8", KB_U8}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
        kb_dtype got = KB_NDTYPES;
        assert_true(kb_dtype_parse(aliases[i].name, &got));
        assert_int_equal(got, aliases[i].t);
    }
    kb_dtype t = KB_U8;
    assert_false(kb_dtype_parse("f64", &t));
    assert_false(kb_dtype_parse("int64", &t));
    assert_false(kb_dtype_parse("", &t));
    assert_int_equal(t, KB_U8); /* a failed parse leaves *out alone */
    assert_string_equal(kb_dtype_name(KB_NDTYPES), "?");
    assert_int_equal(kb_dtype_size(KB_NDTYPES), 0);
}

/* ---- f16 ---- */

static void test_every_f16_pattern_survives_f32_and_back(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = kb_f16_to_f32((uint16_t)h);
        uint16_t back = kb_f32_to_f16(f);
        if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu)) { /* NaN: stays NaN, keeps its sign */
            assert_true(isnan(f));
            assert_int_equal(signbit(f) != 0, (h & 0x8000u) != 0);
            assert_int_equal(back & 0x7c00u, 0x7c00u);
            assert_true(back & 0x200u); /* quiet */
            assert_int_equal(back & 0x8000u, h & 0x8000u);
        } else if (back != h) {
            fail_msg("f16 0x%04x -> %a -> 0x%04x", h, (double)f, back);
        }
    }
}

static void test_f16_subnormals_are_exact_multiples_of_2_pow_minus_24(void **state)
{
    (void)state;
    for (uint32_t m = 0; m < 1024; m++) {
        assert_true(kb_f16_to_f32((uint16_t)m) == (float)m * 0x1p-24f);
        assert_true(kb_f16_to_f32((uint16_t)(0x8000u | m)) == -(float)m * 0x1p-24f);
    }
}

static void test_f16_named_values(void **state)
{
    (void)state;
    assert_int_equal(kb_f32_to_f16(65504.0f), 0x7bff);             /* largest finite */
    assert_int_equal(kb_f32_to_f16(65519.996f), 0x7bff);           /* below the tie */
    assert_int_equal(kb_f32_to_f16(65520.0f), 0x7c00);             /* tie with 2^16: even is inf */
    assert_int_equal(kb_f32_to_f16(-65520.0f), 0xfc00);
    assert_int_equal(kb_f32_to_f16(1e30f), 0x7c00);
    assert_int_equal(kb_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(kb_f32_to_f16(-INFINITY), 0xfc00);
    assert_int_equal(kb_f32_to_f16(0x1p-24f), 0x0001);             /* smallest subnormal */
    assert_int_equal(kb_f32_to_f16(0x1p-25f), 0x0000);             /* half a unit: ties to even 0 */
    assert_int_equal(kb_f32_to_f16(-0x1p-25f), 0x8000);            /* ... keeping the sign */
    assert_int_equal(kb_f32_to_f16(3 * 0x1p-26f), 0x0001);         /* 0.75 unit rounds up */
    assert_int_equal(kb_f32_to_f16(3 * 0x1p-25f), 0x0002);         /* 1.5 units ties to even 2 */
    assert_int_equal(kb_f32_to_f16(0x1.ffcp-15f), 0x0400);         /* 1023.5 units: even is 2^-14 */
    assert_int_equal(kb_f32_to_f16(0x1p-14f), 0x0400);             /* smallest normal */
    assert_int_equal(kb_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);      /* tie: even is 1.0 */
    assert_int_equal(kb_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);  /* tie: even is 1 + 2^-9 */
    assert_int_equal(kb_f32_to_f16(1.0f + 0x1p-11f + 0x1p-23f), 0x3c01); /* just above the tie */
    assert_int_equal(kb_f32_to_f16(0.0f), 0x0000);
    assert_int_equal(kb_f32_to_f16(-0.0f), 0x8000);
    assert_true(signbit(kb_f16_to_f32(0x8000)));
    assert_true(kb_f16_to_f32(0x7bff) == 65504.0f);
    assert_true(kb_f16_to_f32(0x3555) == 0x1.554p-2f);
}

static void test_f16_ties_and_their_neighbours_match_the_reference(void **state)
{
    (void)state;
    /* Every midpoint between adjacent finite f16 values (including the one
     * between 65504 and 2^16), and the f32 values either side of it. */
    for (uint32_t h = 0; h < 0x7bff + 1; h++) {
        double lo = kb_f16_to_f32((uint16_t)h);
        double hi = h == 0x7bff ? 65536.0 : kb_f16_to_f32((uint16_t)(h + 1));
        float mid = (float)((lo + hi) / 2); /* exact: 12 significant bits */
        for (int s = 0; s < 2; s++) {
            float m = s ? -mid : mid;
            check_f16(m);
            check_f16(nextafterf(m, 0.0f));
            check_f16(nextafterf(m, s ? -INFINITY : INFINITY));
        }
    }
}

static void test_f16_matches_the_reference_across_all_f32_exponents(void **state)
{
    (void)state;
    for (uint64_t u = 0; u < UINT64_C(0x100000000); u += 4099) { /* ~1M patterns, both signs */
        float f = float_of((uint32_t)u);
        if (isnan(f))
            assert_true(isnan(kb_f16_to_f32(kb_f32_to_f16(f))));
        else if (!isinf(f))
            check_f16(f);
    }
}

static void test_f32_nans_become_quiet_f16_nans_with_their_sign(void **state)
{
    (void)state;
    static const uint32_t nans[] = {0x7fc00000u, 0x7f800001u, 0x7fbfffffu, 0x7f802000u,
                                    0xffc00000u, 0xff800001u, 0xffffffffu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        uint16_t h = kb_f32_to_f16(float_of(nans[i]));
        assert_int_equal(h & 0x7e00u, 0x7e00u); /* exponent all ones, quiet bit set */
        assert_int_equal(h >> 15, nans[i] >> 31);
    }
}

/* ---- bf16 ---- */

static void test_every_bf16_pattern_survives_f32_and_back(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = kb_bf16_to_f32((uint16_t)h);
        assert_int_equal(bits_of(f), h << 16); /* widening is exact, bit for bit */
        uint16_t back = kb_f32_to_bf16(f);
        if ((h & 0x7f80u) == 0x7f80u && (h & 0x7fu)) { /* NaN: quiet, same sign */
            assert_int_equal(back & 0x7fc0u, 0x7fc0u);
            assert_int_equal(back & 0x8000u, h & 0x8000u);
        } else if (back != h) {
            fail_msg("bf16 0x%04x -> %a -> 0x%04x", h, (double)f, back);
        }
    }
}

static void test_bf16_named_values(void **state)
{
    (void)state;
    assert_int_equal(kb_f32_to_bf16(1.0f), 0x3f80);
    assert_int_equal(kb_f32_to_bf16(float_of(0x3f808000u)), 0x3f80); /* tie: even is 0x3f80 */
    assert_int_equal(kb_f32_to_bf16(float_of(0x3f818000u)), 0x3f82); /* tie: even is 0x3f82 */
    assert_int_equal(kb_f32_to_bf16(float_of(0x3f808001u)), 0x3f81); /* above the tie */
    assert_int_equal(kb_f32_to_bf16(float_of(0x3f807fffu)), 0x3f80); /* below the tie */
    /* FLT_MAX lies above the midpoint of 0x7f7f and 2^128: RNE gives inf. */
    assert_int_equal(kb_f32_to_bf16(float_of(0x7f7fffffu)), 0x7f80);
    assert_int_equal(kb_f32_to_bf16(float_of(0x7f7f7fffu)), 0x7f7f); /* largest value that stays finite */
    assert_int_equal(kb_f32_to_bf16(float_of(0xff7f8000u)), 0xff80); /* tie with -2^128: even is -inf */
    assert_int_equal(kb_f32_to_bf16(float_of(0x00000001u)), 0x0000); /* below half a bf16 subnormal unit */
    assert_int_equal(kb_f32_to_bf16(float_of(0x00008000u)), 0x0000); /* half a unit: ties to even 0 */
    assert_int_equal(kb_f32_to_bf16(float_of(0x00018000u)), 0x0002); /* 1.5 units: ties to even 2 */
    assert_int_equal(kb_f32_to_bf16(float_of(0x007fffffu)), 0x0080); /* carries into the smallest normal */
    assert_int_equal(kb_f32_to_bf16(-0.0f), 0x8000);
    assert_int_equal(kb_f32_to_bf16(INFINITY), 0x7f80);
    assert_int_equal(kb_f32_to_bf16(-INFINITY), 0xff80);
    assert_true(kb_bf16_to_f32(0x0001) == 0x1p-133f); /* smallest subnormal */
    uint16_t n = kb_f32_to_bf16(float_of(0xff800001u)); /* signalling NaN, payload only in low bits */
    assert_int_equal(n & 0xffc0u, 0xffc0u);
}

static void test_bf16_ties_and_sweep_match_the_reference(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 0x7f80; h++) /* every finite midpoint and its neighbours, both signs */
        for (uint32_t s = 0; s < 2; s++) {
            uint32_t mid = (s << 31) | (h << 16) | 0x8000u;
            check_bf16(float_of(mid));
            check_bf16(float_of(mid - 1));
            check_bf16(float_of(mid + 1));
        }
    for (uint64_t u = 0; u < UINT64_C(0x100000000); u += 4099) {
        float f = float_of((uint32_t)u);
        if (!isnan(f) && !isinf(f))
            check_bf16(f);
    }
}

/* ---- load and store ---- */

static double round_trip(kb_dtype t, double v)
{
    unsigned char buf[8 + 1];
    memset(buf, 0xa5, sizeof buf);
    kb_dtype_store(t, buf + 1, v); /* unaligned on purpose */
    for (size_t i = 1 + kb_dtype_size(t); i < sizeof buf; i++)
        assert_int_equal(buf[i], 0xa5); /* writes exactly one element */
    assert_int_equal(buf[0], 0xa5);
    return kb_dtype_load(t, buf + 1);
}

static void test_float_stores_round_to_nearest_even(void **state)
{
    (void)state;
    assert_true(round_trip(KB_F32, 0.1) == (double)0.1f);
    assert_true(round_trip(KB_F32, 1e39) == INFINITY);
    assert_true(round_trip(KB_F16, 65504.0) == 65504.0);
    assert_true(round_trip(KB_F16, 70000.0) == INFINITY);
    assert_true(round_trip(KB_F16, -0x1p-24) == -0x1p-24);
    assert_true(round_trip(KB_F16, 1.0 + 0x1p-11) == 1.0);
    assert_true(round_trip(KB_F16, 0.1) == 0x1.998p-4);
    assert_true(round_trip(KB_BF16, 0.1) == 0x1.9ap-4);
    assert_true(round_trip(KB_BF16, 3.0) == 3.0);
    assert_true(signbit(round_trip(KB_F16, -0.0)));
    assert_true(signbit(round_trip(KB_BF16, -0.0)));
    assert_true(isnan(round_trip(KB_F32, NAN)));
    assert_true(isnan(round_trip(KB_F16, NAN)));
    assert_true(isnan(round_trip(KB_BF16, -NAN)));
}

/* A double just above an f16/bf16 tie must round up, even though its
 * nearest f32 is the tie itself (no double rounding through f32). */
static void test_float_stores_round_doubles_once(void **state)
{
    (void)state;
    assert_true(round_trip(KB_F16, 1.0 + 0x1p-11 + 0x1p-40) == 1.0 + 0x1p-10);
    assert_true(round_trip(KB_F16, 1.0 + 0x1p-11 - 0x1p-40) == 1.0);
    assert_true(round_trip(KB_F16, -(0x1p-25 + 0x1p-60)) == -0x1p-24);
    assert_true(round_trip(KB_F16, 65520.0 - 0x1p-30) == 65504.0);
    assert_true(round_trip(KB_BF16, 1.0 + 0x1p-8 + 0x1p-40) == 1.0 + 0x1p-7);
    assert_true(round_trip(KB_BF16, 1.0 + 0x1p-8 - 0x1p-40) == 1.0);
    assert_true(round_trip(KB_BF16, 0x1.ffp127 + 0x1p100) == INFINITY); /* above the tie of 0x1.fep127 and 2^128 */
    assert_true(round_trip(KB_BF16, 0x1.ffp127 - 0x1p100) == 0x1.fep127);
    assert_true(round_trip(KB_BF16, 1e300) == INFINITY);
    assert_true(round_trip(KB_BF16, 0x1p-134 + 0x1p-180) == 0x1p-133); /* above half a subnormal unit */
    assert_true(round_trip(KB_F16, 1e-300) == 0.0);
}

/* Integer stores follow a torch float->int cast on x86: truncate toward
 * zero, then keep the low bits (wrap modulo 2^bits) rather than saturate.
 * NaN and +-inf store 0 (C leaves them undefined; we pick 0). */
static void test_integer_stores_truncate_toward_zero_and_wrap(void **state)
{
    (void)state;
    assert_true(round_trip(KB_I32, 2.9) == 2);
    assert_true(round_trip(KB_I32, -2.9) == -2);
    assert_true(round_trip(KB_I32, 2147483647.0) == 2147483647);
    assert_true(round_trip(KB_I32, 2147483648.0) == -2147483648.0); /* 2^31 wraps to INT32_MIN */
    assert_true(round_trip(KB_I32, -2147483649.0) == 2147483647);   /* -2^31 - 1 + 2^32 */
    assert_true(round_trip(KB_I32, 4294967297.0) == 1);             /* 2^32 + 1 */
    assert_true(round_trip(KB_I32, 1e20) == 1661992960);            /* 2^20 * (5^20 mod 2^12) */
    assert_true(round_trip(KB_I16, 32768.0) == -32768);
    assert_true(round_trip(KB_I16, 65535.9) == -1);
    assert_true(round_trip(KB_I8, 130.7) == -126); /* 130 - 256 */
    assert_true(round_trip(KB_I8, -129.0) == 127);
    assert_true(round_trip(KB_I8, -0.99) == 0);
    assert_true(round_trip(KB_U8, 255.9) == 255);
    assert_true(round_trip(KB_U8, 256.0) == 0);
    assert_true(round_trip(KB_U8, -1.0) == 255);
    assert_true(round_trip(KB_U8, -0.5) == 0);
    for (int t = KB_I32; t <= KB_U8; t++) {
        assert_true(round_trip((kb_dtype)t, NAN) == 0);
        assert_true(round_trip((kb_dtype)t, INFINITY) == 0);
        assert_true(round_trip((kb_dtype)t, -INFINITY) == 0);
    }
}

static void test_bool_stores_nonzero_as_one(void **state)
{
    (void)state;
    assert_true(round_trip(KB_BOOL, 0.5) == 1);
    assert_true(round_trip(KB_BOOL, -3.0) == 1);
    assert_true(round_trip(KB_BOOL, NAN) == 1); /* NaN != 0, as bool(nan) in torch */
    assert_true(round_trip(KB_BOOL, 0.0) == 0);
    assert_true(round_trip(KB_BOOL, -0.0) == 0);
    unsigned char b = 2;
    assert_true(kb_dtype_load(KB_BOOL, &b) == 1); /* any non-zero byte loads as true */
}

static void test_loads_read_host_byte_order(void **state)
{
    (void)state;
    /* Elements are stored little-endian (the host order of every supported
     * platform); these byte images are what HBM holds. */
    const unsigned char i32[] = {0xfe, 0xff, 0xff, 0xff}, i16[] = {0x00, 0x80};
    const unsigned char f16[] = {0x00, 0x3c}, bf16[] = {0x80, 0xbf}, f32[] = {0x00, 0x00, 0x20, 0x40};
    const unsigned char i8 = 0x80, u8 = 0x80;
    assert_true(kb_dtype_load(KB_I32, i32) == -2);
    assert_true(kb_dtype_load(KB_I16, i16) == -32768);
    assert_true(kb_dtype_load(KB_F16, f16) == 1.0);
    assert_true(kb_dtype_load(KB_BF16, bf16) == -1.0);
    assert_true(kb_dtype_load(KB_F32, f32) == 2.5);
    assert_true(kb_dtype_load(KB_I8, &i8) == -128);
    assert_true(kb_dtype_load(KB_U8, &u8) == 128);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_name_parses_back_to_its_dtype),
        cmocka_unit_test(test_torch_aliases_parse_and_unknown_names_do_not),
        cmocka_unit_test(test_every_f16_pattern_survives_f32_and_back),
        cmocka_unit_test(test_f16_subnormals_are_exact_multiples_of_2_pow_minus_24),
        cmocka_unit_test(test_f16_named_values),
        cmocka_unit_test(test_f16_ties_and_their_neighbours_match_the_reference),
        cmocka_unit_test(test_f16_matches_the_reference_across_all_f32_exponents),
        cmocka_unit_test(test_f32_nans_become_quiet_f16_nans_with_their_sign),
        cmocka_unit_test(test_every_bf16_pattern_survives_f32_and_back),
        cmocka_unit_test(test_bf16_named_values),
        cmocka_unit_test(test_bf16_ties_and_sweep_match_the_reference),
        cmocka_unit_test(test_float_stores_round_to_nearest_even),
        cmocka_unit_test(test_float_stores_round_doubles_once),
        cmocka_unit_test(test_integer_stores_truncate_toward_zero_and_wrap),
        cmocka_unit_test(test_bool_stores_nonzero_as_one),
        cmocka_unit_test(test_loads_read_host_byte_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
