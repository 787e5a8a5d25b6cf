/* First-fit allocators (src/mem/alloc.h): placement order, coalescing,
 * alignment, exhaustion messages, checked frees, reset, the named HBM /
 * TCM / VA allocators, and a seeded random run against a reference model.
 * Spec: memory-addressing.md §4.2-4.6. Over ~500 lines as one suite: its
 * cases read as the allocators' specification, checked whole by the model. */
#include "mem/addr.h"
#include "mem/alloc.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)

static uint64_t must_alloc(kb_alloc *a, uint64_t n, uint64_t align)
{
    uint64_t off;
    char *err = NULL;
    if (!kb_alloc_alloc(a, n, align, &off, &err))
        fail_msg("alloc %llu (align %llu): %s", (unsigned long long)n, (unsigned long long)align, err);
    return off;
}

static void must_free(kb_alloc *a, uint64_t addr)
{
    char *err = NULL;
    if (!kb_alloc_free(a, addr, &err))
        fail_msg("free 0x%llx: %s", (unsigned long long)addr, err);
}

/* The error of a call expected to fail; the caller frees it. */
static char *free_err(kb_alloc *a, uint64_t addr)
{
    char *err = NULL;
    if (kb_alloc_free(a, addr, &err))
        fail_msg("free 0x%llx succeeded but should be rejected", (unsigned long long)addr);
    return err;
}

static char *alloc_err(kb_alloc *a, uint64_t n, uint64_t align)
{
    uint64_t off = 0;
    char *err = NULL;
    if (kb_alloc_alloc(a, n, align, &off, &err))
        fail_msg("alloc %llu succeeded at 0x%llx but should fail", (unsigned long long)n, (unsigned long long)off);
    return err;
}

static void assert_err_has(const char *err, const char *needle)
{
    if (!strstr(err, needle))
        fail_msg("error \"%s\" does not contain \"%s\"", err, needle);
}

/* A copy of an allocator's state, to prove a failed call changed nothing. */
typedef struct snapshot {
    kb_span free[1024], live[1024];
    size_t nfree, nlive;
    uint64_t used;
} snapshot;

static snapshot snap(const kb_alloc *a)
{
    snapshot s;
    memset(&s, 0, sizeof s);
    assert_true(a->nfree <= 1024 && a->nlive <= 1024);
    if (a->nfree) /* the arrays are NULL until first used */
        memcpy(s.free, a->free, a->nfree * sizeof *a->free);
    if (a->nlive)
        memcpy(s.live, a->live, a->nlive * sizeof *a->live);
    s.nfree = a->nfree;
    s.nlive = a->nlive;
    s.used = a->used;
    return s;
}

static void assert_unchanged(const kb_alloc *a, const snapshot *before)
{
    snapshot now = snap(a);
    assert_memory_equal(&now, before, sizeof now);
}

/* ---- first fit ---- */

static void test_allocations_are_placed_at_the_lowest_fitting_address(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0x1000, 1000, 1);
    /* Back to back from the base: 0x1000, +100, +300. */
    assert_int_equal(must_alloc(&a, 100, 1), 0x1000);
    assert_int_equal(must_alloc(&a, 200, 1), 0x1000 + 100);
    assert_int_equal(must_alloc(&a, 50, 1), 0x1000 + 300);
    assert_int_equal(kb_alloc_live_count(&a), 3);
    assert_int_equal(kb_alloc_used_bytes(&a), 350);
    assert_int_equal(kb_alloc_free_bytes(&a), 650);
    kb_alloc_fini(&a);
}

static void test_a_freed_hole_is_reused_before_the_tail(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1000, 1);
    uint64_t x = must_alloc(&a, 100, 1), y = must_alloc(&a, 100, 1);
    must_alloc(&a, 100, 1);
    must_free(&a, y);                             /* hole [100, 200), tail [300, 1000) */
    assert_int_equal(must_alloc(&a, 40, 1), 100); /* the hole, not the tail */
    assert_int_equal(must_alloc(&a, 70, 1), 300); /* 60 left in the hole: too small */
    assert_int_equal(must_alloc(&a, 60, 1), 140); /* exactly fills the rest of the hole */
    must_free(&a, x);
    assert_int_equal(must_alloc(&a, 1, 1), 0); /* the lowest hole first */
    kb_alloc_fini(&a);
}

