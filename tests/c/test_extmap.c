/* Extent maps (src/mem/extmap.h) and the page table over them
 * (src/mem/pagetable.h): which mapping holds an address, the newest
 * winning where mappings overlap, older ones showing again when a newer
 * one goes, removal of the mappings entirely inside a range, tags dropped
 * once, labels shared, and a seeded random run against a reference that
 * scans every mapping. */
#include "mem/extmap.h"
#include "mem/pagetable.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

/* Tags point into a test's counters `dropped` (tag n is &dropped[n]);
 * dropping one counts it. */
static void count_drop(void *tag) { ++*(int *)tag; }
#define TAG(n) ((void *)&dropped[n])

/* The tag number of the mapping at addr, 0 for none. */
#define tag_at(m, addr) tag_of(m, addr, dropped)
static long tag_of(const kb_extmap *m, uint64_t addr, int *base)
{
    const kb_extent *e = kb_extmap_find(m, addr);
    return e ? (int *)e->tag - base : 0;
}

static void test_find_gives_the_mapping_holding_an_address(void **state)
{
    (void)state;
    int dropped[64] = {0};
    kb_extmap m;
    kb_extmap_init(&m);
    kb_extmap_insert(&m, 0x2000, 0x100, 0x9000, TAG(2));
    kb_extmap_insert(&m, 0x1000, 0x100, 0x8000, TAG(1));
    assert_null(kb_extmap_find(&m, 0x0fff));
    assert_int_equal(tag_at(&m, 0x1000), 1);
    assert_int_equal(tag_at(&m, 0x10ff), 1);
    assert_null(kb_extmap_find(&m, 0x1100)); /* the gap */
    const kb_extent *e = kb_extmap_find(&m, 0x20ff);
    assert_non_null(e);
    assert_int_equal(e->start, 0x2000);
    assert_int_equal(e->size, 0x100);
    assert_int_equal(e->value, 0x9000);
    assert_null(kb_extmap_find(&m, 0x2100));
    assert_int_equal(kb_extmap_count(&m), 2);
    kb_extmap_fini(&m, NULL);
}

static void test_the_newest_shows_and_an_older_one_shows_again_when_it_goes(void **state)
{
    (void)state;
    int dropped[64] = {0};
    kb_extmap m;
    kb_extmap_init(&m);
    kb_extmap_insert(&m, 0, 100, 0, TAG(1));  /* [0, 100) */
    kb_extmap_insert(&m, 40, 20, 0, TAG(2));  /* [40, 60) over its middle */
    assert_int_equal(tag_at(&m, 39), 1);
    assert_int_equal(tag_at(&m, 40), 2);
    assert_int_equal(tag_at(&m, 59), 2);
    assert_int_equal(tag_at(&m, 60), 1);
    assert_int_equal(m.nvis, 3);
    assert_int_equal(m.nshadowed, 1);
    /* Only what lies entirely inside the range goes: [0, 100) stays. */
    assert_int_equal(kb_extmap_remove_inside(&m, 30, 40, count_drop), 1);
    assert_int_equal(dropped[2], 1);
    assert_int_equal(dropped[1], 0);
    for (uint64_t a = 0; a < 100; a++)
        assert_int_equal(tag_at(&m, a), 1);
    assert_int_equal(kb_extmap_remove_inside(&m, 0, 99, count_drop), 0); /* partly inside: stays */
    assert_int_equal(kb_extmap_remove_inside(&m, 0, 100, count_drop), 1);
    assert_null(kb_extmap_find(&m, 0));
    assert_int_equal(m.nvis, 0);
    assert_int_equal(m.nshadowed, 0);
    kb_extmap_fini(&m, count_drop);
    assert_int_equal(dropped[1], 1);
}

/* Replicas mapped at one range (a tensor replicated over the PEs of a
 * cube, every copy sent to every PE): the last wins, one unmap takes all. */
static void test_identical_mappings_show_the_last_and_go_together(void **state)
{
    (void)state;
    int dropped[64] = {0};
    kb_extmap m;
    kb_extmap_init(&m);
    for (int i = 1; i <= 8; i++)
        kb_extmap_insert(&m, 0x4000, 0x40, 0x1000 * (uint64_t)i, TAG(i));
    assert_int_equal(tag_at(&m, 0x4000), 8);
    assert_int_equal(kb_extmap_find(&m, 0x403f)->value, 0x8000);
    assert_int_equal(m.nvis, 1);
    assert_int_equal(kb_extmap_remove_inside(&m, 0x4000, 0x40, count_drop), 8);
    for (int i = 1; i <= 8; i++)
        assert_int_equal(dropped[i], 1);
    assert_int_equal(kb_extmap_count(&m), 0);
    assert_int_equal(m.nshadowed, 0);
    kb_extmap_fini(&m, count_drop);
}

static void test_a_mapping_over_several_shows_over_all_of_them(void **state)
{
    (void)state;
    int dropped[64] = {0};
    kb_extmap m;
    kb_extmap_init(&m);
    for (uint64_t i = 0; i < 5; i++)
        kb_extmap_insert(&m, i * 10, 10, 0, TAG(i + 1));
    kb_extmap_insert(&m, 15, 20, 0, TAG(9)); /* [15, 35) covers parts of 2 and 4, all of 3 */
    assert_int_equal(tag_at(&m, 14), 2);
    assert_int_equal(tag_at(&m, 15), 9);
    assert_int_equal(tag_at(&m, 34), 9);
    assert_int_equal(tag_at(&m, 35), 4);
    assert_int_equal(m.nvis, 5); /* 1, 2's left, 9, 4's right, 5 */
    assert_int_equal(kb_extmap_remove_inside(&m, 15, 20, NULL), 2); /* 9, and 3 inside it too */
    for (uint64_t a = 0; a < 50; a++)
        assert_int_equal(tag_at(&m, a), a >= 20 && a < 30 ? 0 : (long)(a / 10 + 1));
    kb_extmap_fini(&m, NULL);
}

