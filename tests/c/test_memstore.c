/* The sparse memory store (src/mem/memstore.h): zero where unwritten, page
 * spans, overlaps, domains that never alias, memory that follows the bytes
 * written even at 2^50, typed elements through dtype.h, and results that do
 * not depend on the order pages were created in. */
#include "mem/dtype.h"
#include "mem/memstore.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define PAGE ((uint64_t)KB_MEMSTORE_PAGE)
#define PA_TOP (UINT64_C(1) << 51) /* one past the largest physical address */

static unsigned char pattern(uint64_t domain, uint64_t addr)
{
    return (unsigned char)(addr * 131 + (addr >> 16) * 7 + domain * 29 + 1);
}

static void fill(unsigned char *p, size_t n, uint64_t domain, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(domain, addr + i);
}

static void assert_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            fail_msg("byte %zu is 0x%02x, want 0", i, p[i]);
}

static void test_unwritten_bytes_read_as_zero_and_reading_allocates_nothing(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    size_t n = 3 * KB_MEMSTORE_PAGE;
    unsigned char *out = malloc(n);
    memset(out, 0xaa, n);
    kb_memstore_read(m, 0, 0, out, n);
    assert_zero(out, n);
    memset(out, 0xaa, n);
    kb_memstore_read(m, UINT64_MAX, PA_TOP - 100, out, 100);
    assert_zero(out, 100);
    kb_memstore_read(m, 5, 123, out, 0); /* empty reads and writes are no-ops */
    kb_memstore_write(m, 5, 123, out, 0);
    assert_int_equal(kb_memstore_resident(m), 0);
    free(out);
    kb_memstore_free(m);
    kb_memstore_free(NULL);
}

static void test_a_write_spanning_pages_reads_back_with_zero_either_side(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    size_t n = 3 * KB_MEMSTORE_PAGE + 17; /* touches 5 pages: 5 bytes, 3 full, 12 bytes */
    uint64_t at = 7 * PAGE - 5;
    unsigned char *src = malloc(n), *dst = malloc(n + 2);
    fill(src, n, 1, at);
    kb_memstore_write(m, 1, at, src, n);
    assert_int_equal(kb_memstore_resident(m), 5 * PAGE);
    memset(dst, 0xaa, n + 2);
    kb_memstore_read(m, 1, at - 1, dst, n + 2);
    assert_int_equal(dst[0], 0);
    assert_memory_equal(dst + 1, src, n);
    assert_int_equal(dst[n + 1], 0);
    for (uint64_t a = at; a < at + n; a += 4093) { /* reads that start mid-write, one byte each */
        unsigned char c;
        kb_memstore_read(m, 1, a, &c, 1);
        assert_int_equal(c, src[a - at]);
    }
    free(src);
    free(dst);
    kb_memstore_free(m);
}

static void test_overlapping_writes_keep_the_latest_bytes(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    unsigned char a[100], b[40], out[120];
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    uint64_t base = PAGE - 50; /* both writes straddle a page boundary */
    kb_memstore_write(m, 0, base, a, sizeof a);
    kb_memstore_write(m, 0, base + 30, b, sizeof b);
    kb_memstore_read(m, 0, base - 10, out, sizeof out);
    /* [base-10, base) zero; [base, base+30) 'a'; [base+30, base+70) 'b';
     * [base+70, base+100) 'a'; [base+100, base+110) zero. */
    for (int i = 0; i < 120; i++) {
        int want = i < 10 ? 0 : i < 40 ? 'a' : i < 80 ? 'b' : i < 110 ? 'a' : 0;
        assert_int_equal(out[i], want);
    }
    kb_memstore_free(m);
}

static void test_domains_never_alias(void **state)
{
    (void)state;
    /* Domains that share low bits, or differ only in the top bit, with the
     * same address in each. */
    static const uint64_t domains[] = {0, 1, 2, UINT64_C(1) << 32, UINT64_C(1) << 63, UINT64_MAX};
    const size_t nd = sizeof domains / sizeof domains[0];
    kb_memstore *m = kb_memstore_new();
    for (size_t d = 0; d < nd; d++) {
        unsigned char v = (unsigned char)(d + 1);
        kb_memstore_write(m, domains[d], 3 * PAGE + 9, &v, 1);
    }
    assert_int_equal(kb_memstore_resident(m), nd * PAGE);
    for (size_t d = 0; d < nd; d++) {
        unsigned char v = 0;
        kb_memstore_read(m, domains[d], 3 * PAGE + 9, &v, 1);
        assert_int_equal(v, d + 1);
    }
    unsigned char v = 0xaa;
    kb_memstore_read(m, 3, 3 * PAGE + 9, &v, 1); /* an unused domain is still empty */
    assert_int_equal(v, 0);
    kb_memstore_free(m);
}