/* ---- coalescing ---- */

static void test_three_adjacent_blocks_coalesce_in_any_free_order(void **state)
{
    (void)state;
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int k = 0; k < 6; k++) {
        /* Three blocks then a fourth that stays live: the range is full, so
         * every free block comes from the three. */
        kb_alloc a;
        kb_alloc_init(&a, 4096, 400, 1);
        uint64_t b[3];
        for (int i = 0; i < 3; i++)
            b[i] = must_alloc(&a, 100, 1);
        uint64_t guard = must_alloc(&a, 100, 1);
        assert_int_equal(a.nfree, 0);
        for (int i = 0; i < 3; i++)
            must_free(&a, b[orders[k][i]]);
        assert_int_equal(a.nfree, 1);
        assert_int_equal(a.free[0].start, 4096);
        assert_int_equal(a.free[0].size, 300);
        assert_false(kb_alloc_is_pristine(&a));
        must_free(&a, guard);
        assert_true(kb_alloc_is_pristine(&a));
        kb_alloc_fini(&a);
    }
}

static void test_freeing_everything_is_pristine(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1 << 16, 1);
    uint64_t x[10];
    for (int i = 0; i < 10; i++)
        x[i] = must_alloc(&a, 1 + 37 * (uint64_t)i, 1 << (i % 5));
    for (int i = 0; i < 10; i += 2) /* evens, then odds: holes first, then merges */
        must_free(&a, x[i]);
    assert_false(kb_alloc_is_pristine(&a));
    for (int i = 1; i < 10; i += 2)
        must_free(&a, x[i]);
    assert_true(kb_alloc_is_pristine(&a));
    assert_int_equal(kb_alloc_live_count(&a), 0);
    kb_alloc_fini(&a);
}

/* ---- alignment ---- */

static void test_results_are_aligned_and_padding_stays_free(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 8192, 1);
    assert_int_equal(must_alloc(&a, 10, 1), 0);
    /* The first 256-aligned start at or after 10 is 256; [10, 256) stays free. */
    uint64_t x = must_alloc(&a, 100, 256);
    assert_int_equal(x, 256);
    assert_int_equal(kb_alloc_live_size(&a, x), 100); /* charged 100, not 100 + 246 */
    assert_int_equal(kb_alloc_used_bytes(&a), 110);
    assert_int_equal(kb_alloc_free_bytes(&a), 8192 - 110);
    assert_int_equal(must_alloc(&a, 6, 2), 10); /* the pad is reused */
    for (uint64_t align = 1; align <= 2048; align <<= 1)
        assert_int_equal(must_alloc(&a, 3, align) % align, 0);
    kb_alloc_fini(&a);
}

static void test_alignment_must_be_a_power_of_two(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1024, 1);
    snapshot before = snap(&a);
    char *err = alloc_err(&a, 8, 3);
    assert_string_equal(err, "alignment 3 is not a power of two");
    free(err);
    err = alloc_err(&a, 8, 96);
    assert_string_equal(err, "alignment 96 is not a power of two");
    free(err);
    assert_unchanged(&a, &before);
    assert_int_equal(must_alloc(&a, 8, 0), 0); /* 0 means no alignment */
    kb_alloc_fini(&a);
}

static void test_a_zero_byte_allocation_is_an_error(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1024, 1);
    char *err = alloc_err(&a, 0, 1);
    assert_err_has(err, "0-byte");
    free(err);
    assert_true(kb_alloc_is_pristine(&a));
    kb_alloc_fini(&a);
}

/* ---- exhaustion ---- */

static void test_exhaustion_names_the_request_and_the_largest_free_block(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 65536, 1);
    /* 64 blocks of 1 KiB fill the range; freeing blocks 0, 2 and 4 leaves
     * three separate 1 KiB holes: 3072 bytes free, the largest 1024. */
    uint64_t b[64];
    for (int i = 0; i < 64; i++)
        b[i] = must_alloc(&a, 1024, 1);
    must_free(&a, b[0]);
    must_free(&a, b[2]);
    must_free(&a, b[4]);
    snapshot before = snap(&a);
    char *err = alloc_err(&a, 4096, 256);
    assert_string_equal(err, "out of memory: 4096 bytes requested (alignment 256), largest free block "
                             "1024 bytes, 3072 of 65536 bytes free");
    free(err);
    assert_unchanged(&a, &before);
    /* Larger than the whole range, rounding included: no overflow. */
    err = alloc_err(&a, UINT64_MAX, 1);
    assert_err_has(err, "18446744073709551615 bytes requested");
    free(err);
    assert_unchanged(&a, &before);
    kb_alloc_fini(&a);
}