static void test_ranges_at_the_top_of_the_address_space(void **state)
{
    (void)state;
    int dropped[64] = {0};
    kb_extmap m;
    kb_extmap_init(&m);
    kb_extmap_insert(&m, UINT64_MAX - 16, 16, 0, TAG(1)); /* ends at UINT64_MAX, the largest end */
    assert_int_equal(tag_at(&m, UINT64_MAX - 1), 1);
    assert_null(kb_extmap_find(&m, UINT64_MAX));
    assert_int_equal(kb_extmap_remove_inside(&m, UINT64_MAX - 16, UINT64_MAX, NULL), 1); /* "to the end" */
    kb_extmap_fini(&m, NULL);
}

/* ---- the page table ---- */

static void test_page_table_translates_and_names_what_it_maps(void **state)
{
    (void)state;
    kb_pagetable pt;
    kb_pt_init(&pt);
    kb_pt_label *l = kb_pt_label_new("tensor 'w' [4, 4] f32");
    kb_pt_map(&pt, 0x100000000, 0x5000, 64, l);
    kb_pt_map(&pt, 0x100000040, 0x9000, 64, l);
    kb_pt_map(&pt, 0x200000000, 0x1000, 0, l); /* 0 bytes: nothing */
    kb_pt_label_unref(l);                      /* the mappings hold theirs */
    uint64_t pa;
    assert_true(kb_pt_translate(&pt, 0x100000010, &pa));
    assert_int_equal(pa, 0x5010);
    assert_true(kb_pt_translate(&pt, 0x100000040, &pa));
    assert_int_equal(pa, 0x9000);
    assert_false(kb_pt_translate(&pt, 0x100000080, &pa));
    const kb_extent *e = kb_pt_lookup(&pt, 0x100000044);
    assert_int_equal(e->start, 0x100000040);
    assert_string_equal(kb_pt_label_text(e->tag), "tensor 'w' [4, 4] f32");
    assert_int_equal(kb_pt_regions(&pt), 2);
    kb_pt_unmap(&pt, 0x100000000, 128);
    assert_int_equal(kb_pt_regions(&pt), 0);
    kb_pt_free(&pt); /* the label went with its last mapping (ASan checks) */
}

/* ---- randomized run against a reference ---- */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

typedef struct ref_map {
    uint64_t start, size;
    int tag;
} ref_map;

static void test_random_maps_and_unmaps_match_a_scan_of_every_mapping(void **state)
{
    (void)state;
    enum { SPACE = 4096, STEPS = 6000, MAXREF = 400 };
    uint64_t seed = 20260107;
    ref_map ref[MAXREF]; /* insertion order: the last covering an address shows */
    int n = 0, removed = 0, dropped[64] = {0};
    kb_extmap m;
    kb_extmap_init(&m);
    for (int step = 0; step < STEPS; step++) {
        uint64_t r = rng_next(&seed);
        if (n < MAXREF && r % 3 != 0) {
            uint64_t size = 1 + (r >> 8) % ((r >> 20) % 4 == 0 ? 600 : 40);
            uint64_t start = (r >> 32) % (SPACE - size);
            int tag = 1 + (int)((r >> 50) % 63);
            kb_extmap_insert(&m, start, size, start * 3, TAG(tag));
            ref[n++] = (ref_map){start, size, tag};
        } else {
            uint64_t start = (r >> 8) % SPACE, size = 1 + (r >> 24) % 700;
            int gone = 0, k = 0;
            for (int i = 0; i < n; i++) {
                if (ref[i].start >= start && ref[i].start + ref[i].size <= start + size) {
                    gone++;
                    continue;
                }
                ref[k++] = ref[i];
            }
            n = k;
            assert_int_equal(kb_extmap_remove_inside(&m, start, size, NULL), gone);
            removed += gone;
        }
        assert_int_equal(kb_extmap_count(&m), n);
        for (uint64_t a = (r >> 40) % 7; a < SPACE; a += 7) {
            int want = -1;
            for (int i = n - 1; i >= 0 && want < 0; i--)
                if (a >= ref[i].start && a - ref[i].start < ref[i].size)
                    want = i;
            const kb_extent *e = kb_extmap_find(&m, a);
            if (want < 0) {
                assert_null(e);
                continue;
            }
            assert_non_null(e);
            assert_int_equal(e->start, ref[want].start);
            assert_int_equal(e->size, ref[want].size);
            assert_int_equal(tag_at(&m, a), ref[want].tag);
        }
        /* the pieces are disjoint and sorted */
        for (size_t i = 0; i + 1 < m.nvis; i++)
            assert_true(m.vis[i].hi <= m.vis[i + 1].lo);
    }
    assert_true(removed > 100); /* both paths were exercised */
    kb_extmap_fini(&m, NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_gives_the_mapping_holding_an_address),
        cmocka_unit_test(test_the_newest_shows_and_an_older_one_shows_again_when_it_goes),
        cmocka_unit_test(test_identical_mappings_show_the_last_and_go_together),
        cmocka_unit_test(test_a_mapping_over_several_shows_over_all_of_them),
        cmocka_unit_test(test_ranges_at_the_top_of_the_address_space),
        cmocka_unit_test(test_page_table_translates_and_names_what_it_maps),
        cmocka_unit_test(test_random_maps_and_unmaps_match_a_scan_of_every_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