static void test_sparse_high_addresses_cost_one_page_each(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    kb_memstore_write(m, 0, UINT64_C(1) << 50, "x", 1);
    assert_int_equal(kb_memstore_resident(m), PAGE);
    kb_memstore_write(m, 0, PA_TOP - 1, "y", 1); /* the last byte of the address space */
    assert_int_equal(kb_memstore_resident(m), 2 * PAGE);
    kb_memstore_write(m, 0, (UINT64_C(1) << 50) + 1, "z", 1); /* same page: nothing new */
    assert_int_equal(kb_memstore_resident(m), 2 * PAGE);
    kb_memstore_write(m, 0, (UINT64_C(1) << 49) - 1, "pq", 2); /* straddles: two pages */
    assert_int_equal(kb_memstore_resident(m), 4 * PAGE);
    char s[3] = "";
    kb_memstore_read(m, 0, UINT64_C(1) << 50, s, 2);
    assert_memory_equal(s, "xz", 2);
    kb_memstore_read(m, 0, PA_TOP - 1, s, 1);
    assert_int_equal(s[0], 'y');
    kb_memstore_read(m, 0, (UINT64_C(1) << 49) - 1, s, 2);
    assert_memory_equal(s, "pq", 2);
    kb_memstore_free(m);
}

static void test_many_pages_across_domains_stay_readable_as_the_table_grows(void **state)
{
    (void)state;
    kb_memstore *m = kb_memstore_new();
    /* 8 domains x 600 pages spread over the address space: thousands of
     * entries force several rehashes and many probe collisions. */
    for (uint64_t d = 0; d < 8; d++)
        for (uint64_t p = 0; p < 600; p++) {
            uint64_t addr = (p * UINT64_C(0x9e3779b1) % (PA_TOP / PAGE)) * PAGE + (p % 8) * 8;
            uint64_t v = d << 32 | p;
            kb_memstore_write(m, d, addr, &v, sizeof v);
        }
    assert_int_equal(kb_memstore_resident(m), 8 * 600 * PAGE);
    for (uint64_t d = 0; d < 8; d++)
        for (uint64_t p = 0; p < 600; p++) {
            uint64_t addr = (p * UINT64_C(0x9e3779b1) % (PA_TOP / PAGE)) * PAGE + (p % 8) * 8;
            uint64_t v = 0;
            kb_memstore_read(m, d, addr, &v, sizeof v);
            assert_int_equal(v, d << 32 | p);
        }
    kb_memstore_free(m);
}

static void test_large_sequential_write_reads_back(void **state)
{
    (void)state;
    /* 32 MiB in 16 KiB chunks, the shape of a tensor upload (the 256 MiB
     * timing lives in docs/PERFORMANCE.md, not in a test). */
    const size_t total = 32u << 20, chunk = 16u << 10;
    const uint64_t base = UINT64_C(3) << 40;
    unsigned char *buf = malloc(chunk), *out = malloc(chunk);
    kb_memstore *m = kb_memstore_new();
    for (size_t off = 0; off < total; off += chunk) {
        fill(buf, chunk, 2, base + off);
        kb_memstore_write(m, 2, base + off, buf, chunk);
    }
    assert_int_equal(kb_memstore_resident(m), total);
    for (size_t off = 0; off < total; off += chunk) {
        fill(buf, chunk, 2, base + off);
        kb_memstore_read(m, 2, base + off, out, chunk);
        if (memcmp(buf, out, chunk) != 0)
            fail_msg("chunk at +0x%zx differs", off);
    }
    free(buf);
    free(out);
    kb_memstore_free(m);
}

/* Writes the same disjoint blocks in forward or reverse order. */
static kb_memstore *build(int reverse)
{
    kb_memstore *m = kb_memstore_new();
    unsigned char buf[300];
    for (int i = 0; i < 500; i++) {
        int k = reverse ? 499 - i : i;
        uint64_t domain = (uint64_t)k % 5, addr = (uint64_t)k * 37 * PAGE + PAGE - 150;
        fill(buf, sizeof buf, domain, addr);
        kb_memstore_write(m, domain, addr, buf, sizeof buf);
    }
    return m;
}