static void test_exhaustion_of_a_page_granular_range_shows_the_rounding(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 4 * 4096, 4096);
    must_alloc(&a, 1, 1); /* one page */
    char *err = alloc_err(&a, 3 * 4096 + 1, 1);
    /* 12289 bytes need 4 pages; 3 are free. */
    assert_string_equal(err, "out of memory: 12289 bytes requested (16384 in 4096-byte granules, alignment "
                             "4096), largest free block 12288 bytes, 12288 of 16384 bytes free");
    free(err);
    err = alloc_err(&a, UINT64_MAX - 1, 1); /* would overflow the rounding */
    assert_err_has(err, "out of memory: 18446744073709551614 bytes requested (alignment 4096)");
    free(err);
    kb_alloc_fini(&a);
}

/* ---- checked frees ---- */

static void test_a_double_free_is_an_error_and_changes_nothing(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0, 1000, 1);
    uint64_t x = must_alloc(&a, 100, 1);
    must_alloc(&a, 100, 1);
    must_free(&a, x);
    snapshot before = snap(&a);
    char *err = free_err(&a, x);
    assert_string_equal(err, "free of 0x0: no allocation starts there (never allocated, or freed already)");
    free(err);
    assert_unchanged(&a, &before);
    kb_alloc_fini(&a);
}

static void test_freeing_an_interior_address_is_an_error_naming_both(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0x2000, 1000, 1);
    must_alloc(&a, 0x40, 1);
    uint64_t y = must_alloc(&a, 0x80, 1); /* [0x2040, 0x20c0) */
    snapshot before = snap(&a);
    char *err = free_err(&a, y + 1);
    assert_string_equal(err, "free of 0x2041: inside the allocation at 0x2040 (free its start)");
    free(err);
    err = free_err(&a, y + 0x7f); /* the last byte */
    assert_err_has(err, "inside the allocation at 0x2040");
    free(err);
    assert_unchanged(&a, &before);
    kb_alloc_fini(&a);
}

static void test_freeing_a_never_allocated_address_is_an_error(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0x2000, 0x1000, 1);
    must_alloc(&a, 0x100, 1);
    snapshot before = snap(&a);
    char *err = free_err(&a, 0x2800); /* in free space */
    assert_string_equal(err, "free of 0x2800: no allocation starts there (never allocated, or freed already)");
    free(err);
    err = free_err(&a, 0x2100); /* just past the live block */
    assert_err_has(err, "free of 0x2100: no allocation starts there");
    free(err);
    err = free_err(&a, 0x1000); /* below the range */
    assert_string_equal(err, "free of 0x1000: outside the allocator's range [0x2000, 0x3000)");
    free(err);
    err = free_err(&a, 0x3000); /* the end is outside */
    assert_err_has(err, "outside the allocator's range");
    free(err);
    assert_unchanged(&a, &before);
    kb_alloc_fini(&a);
}

/* ---- reset ---- */

static void test_reset_returns_to_the_initial_state(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0x100, 0x1000, 16);
    uint64_t x = must_alloc(&a, 100, 1);
    must_alloc(&a, 200, 64);
    must_free(&a, x);
    kb_alloc_reset(&a);
    assert_true(kb_alloc_is_pristine(&a));
    assert_int_equal(kb_alloc_free_bytes(&a), 0x1000);
    assert_int_equal(kb_alloc_largest_free(&a), 0x1000);
    assert_int_equal(kb_alloc_live_count(&a), 0);
    assert_int_equal(must_alloc(&a, 1, 1), 0x100); /* the base again */
    char *err = free_err(&a, 0x100 + 0x70);      /* the old allocation is gone */
    free(err);
    kb_alloc_fini(&a);
}

/* ---- named allocators ---- */

