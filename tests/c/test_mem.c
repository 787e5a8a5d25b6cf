/* Memory contents and allocation (src/mem): dtype conversions, the sparse
 * memory store, first-fit allocators with checked frees. */
#include "mem/alloc.h"
#include "mem/dtype.h"
#include "mem/memstore.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- dtypes ---- */

static void test_every_f16_pattern_round_trips(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = kb_f16_to_f32((uint16_t)h);
        uint16_t back = kb_f32_to_f16(f);
        if (isnan(f))
            assert_true(isnan(kb_f16_to_f32(back)));
        else if (back != h)
            fail_msg("f16 0x%04x -> %g -> 0x%04x", h, (double)f, back);
    }
}

static void test_f16_rounding_and_specials(void **state)
{
    (void)state;
    assert_int_equal(kb_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(kb_f32_to_f16(65519.0f), 0x7bff);
    assert_int_equal(kb_f32_to_f16(65520.0f), 0x7c00); /* tie rounds to even: inf */
    assert_int_equal(kb_f32_to_f16(INFINITY), 0x7c00);
    assert_int_equal(kb_f32_to_f16(-INFINITY), 0xfc00);
    assert_true(isnan(kb_f16_to_f32(kb_f32_to_f16(NAN))));
    assert_int_equal(kb_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(kb_f32_to_f16(0x1p-24f), 0x0001);      /* smallest subnormal */
    assert_int_equal(kb_f32_to_f16(0x1p-25f), 0x0000);      /* tie to even: 0 */
    assert_int_equal(kb_f32_to_f16(0x1.8p-25f), 0x0001);    /* above the tie */
    assert_int_equal(kb_f32_to_f16(3 * 0x1p-25f), 0x0002);  /* 1.5 units ties to even 2 */
    assert_int_equal(kb_f32_to_f16(1.0f + 0x1p-11f), 0x3c00); /* tie to even: 1.0 */
    assert_int_equal(kb_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    assert_int_equal(kb_f32_to_f16(0x1p-14f), 0x0400);      /* smallest normal */
    assert_true(kb_f16_to_f32(0x03ff) == 1023 * 0x1p-24f);
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    assert_int_equal(kb_f32_to_bf16(1.0f), 0x3f80);
    float tie;
    uint32_t u = 0x3f808000u; /* exactly between 0x3f80 and 0x3f81 */
    memcpy(&tie, &u, 4);
    assert_int_equal(kb_f32_to_bf16(tie), 0x3f80);
    u = 0x3f818000u;
    memcpy(&tie, &u, 4);
    assert_int_equal(kb_f32_to_bf16(tie), 0x3f82);
    u = 0x7f7fffffu; /* FLT_MAX rounds up to inf */
    memcpy(&tie, &u, 4);
    assert_int_equal(kb_f32_to_bf16(tie), 0x7f80);
    assert_true(isnan(kb_bf16_to_f32(kb_f32_to_bf16(NAN))));
    assert_int_equal(kb_f32_to_bf16(-0.0f), 0x8000);
}

static void test_dtype_names_and_integer_stores(void **state)
{
    (void)state;
    kb_dtype t;
    assert_true(kb_dtype_parse("float16", &t) && t == KB_F16);
    assert_true(kb_dtype_parse("bf16", &t) && t == KB_BF16);
    assert_false(kb_dtype_parse("f64", &t));
    assert_string_equal(kb_dtype_name(KB_U8), "u8");
    assert_int_equal(kb_dtype_size(KB_I32), 4);
    unsigned char buf[4];
    kb_dtype_store(KB_I8, buf, 130.7); /* truncate, then wrap like a torch cast */
    assert_true(kb_dtype_load(KB_I8, buf) == -126);
    kb_dtype_store(KB_I32, buf, -2.9);
    assert_true(kb_dtype_load(KB_I32, buf) == -2);
    kb_dtype_store(KB_U8, buf, -1);
    assert_true(kb_dtype_load(KB_U8, buf) == 255);
    kb_dtype_store(KB_BOOL, buf, 0.5);
    assert_true(kb_dtype_load(KB_BOOL, buf) == 1);
    kb_dtype_store(KB_F16, buf, 1.0 + 0x1p-11);
    assert_true(kb_dtype_load(KB_F16, buf) == 1.0);
}

/* ---- memory store ---- */

static void test_store_reads_zero_where_unwritten_and_spans_pages(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    unsigned char out[16];
    memset(out, 0xaa, sizeof out);
    kb_memstore_read(m, 3, 12345, out, sizeof out);
    for (size_t i = 0; i < sizeof out; i++)
        assert_int_equal(out[i], 0);
    assert_int_equal(kb_memstore_resident(m), 0); /* reading allocates nothing */
    size_t n = 3 * KB_MEMSTORE_PAGE + 17;
    unsigned char *src = malloc(n), *dst = malloc(n + 2);
    for (size_t i = 0; i < n; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    kb_memstore_write(m, 3, KB_MEMSTORE_PAGE - 5, src, n);
    kb_memstore_read(m, 3, KB_MEMSTORE_PAGE - 6, dst, n + 2);
    assert_int_equal(dst[0], 0);
    assert_memory_equal(dst + 1, src, n);
    assert_int_equal(dst[n + 1], 0);
    /* another domain does not alias */
    kb_memstore_read(m, 4, KB_MEMSTORE_PAGE - 5, dst, 8);
    for (int i = 0; i < 8; i++)
        assert_int_equal(dst[i], 0);
    /* overlapping write */
    kb_memstore_write(m, 3, KB_MEMSTORE_PAGE, "xyz", 3);
    kb_memstore_read(m, 3, KB_MEMSTORE_PAGE - 1, dst, 5);
    assert_int_equal(dst[0], src[4]);
    assert_memory_equal(dst + 1, "xyz", 3);
    free(src);
    free(dst);
    kb_memstore_free(m);
}

static void test_store_memory_follows_bytes_written(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    kb_memstore_write(m, 0, UINT64_C(1) << 50, "a", 1);
    kb_memstore_write(m, 9, UINT64_C(1) << 40, "b", 1);
    assert_int_equal(kb_memstore_resident(m), 2 * KB_MEMSTORE_PAGE);
    for (uint64_t p = 0; p < 1000; p++) /* many pages: the table grows */
        kb_memstore_write(m, 1, p * KB_MEMSTORE_PAGE * 3, &p, sizeof p);
    for (uint64_t p = 0; p < 1000; p++) {
        uint64_t v = 0;
        kb_memstore_read(m, 1, p * KB_MEMSTORE_PAGE * 3, &v, sizeof v);
        assert_int_equal(v, p);
    }
    char c;
    kb_memstore_read(m, 0, UINT64_C(1) << 50, &c, 1);
    assert_int_equal(c, 'a');
    kb_memstore_free(m);
}

/* ---- allocators ---- */

static uint64_t must_alloc(kb_alloc *a, uint64_t n, uint64_t align)
{
    uint64_t off;
    char *err = NULL;
    if (!kb_alloc_alloc(a, n, align, &off, &err))
        fail_msg("alloc %llu: %s", (unsigned long long)n, err);
    return off;
}

static void test_first_fit_reuses_the_lowest_hole(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1000, 1);
    uint64_t x = must_alloc(&a, 100, 1), y = must_alloc(&a, 100, 1), z = must_alloc(&a, 100, 1);
    assert_int_equal(x, 0);
    assert_int_equal(y, 100);
    assert_int_equal(z, 200);
    char *err = NULL;
    assert_true(kb_alloc_free(&a, y, &err));
    assert_int_equal(must_alloc(&a, 50, 1), 100); /* the hole, not the tail */
    assert_int_equal(must_alloc(&a, 60, 1), 300); /* 50 left in the hole: too small */
    assert_int_equal(must_alloc(&a, 50, 1), 150);
    kb_alloc_fini(&a);
}

static void test_coalescing_returns_to_pristine_in_any_order(void **state)
{
    (void)state;
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int k = 0; k < 6; k++) {
        kb_alloc a;
        kb_alloc_init(&a, 4096, 300, 1);
        uint64_t b[3];
        for (int i = 0; i < 3; i++)
            b[i] = must_alloc(&a, 100, 1);
        assert_false(kb_alloc_is_pristine(&a));
        char *err = NULL;
        for (int i = 0; i < 3; i++)
            assert_true(kb_alloc_free(&a, b[orders[k][i]], &err));
        assert_true(kb_alloc_is_pristine(&a));
        assert_int_equal(a.nfree, 1);
        kb_alloc_fini(&a);
    }
}

static void test_alignment_and_exhaustion_message(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1024, 1);
    must_alloc(&a, 10, 1);
    uint64_t x = must_alloc(&a, 100, 256);
    assert_int_equal(x, 256);
    assert_int_equal(must_alloc(&a, 10, 1), 10); /* the alignment pad stays free */
    uint64_t off;
    char *err = NULL;
    assert_false(kb_alloc_alloc(&a, 2000, 1, &off, &err));
    assert_string_equal(err, "out of memory: 2000 bytes requested (alignment 1), largest free block "
                             "668 bytes, 904 of 1024 bytes free");
    free(err);
    assert_false(kb_alloc_alloc(&a, 8, 3, &off, &err));
    assert_string_equal(err, "alignment 3 is not a power of two");
    free(err);
    assert_false(kb_alloc_alloc(&a, 0, 1, &off, &err));
    free(err);
    kb_alloc_fini(&a);
}

static void test_bad_frees_are_errors_and_change_nothing(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1000, 1);
    uint64_t x = must_alloc(&a, 100, 1);
    char *err = NULL;
    assert_false(kb_alloc_free(&a, 50, &err));
    assert_string_equal(err, "free of 0x32: inside the allocation at 0x0 (free its start)");
    free(err);
    assert_false(kb_alloc_free(&a, 500, &err));
    assert_string_equal(err, "free of 0x1f4: no allocation starts there (never allocated, or freed already)");
    free(err);
    assert_int_equal(kb_alloc_free_bytes(&a), 900);
    assert_true(kb_alloc_free(&a, x, &err));
    assert_false(kb_alloc_free(&a, x, &err)); /* double free */
    assert_non_null(strstr(err, "no allocation starts there"));
    free(err);
    assert_true(kb_alloc_is_pristine(&a));
    kb_alloc_fini(&a);
}