static void test_contents_do_not_depend_on_write_order(void **state)
{
    (void)state;
    kb_memstore *a = build(0), *b = build(1);
    assert_int_equal(kb_memstore_resident(a), kb_memstore_resident(b));
    unsigned char x[400], y[400];
    for (int k = 0; k < 500; k++) {
        uint64_t domain = (uint64_t)k % 5, addr = (uint64_t)k * 37 * PAGE + PAGE - 200;
        kb_memstore_read(a, domain, addr, x, sizeof x);
        kb_memstore_read(b, domain, addr, y, sizeof y);
        assert_memory_equal(x, y, sizeof x);
        assert_zero(x, 50);
        assert_int_equal(x[50], pattern(domain, addr + 50));
        assert_zero(x + 350, 50);
    }
    kb_memstore_free(a);
    kb_memstore_free(b);
}

static void test_typed_elements_round_trip_through_the_store(void **state)
{
    (void)state;
    /* Per dtype: encode with kb_dtype_store, write at an odd address that
     * straddles a page, read back and decode. Values are exact in every
     * dtype they are used with. */
    static const double vals[] = {0, 1, -2, 3.5, -0.25, 100, 7};
    const size_t nv = sizeof vals / sizeof vals[0];
    kb_memstore *m = kb_memstore_new();
    for (int t = 0; t < KB_NDTYPES; t++) {
        size_t es = kb_dtype_size((kb_dtype)t);
        unsigned char enc[sizeof vals / sizeof vals[0] * 4], dec[sizeof enc];
        for (size_t i = 0; i < nv; i++)
            kb_dtype_store((kb_dtype)t, enc + i * es, vals[i]);
        uint64_t addr = (uint64_t)(t + 1) * PAGE - 3;
        kb_memstore_write(m, 40, addr, enc, nv * es);
        kb_memstore_read(m, 40, addr, dec, nv * es);
        for (size_t i = 0; i < nv; i++) {
            double got = kb_dtype_load((kb_dtype)t, dec + i * es), want = vals[i];
            if (t == KB_BOOL)
                want = want != 0;
            else if (!kb_dtype_is_float((kb_dtype)t))
                want = t == KB_U8 && trunc(want) < 0 ? 256 + trunc(want) : trunc(want);
            if (got != want)
                fail_msg("%s element %zu: got %g, want %g", kb_dtype_name((kb_dtype)t), i, got, want);
        }
    }
    kb_memstore_free(m);
}

static void test_elem_helpers_convert_and_batch(void **state)
{
    (void)state;
    /* 5000 elements: more than one 4 KiB conversion batch for every dtype. */
    enum { N = 5000 };
    double *in = malloc(N * sizeof *in), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++)
        in[i] = (i % 200) - 100 + 0.5; /* exact in f16 and bf16 */
    kb_memstore *m = kb_memstore_new();
    for (int t = 0; t < KB_NDTYPES; t++) {
        uint64_t addr = (uint64_t)(t + 1) * 4 * PAGE - 7;
        kb_memstore_write_elems(m, 9, addr, (kb_dtype)t, in, N);
        kb_memstore_read_elems(m, 9, addr, (kb_dtype)t, out, N);
        for (int i = 0; i < N; i++) {
            unsigned char b[4];
            kb_dtype_store((kb_dtype)t, b, in[i]);
            assert_true(out[i] == kb_dtype_load((kb_dtype)t, b));
        }
    }
    kb_memstore_write_elems(m, 9, 0, KB_F16, in, 0);
    free(in);
    free(out);
    kb_memstore_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unwritten_bytes_read_as_zero_and_reading_allocates_nothing),
        cmocka_unit_test(test_a_write_spanning_pages_reads_back_with_zero_either_side),
        cmocka_unit_test(test_overlapping_writes_keep_the_latest_bytes),
        cmocka_unit_test(test_domains_never_alias),
        cmocka_unit_test(test_sparse_high_addresses_cost_one_page_each),
        cmocka_unit_test(test_many_pages_across_domains_stay_readable_as_the_table_grows),
        cmocka_unit_test(test_large_sequential_write_reads_back),
        cmocka_unit_test(test_contents_do_not_depend_on_write_order),
        cmocka_unit_test(test_typed_elements_round_trip_through_the_store),
        cmocka_unit_test(test_elem_helpers_convert_and_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