static void test_tcm_allocator_never_hands_out_the_reserved_region(void **state)
{
    (void)state;
    for (int at = 0; at < 2; at++) {
        kb_tcm_params p = KB_TCM_PARAMS_DEFAULT;
        p.reserved_at = at ? KB_TCM_RESERVED_AT_END : KB_TCM_RESERVED_AT_START;
        uint64_t rs, rn;
        kb_tcm_reserved_region(&p, &rs, &rn);
        assert_int_equal(rn, 512 * KiB);
        assert_int_equal(rs, at ? 2 * MiB - 512 * KiB : 0);
        kb_alloc a;
        char *err = NULL;
        assert_true(kb_alloc_init_tcm(&a, &p, &err));
        /* Mixed sizes until one fails, then 16-byte blocks until nothing
         * fits; every block lies in the TCM, outside [rs, rs + rn), and is
         * 16-byte aligned. */
        static const uint64_t sizes[] = {1, 100, 4096, 17, 65536, 3000, 250000};
        uint64_t total = 0, n = 0, off;
        bool mixed = true;
        for (int i = 0;; i++) {
            if (!kb_alloc_alloc(&a, mixed ? sizes[i % 7] : 16, 1, &off, &err)) {
                free(err);
                if (!mixed)
                    break;
                mixed = false;
                continue;
            }
            uint64_t charged = kb_alloc_live_size(&a, off);
            assert_true(off + charged <= 2 * MiB);
            assert_true(off + charged <= rs || off >= rs + rn);
            assert_int_equal(off % 16, 0);
            total += charged;
            n++;
        }
        assert_true(n > 10);
        assert_int_equal(total, 2 * MiB - 512 * KiB); /* everything allocatable, nothing more */
        assert_int_equal(kb_alloc_free_bytes(&a), 0);
        kb_alloc_fini(&a);
    }
}

static void test_tcm_parameters_are_checked(void **state)
{
    (void)state;
    kb_alloc a;
    char *err = NULL;
    kb_tcm_params p = KB_TCM_PARAMS_DEFAULT;
    p.reserved_bytes = 3 * MiB;
    assert_false(kb_alloc_init_tcm(&a, &p, &err));
    assert_string_equal(err, "TCM allocator: 3145728 bytes reserved for the scheduler but the TCM holds only "
                             "2097152");
    free(err);
    p = (kb_tcm_params)KB_TCM_PARAMS_DEFAULT;
    p.reserved_bytes = 1000; /* not a multiple of the 16-byte granule */
    assert_false(kb_alloc_init_tcm(&a, &p, &err));
    assert_err_has(err, "TCM allocator: base 0x3e8 is not a multiple of the granule 16");
    free(err);
    p = (kb_tcm_params)KB_TCM_PARAMS_DEFAULT;
    p.align = 24;
    assert_false(kb_alloc_init_tcm(&a, &p, &err));
    assert_string_equal(err, "TCM allocator: align 24 is not a power of two");
    free(err);
    /* Everything reserved: an empty allocator, every request fails. */
    p = (kb_tcm_params)KB_TCM_PARAMS_DEFAULT;
    p.reserved_bytes = p.tcm_bytes;
    assert_true(kb_alloc_init_tcm(&a, &p, &err));
    err = alloc_err(&a, 1, 1);
    assert_err_has(err, "0 of 0 bytes free");
    free(err);
    kb_alloc_fini(&a);
}

static void test_va_allocations_are_page_aligned_whole_pages(void **state)
{
    (void)state;
    kb_va_params p = KB_VA_PARAMS_DEFAULT;
    assert_int_equal(p.base, UINT64_C(0x100000000));
    assert_int_equal(p.size, 64 * GiB);
    p.page_size = 4096;
    kb_alloc a;
    char *err = NULL;
    assert_true(kb_alloc_init_va(&a, &p, &err));
    uint64_t x = must_alloc(&a, 1, 1), y = must_alloc(&a, 4097, 1), z = must_alloc(&a, 8192, 16);
    assert_int_equal(x, UINT64_C(0x100000000));
    assert_int_equal(y, UINT64_C(0x100001000)); /* after one page */
    assert_int_equal(z, UINT64_C(0x100003000)); /* after 1 + 2 pages */
    assert_int_equal(kb_alloc_live_size(&a, x), 4096);
    assert_int_equal(kb_alloc_live_size(&a, y), 8192);
    assert_int_equal(kb_alloc_live_size(&a, z), 8192);
    assert_int_equal(kb_alloc_used_bytes(&a), 5 * 4096);
    must_free(&a, y);
    assert_int_equal(must_alloc(&a, 100, 1), y); /* the hole, one page */
    assert_int_equal(must_alloc(&a, 4096, 1), y + 4096);
    kb_alloc_fini(&a);

    /* The default 2 MiB page. */
    p = (kb_va_params)KB_VA_PARAMS_DEFAULT;
    assert_true(kb_alloc_init_va(&a, &p, &err));
    for (int i = 0; i < 5; i++) {
        uint64_t v = must_alloc(&a, 1 + (uint64_t)i * 1000003, 1);
        assert_int_equal(v % (2 * MiB), 0);
        assert_int_equal(kb_alloc_live_size(&a, v) % (2 * MiB), 0);
    }
    kb_alloc_fini(&a);

    p.page_size = 3000;
    assert_false(kb_alloc_init_va(&a, &p, &err));
    assert_string_equal(err, "VA allocator: page_size 3000 is not a power of two");
    free(err);
    p = (kb_va_params)KB_VA_PARAMS_DEFAULT;
    p.base = 0x1000; /* not 2 MiB aligned */
    assert_false(kb_alloc_init_va(&a, &p, &err));
    assert_err_has(err, "VA allocator: base 0x1000 is not a multiple of the granule 2097152");
    free(err);
}