static void test_page_granule_rounds_sizes_and_aligns(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, UINT64_C(0x100000000), UINT64_C(1) << 30, 4096);
    uint64_t x = must_alloc(&a, 1, 1), y = must_alloc(&a, 4097, 1);
    assert_int_equal(x, UINT64_C(0x100000000));
    assert_int_equal(y, UINT64_C(0x100001000));
    assert_int_equal(kb_alloc_free_bytes(&a), (UINT64_C(1) << 30) - 3 * 4096);
    kb_alloc_fini(&a);
}

/* Random alloc/free against a reference of live blocks; invariants each step. */
static void test_random_stress_keeps_invariants(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1 << 20, 1);
    uint64_t live[256], sizes[256];
    int n = 0;
    uint64_t seed = 12345;
    for (int step = 0; step < 20000; step++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = seed >> 33;
        if (n < 256 && (r & 1)) {
            uint64_t sz = 1 + (r >> 1) % 8000, off;
            char *err = NULL;
            if (kb_alloc_alloc(&a, sz, 1, &off, &err)) {
                for (int i = 0; i < n; i++) /* no overlap with any live block */
                    assert_true(off + sz <= live[i] || live[i] + sizes[i] <= off);
                live[n] = off;
                sizes[n++] = sz;
            } else {
                free(err);
            }
        } else if (n > 0) {
            int i = (int)((r >> 1) % (uint64_t)n);
            char *err = NULL;
            assert_true(kb_alloc_free(&a, live[i], &err));
            live[i] = live[--n];
            sizes[i] = sizes[n];
        }
        uint64_t used = 0;
        for (int i = 0; i < n; i++)
            used += sizes[i];
        assert_int_equal(a.used, used);
        for (size_t i = 0; i + 1 < a.nfree; i++) /* sorted, non-overlapping, non-adjacent */
            assert_true(a.free[i].start + a.free[i].size < a.free[i + 1].start);
    }
    char *err = NULL;
    while (n > 0)
        assert_true(kb_alloc_free(&a, live[--n], &err));
    assert_true(kb_alloc_is_pristine(&a));
    kb_alloc_fini(&a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_f16_pattern_round_trips),
        cmocka_unit_test(test_f16_rounding_and_specials),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_dtype_names_and_integer_stores),
        cmocka_unit_test(test_store_reads_zero_where_unwritten_and_spans_pages),
        cmocka_unit_test(test_store_memory_follows_bytes_written),
        cmocka_unit_test(test_first_fit_reuses_the_lowest_hole),
        cmocka_unit_test(test_coalescing_returns_to_pristine_in_any_order),
        cmocka_unit_test(test_alignment_and_exhaustion_message),
        cmocka_unit_test(test_bad_frees_are_errors_and_change_nothing),
        cmocka_unit_test(test_page_granule_rounds_sizes_and_aligns),
        cmocka_unit_test(test_random_stress_keeps_invariants),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