static void test_hbm_slice_gives_pe_local_offsets(void **state)
{
    (void)state;
    kb_hbm_slice_params p = KB_HBM_SLICE_PARAMS_DEFAULT;
    assert_int_equal(p.slice_bytes, 6 * GiB); /* 48 GiB / 8 slices */
    kb_alloc a;
    char *err = NULL;
    assert_true(kb_alloc_init_hbm_slice(&a, &p, &err));
    uint64_t x = must_alloc(&a, 3, 1), y = must_alloc(&a, 5, 1);
    assert_int_equal(x, 0);
    assert_int_equal(y, 3); /* no alignment by default (MA §4.2) */
    /* A PE-local offset becomes a PA in PE 3's slice. */
    kb_pa pa;
    char perr[KB_PA_ERRLEN];
    assert_true(kb_pa_pe_hbm(0, 0, 3, y, p.slice_bytes, &pa, perr, sizeof perr));
    kb_pa_fields f;
    assert_true(kb_pa_decode(pa, &f, perr, sizeof perr));
    assert_int_equal(f.offset, 3 * 6 * GiB + 3);
    assert_int_equal(kb_addr_hbm_pe(f.offset, p.slice_bytes), 3);
    err = alloc_err(&a, 6 * GiB, 1);
    assert_err_has(err, "largest free block 6442450936 bytes");
    free(err);
    kb_alloc_fini(&a);
}

static void test_range_arguments_are_checked(void **state)
{
    (void)state;
    char *err = NULL;
    assert_true(kb_alloc_check_range(0, UINT64_MAX, 1, &err));
    assert_true(kb_alloc_check_range(4096, 100, 4096, &err)); /* a tail under a page is allowed */
    assert_false(kb_alloc_check_range(1, UINT64_MAX, 0, &err));
    assert_err_has(err, "ends past 2^64");
    free(err);
    assert_false(kb_alloc_check_range(0, 10, 12, &err));
    assert_string_equal(err, "granule 12 is not a power of two");
    free(err);
}

/* ---- which allocation holds an address ---- */

static void test_find_names_the_allocation_holding_an_address(void **state)
{
    (void)state;
    kb_alloc a;
    kb_alloc_init(&a, 0x1000, 4096, 16);
    uint64_t x = must_alloc(&a, 64, 1), y = must_alloc(&a, 100, 1); /* y charged 112 (16-byte granules) */
    must_alloc(&a, 16, 1);
    kb_span s;
    assert_true(kb_alloc_find(&a, x, &s));
    assert_int_equal(s.start, x);
    assert_int_equal(s.size, 64);
    assert_true(kb_alloc_find(&a, x + 63, &s));
    assert_int_equal(s.start, x);
    assert_true(kb_alloc_find(&a, x + 64, &s)); /* the next one starts there */
    assert_int_equal(s.start, y);
    assert_true(kb_alloc_find(&a, y + 111, &s));
    assert_int_equal(s.size, 112);
    must_free(&a, y);
    assert_false(kb_alloc_find(&a, y, &s));      /* freed */
    assert_false(kb_alloc_find(&a, 0x0fff, &s)); /* below the range */
    assert_false(kb_alloc_find(&a, 0x1000 + 4096, &s));
    kb_alloc_fini(&a);
}

/* ---- randomized run against a reference model ---- */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The reference: live blocks only, sorted by start. Free space is the gaps
 * between them, so first fit is the first gap whose aligned start fits. */
typedef struct ref_model {
    uint64_t base, size, granule;
    kb_span live[512];
    int n;
} ref_model;

static uint64_t round_up(uint64_t x, uint64_t m) { return (x + m - 1) / m * m; }

/* Expected address of alloc(nbytes, align), or UINT64_MAX if none fits. */
static uint64_t ref_place(const ref_model *m, uint64_t nbytes, uint64_t align)
{
    if (align < m->granule)
        align = m->granule;
    uint64_t size = round_up(nbytes, m->granule), at = m->base;
    for (int i = 0; i <= m->n; i++) {
        uint64_t gap_end = i < m->n ? m->live[i].start : m->base + m->size;
        uint64_t start = round_up(at, align);
        if (start <= gap_end && gap_end - start >= size)
            return start;
        if (i < m->n)
            at = m->live[i].start + m->live[i].size;
    }
    return UINT64_MAX;
}

static void ref_insert(ref_model *m, uint64_t start, uint64_t size)
{
    int i = m->n;
    while (i > 0 && m->live[i - 1].start > start) {
        m->live[i] = m->live[i - 1];
        i--;
    }
    m->live[i] = (kb_span){start, size};
    m->n++;
}

static void ref_remove(ref_model *m, int i)
{
    memmove(m->live + i, m->live + i + 1, (size_t)(m->n - i - 1) * sizeof *m->live);
    m->n--;
}

/* The allocator agrees with the model: same live blocks, free blocks are
 * exactly the non-empty gaps (so sorted, non-overlapping, non-adjacent),
 * free + used == size, and the largest free block is the largest gap. */
static void check_against(const kb_alloc *a, const ref_model *m)
{
    assert_int_equal(kb_alloc_live_count(a), m->n);
    uint64_t used = 0, largest = 0, at = m->base;
    size_t f = 0;
    for (int i = 0; i <= m->n; i++) {
        uint64_t gap_end = i < m->n ? m->live[i].start : m->base + m->size;
        if (gap_end > at) {
            assert_true(f < a->nfree);
            assert_int_equal(a->free[f].start, at);
            assert_int_equal(a->free[f].size, gap_end - at);
            largest = gap_end - at > largest ? gap_end - at : largest;
            f++;
        }
        if (i < m->n) {
            assert_int_equal(a->live[i].start, m->live[i].start);
            assert_int_equal(a->live[i].size, m->live[i].size);
            used += m->live[i].size;
            at = m->live[i].start + m->live[i].size;
        }
    }
    assert_int_equal(a->nfree, f);
    for (size_t i = 0; i + 1 < a->nfree; i++)
        assert_true(a->free[i].start + a->free[i].size < a->free[i + 1].start);
    assert_int_equal(kb_alloc_used_bytes(a), used);
    assert_int_equal(kb_alloc_free_bytes(a) + kb_alloc_used_bytes(a), m->size);
    assert_int_equal(kb_alloc_largest_free(a), largest);
}

/* kb_alloc_find against a scan of the model, at the edges of every live
 * block and at one address from the seed. */
static void check_find(const kb_alloc *a, const ref_model *m, uint64_t probe)
{
    uint64_t at[3 * 512 + 1];
    int n = 0;
    for (int i = 0; i < m->n; i++) {
        at[n++] = m->live[i].start;
        at[n++] = m->live[i].start + m->live[i].size - 1;
        at[n++] = m->live[i].start + m->live[i].size;
    }
    at[n++] = m->base + probe % (m->size + 1);
    for (int k = 0; k < n; k++) {
        int want = -1;
        for (int i = 0; i < m->n; i++)
            if (at[k] >= m->live[i].start && at[k] - m->live[i].start < m->live[i].size)
                want = i;
        kb_span s;
        bool found = kb_alloc_find(a, at[k], &s);
        assert_int_equal(found, want >= 0);
        if (found)
            assert_int_equal(s.start, m->live[want].start);
    }
}

static void stress(uint64_t seed, uint64_t base, uint64_t size, uint64_t granule, int steps)
{
    kb_alloc a;
    kb_alloc_init(&a, base, size, granule);
    ref_model m = {.base = base, .size = size, .granule = granule, .n = 0};
    int fails = 0, bad_frees = 0;
    for (int step = 0; step < steps; step++) {
        uint64_t r = rng_next(&seed);
        char *err = NULL;
        if (r % 16 == 0 && m.n > 0) {
            /* An invalid free: an interior address, or a free one. */
            kb_span s = m.live[(r >> 8) % (uint64_t)m.n];
            uint64_t addr = s.size > 1 ? s.start + 1 + (r >> 20) % (s.size - 1) : s.start + s.size;
            if (kb_alloc_live_size(&a, addr) == 0) {
                snapshot before = snap(&a);
                assert_false(kb_alloc_free(&a, addr, &err));
                free(err);
                assert_unchanged(&a, &before);
                bad_frees++;
            }
        } else if (m.n < 512 && (r & 0x10)) {
            uint64_t nbytes = (r >> 8) % 8 == 0 ? 1 + (r >> 16) % (size / 4) : 1 + (r >> 16) % 2000;
            uint64_t align = UINT64_C(1) << ((r >> 40) % 10);
            uint64_t want = ref_place(&m, nbytes, align), off;
            if (want == UINT64_MAX) {
                assert_false(kb_alloc_alloc(&a, nbytes, align, &off, &err));
                assert_err_has(err, "out of memory");
                free(err);
                fails++;
            } else {
                if (!kb_alloc_alloc(&a, nbytes, align, &off, &err))
                    fail_msg("step %d: alloc %llu failed: %s", step, (unsigned long long)nbytes, err);
                assert_int_equal(off, want);
                assert_int_equal(off % (align > granule ? align : granule), 0);
                ref_insert(&m, off, round_up(nbytes, granule));
            }
        } else if (m.n > 0) {
            int i = (int)((r >> 8) % (uint64_t)m.n);
            must_free(&a, m.live[i].start);
            ref_remove(&m, i);
        }
        check_against(&a, &m);
        if (step % 64 == 0)
            check_find(&a, &m, r >> 3);
    }
    assert_true(fails > 0 && bad_frees > 0); /* both paths were exercised */
    while (m.n > 0) {
        must_free(&a, m.live[m.n / 2].start);
        ref_remove(&m, m.n / 2);
        check_against(&a, &m);
    }
    assert_true(kb_alloc_is_pristine(&a));
    kb_alloc_fini(&a);
}

static void test_random_alloc_free_matches_the_reference_model(void **state)
{
    (void)state;
    stress(UINT64_C(20261122), 0, 1 << 18, 1, 20000);
    stress(UINT64_C(7), 0x10000, 1 << 18, 64, 20000); /* a granule, as a VA allocator */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_allocations_are_placed_at_the_lowest_fitting_address),
        cmocka_unit_test(test_a_freed_hole_is_reused_before_the_tail),
        cmocka_unit_test(test_three_adjacent_blocks_coalesce_in_any_free_order),
        cmocka_unit_test(test_freeing_everything_is_pristine),
        cmocka_unit_test(test_results_are_aligned_and_padding_stays_free),
        cmocka_unit_test(test_alignment_must_be_a_power_of_two),
        cmocka_unit_test(test_a_zero_byte_allocation_is_an_error),
        cmocka_unit_test(test_exhaustion_names_the_request_and_the_largest_free_block),
        cmocka_unit_test(test_exhaustion_of_a_page_granular_range_shows_the_rounding),
        cmocka_unit_test(test_a_double_free_is_an_error_and_changes_nothing),
        cmocka_unit_test(test_freeing_an_interior_address_is_an_error_naming_both),
        cmocka_unit_test(test_freeing_a_never_allocated_address_is_an_error),
        cmocka_unit_test(test_reset_returns_to_the_initial_state),
        cmocka_unit_test(test_tcm_allocator_never_hands_out_the_reserved_region),
        cmocka_unit_test(test_tcm_parameters_are_checked),
        cmocka_unit_test(test_va_allocations_are_page_aligned_whole_pages),
        cmocka_unit_test(test_hbm_slice_gives_pe_local_offsets),
        cmocka_unit_test(test_range_arguments_are_checked),
        cmocka_unit_test(test_find_names_the_allocation_holding_an_address),
        cmocka_unit_test(test_random_alloc_free_matches_the_reference_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
