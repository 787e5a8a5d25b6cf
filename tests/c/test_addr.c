/* PhysAddr Rev-2 codec: spec vectors, round trips, and every rejection
 * rule of memory-addressing.md section 1 (MBZ, reserved values, budgets).
 * Over ~500 lines as one suite: one case per rule of the address format. */
#include "mem/addr.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)
#define GiB (UINT64_C(1) << 30)
#define TiB (UINT64_C(1) << 40)

/* Raw address pieces, written out here independently of addr.c. */
#define SIP(s) ((uint64_t)(s) << 47)
#define DIE(d) ((uint64_t)(d) << 42)
#define HBM_SPACE (UINT64_C(1) << 37)
#define RKIND(k) ((uint64_t)(k) << 34)

static void assert_err_has(const char *err, const char *needle)
{
    if (!strstr(err, needle))
        fail_msg("error \"%s\" does not contain \"%s\"", err, needle);
}

static void assert_decode_fails(kb_pa pa, const char *needle1, const char *needle2)
{
    char err[KB_PA_ERRLEN] = "";
    kb_pa_fields f;
    if (kb_pa_decode(pa, &f, err, sizeof err))
        fail_msg("PA 0x%llx decoded but should be rejected", (unsigned long long)pa);
    assert_err_has(err, needle1);
    if (needle2)
        assert_err_has(err, needle2);
}

static kb_pa_fields decode_ok(kb_pa pa)
{
    char err[KB_PA_ERRLEN] = "";
    kb_pa_fields f;
    if (!kb_pa_decode(pa, &f, err, sizeof err))
        fail_msg("decode failed: %s", err);
    return f;
}

/* decode(pa) gives want, and encode(decode(pa)) gives pa back. */
static void assert_round_trip(kb_pa pa, const kb_pa_fields *want)
{
    kb_pa_fields f = decode_ok(pa);
    assert_int_equal(f.sip, want->sip);
    assert_int_equal(f.die, want->die);
    assert_int_equal(f.kind, want->kind);
    assert_int_equal(f.pe, want->pe);
    assert_int_equal(f.sub_unit, want->sub_unit);
    assert_int_equal(f.offset, want->offset);
    assert_int_equal(f.io_index, want->die >= KB_PA_IO_DIE0 ? want->die - KB_PA_IO_DIE0 : 0);
    char err[KB_PA_ERRLEN] = "";
    kb_pa back = 0;
    if (!kb_pa_encode(&f, &back, err, sizeof err))
        fail_msg("re-encode failed: %s", err);
    assert_int_equal(back, pa);
}

/* ---- Appendix A ---- */

static void test_appendix_a_vectors_encode(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_true(kb_pa_hbm(2, 5, 0x1000, &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0x1142000001000)); /* A.1 */
    assert_true(kb_pa_pe_tcm(0, 0, 3, 0x400, &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0x6C000400)); /* A.2 */
    assert_true(kb_pa_mcpu(1, 3, KB_MCPU_SU_MCPU_SRAM, 0, &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0x8C040A000000)); /* A.3 */
    assert_true(kb_pa_iocpu(1, 1, KB_IOCPU_SU_IPCQ, 0x20000, &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0xC40010020000)); /* A.4: die 17 = IOCHIPLET[1] */
    assert_true(kb_pa_ual(0, 0, UINT64_C(0x100000000), &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0x400100000000)); /* A.5 */
}

static void test_appendix_a_vectors_decode(void **state)
{
    (void)state;
    assert_round_trip(UINT64_C(0x1142000001000),
                      &(kb_pa_fields){.sip = 2, .die = 5, .kind = KB_PA_HBM, .offset = 0x1000});
    assert_round_trip(UINT64_C(0x6C000400), &(kb_pa_fields){.sip = 0, .die = 0, .kind = KB_PA_PE_LOCAL, .pe = 3,
                                                           .sub_unit = KB_PE_SU_PE_TCM, .offset = 0x400});
    assert_round_trip(UINT64_C(0x8C040A000000),
                      &(kb_pa_fields){.sip = 1, .die = 3, .kind = KB_PA_MCPU_LOCAL, .sub_unit = KB_MCPU_SU_MCPU_SRAM});
    assert_round_trip(UINT64_C(0xC40010020000), &(kb_pa_fields){.sip = 1, .die = 17, .kind = KB_PA_IOCPU,
                                                               .sub_unit = KB_IOCPU_SU_IPCQ, .offset = 0x20000});
    assert_round_trip(UINT64_C(0x400100000000),
                      &(kb_pa_fields){.sip = 0, .die = 16, .kind = KB_PA_UAL, .offset = UINT64_C(0x100000000)});
    assert_int_equal(decode_ok(UINT64_C(0xC40010020000)).io_index, 1);
}

/* ---- round trips ---- */

static void test_round_trip_every_kind_at_window_edges(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    const uint64_t hbm_off[] = {0, KB_PA_HBM_WINDOW - 1};
    const uint64_t sram_off[] = {0, KB_PA_CUBE_SRAM_BYTES - 1};
    const uint64_t ual_off[] = {2 * GiB, TiB - 1};
    for (int i = 0; i < 2; i++) {
        assert_true(kb_pa_hbm(15, 15, hbm_off[i], &pa, err, sizeof err));
        assert_round_trip(pa, &(kb_pa_fields){.sip = 15, .die = 15, .kind = KB_PA_HBM, .offset = hbm_off[i]});
        assert_true(kb_pa_cube_sram(7, 9, sram_off[i], &pa, err, sizeof err));
        assert_round_trip(pa, &(kb_pa_fields){.sip = 7, .die = 9, .kind = KB_PA_CUBE_SRAM, .offset = sram_off[i]});
        assert_true(kb_pa_ual(3, 4, ual_off[i], &pa, err, sizeof err));
        assert_round_trip(pa, &(kb_pa_fields){.sip = 3, .die = 20, .kind = KB_PA_UAL, .offset = ual_off[i]});
    }
}

static void test_round_trip_every_sub_unit_at_zero_and_budget_minus_one(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    for (unsigned su = 0; su < KB_PE_SU_COUNT; su++) {
        uint64_t offs[] = {0, kb_addr_pe_sub_unit_budget(su) - 1};
        for (int i = 0; i < 2; i++) {
            unsigned pe = su * 2 + (unsigned)i; /* walk pe_id 0..13 */
            assert_true(kb_pa_pe_local(1, 2, pe, su, offs[i], &pa, err, sizeof err));
            assert_round_trip(pa, &(kb_pa_fields){.sip = 1, .die = 2, .kind = KB_PA_PE_LOCAL, .pe = pe,
                                                  .sub_unit = su, .offset = offs[i]});
        }
    }
    assert_true(kb_pa_pe_local(0, 0, 15, KB_PE_SU_PE_TCM, 0, &pa, err, sizeof err)); /* top pe_id */
    assert_int_equal(decode_ok(pa).pe, 15);
    for (unsigned su = 0; su < KB_MCPU_SU_COUNT; su++) {
        uint64_t offs[] = {0, kb_addr_mcpu_sub_unit_budget(su) - 1};
        for (int i = 0; i < 2; i++) {
            assert_true(kb_pa_mcpu(14, 15, su, offs[i], &pa, err, sizeof err));
            assert_round_trip(
                pa, &(kb_pa_fields){.sip = 14, .die = 15, .kind = KB_PA_MCPU_LOCAL, .sub_unit = su, .offset = offs[i]});
        }
    }
    for (unsigned su = 0; su < KB_IOCPU_SU_COUNT; su++) {
        uint64_t offs[] = {0, kb_addr_iocpu_sub_unit_budget(su) - 1};
        for (unsigned io = 0; io < KB_PA_IO_DIES; io++)
            for (int i = 0; i < 2; i++) {
                assert_true(kb_pa_iocpu(5, io, su, offs[i], &pa, err, sizeof err));
                assert_round_trip(pa, &(kb_pa_fields){.sip = 5, .die = KB_PA_IO_DIE0 + io, .kind = KB_PA_IOCPU,
                                                      .sub_unit = su, .offset = offs[i]});
            }
    }
}

static void test_encode_from_fields_matches_factories(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa a, b;
    assert_true(kb_pa_encode(&(kb_pa_fields){.sip = 1, .die = 3, .kind = KB_PA_MCPU_LOCAL,
                                             .sub_unit = KB_MCPU_SU_MCPU_SRAM},
                             &a, err, sizeof err));
    assert_int_equal(a, UINT64_C(0x8C040A000000));
    /* io_index is output only: a stale value does not change the encoding. */
    assert_true(kb_pa_encode(&(kb_pa_fields){.sip = 1, .die = 17, .kind = KB_PA_IOCPU, .sub_unit = KB_IOCPU_SU_IPCQ,
                                             .offset = 0x20000, .io_index = 4},
                             &b, err, sizeof err));
    assert_int_equal(b, UINT64_C(0xC40010020000));
}

static void test_every_decodable_value_re_encodes_to_itself(void **state)
{
    (void)state;
    /* Random 53-bit values, shaped so every window and rejection rule is
     * hit often: top fields drawn uniformly, low fields sparse. */
    uint64_t x = UINT64_C(0x9E3779B97F4A7C15);
    unsigned ok = 0, kinds[KB_PA_NKINDS] = {0};
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t low = x & (x >> 11) & (x >> 23); /* few bits set */
        kb_pa pa = (x & (UINT64_C(0x7FF) << 42))       /* sip, die */
                   | ((x >> 3) & (UINT64_C(0x1F) << 33)) /* addr_space, resource_kind, bit 33 */
                   | (low & ((UINT64_C(1) << 33) - 1));
        if (i % 64 == 0)
            pa |= x & (UINT64_C(0xF) << 38); /* some MBZ noise */
        kb_pa_fields f;
        char err[KB_PA_ERRLEN];
        if (!kb_pa_decode(pa, &f, err, sizeof err)) {
            assert_true(strncmp(err, "PA 0x", 5) == 0);
            continue;
        }
        kb_pa back = 0;
        if (!kb_pa_encode(&f, &back, err, sizeof err))
            fail_msg("PA 0x%llx decodes but does not re-encode: %s", (unsigned long long)pa, err);
        assert_int_equal(back, pa);
        ok++;
        kinds[f.kind]++;
    }
    assert_true(ok > 1000);
    for (int k = 0; k < KB_PA_NKINDS; k++)
        assert_true(kinds[k] > 0);
}

/* ---- budgets ---- */

static void test_encode_rejects_offset_at_budget_naming_sub_unit(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa = 0;
    for (unsigned su = 0; su < KB_PE_SU_COUNT; su++) {
        /* the IPCQ window may be sized up to its slot by a topology (pe_ipcq.attrs.window_kb) */
        uint64_t limit = su == KB_PE_SU_IPCQ ? KB_PA_PE_IPCQ_MAX_BYTES : kb_addr_pe_sub_unit_budget(su);
        if (su == KB_PE_SU_IPCQ)
            assert_true(kb_pa_pe_local(0, 0, 0, su, kb_addr_pe_sub_unit_budget(su), &pa, err, sizeof err));
        assert_false(kb_pa_pe_local(0, 0, 0, su, limit, &pa, err, sizeof err));
        assert_err_has(err, kb_addr_pe_sub_unit_name(su));
        assert_err_has(err, "budget");
    }
    for (unsigned su = 0; su < KB_MCPU_SU_COUNT; su++) {
        assert_false(kb_pa_mcpu(0, 0, su, kb_addr_mcpu_sub_unit_budget(su), &pa, err, sizeof err));
        assert_err_has(err, kb_addr_mcpu_sub_unit_name(su));
        assert_err_has(err, "budget");
    }
    for (unsigned su = 0; su < KB_IOCPU_SU_COUNT; su++) {
        assert_false(kb_pa_iocpu(0, 0, su, kb_addr_iocpu_sub_unit_budget(su), &pa, err, sizeof err));
        assert_err_has(err, kb_addr_iocpu_sub_unit_name(su));
        assert_err_has(err, "budget");
    }
    pa = 0;
    assert_false(kb_pa_pe_tcm(0, 0, 0, 2 * MiB, &pa, err, sizeof err));
    assert_string_equal(err, "tcm_offset 0x200000 exceeds the PE_TCM budget of 2 MiB");
    assert_int_equal(pa, 0); /* untouched on failure */
}

static void test_decode_rejects_offset_at_budget_naming_sub_unit(void **state)
{
    (void)state;
    /* Every budget is below its slot size, so offset == budget is still
     * inside the slot and only the budget rule rejects it. */
    for (unsigned su = 0; su < KB_PE_SU_COUNT; su++) {
        if (su == KB_PE_SU_IPCQ) /* sized by the topology up to its whole slot: resolving checks it */
            continue;
        kb_pa pa = DIE(1) | RKIND(0) | ((uint64_t)4 << 29) | ((uint64_t)su << 25) | kb_addr_pe_sub_unit_budget(su);
        assert_decode_fails(pa, kb_addr_pe_sub_unit_name(su), "budget");
    }
    for (unsigned su = 0; su < KB_MCPU_SU_COUNT; su++) {
        kb_pa pa = DIE(1) | RKIND(1) | ((uint64_t)su << 25) | kb_addr_mcpu_sub_unit_budget(su);
        assert_decode_fails(pa, kb_addr_mcpu_sub_unit_name(su), "budget");
    }
    for (unsigned su = 0; su < KB_IOCPU_SU_COUNT; su++) {
        kb_pa pa = DIE(18) | ((uint64_t)su << 27) | kb_addr_iocpu_sub_unit_budget(su);
        assert_decode_fails(pa, kb_addr_iocpu_sub_unit_name(su), "budget");
    }
    char err[KB_PA_ERRLEN];
    assert_false(kb_pa_decode(UINT64_C(0x6C000000) | 2 * MiB, NULL, err, sizeof err));
    assert_string_equal(err, "PA 0x6c200000: sub_offset 0x200000 exceeds the PE_TCM budget of 2 MiB");
}

/* ---- MBZ ---- */

static void test_decode_rejects_nonzero_ahbm_mbz(void **state)
{
    (void)state;
    for (unsigned b = 38; b <= 41; b++) {
        assert_decode_fails(UINT64_C(0x1142000001000) | (UINT64_C(1) << b), "[41:38]", "AHBM MBZ"); /* HBM */
        assert_decode_fails(UINT64_C(0x6C000400) | (UINT64_C(1) << b), "[41:38]", "AHBM MBZ");      /* resource */
    }
    char err[KB_PA_ERRLEN];
    assert_false(kb_pa_decode(UINT64_C(3) << 38, NULL, err, sizeof err));
    assert_string_equal(err, "PA 0xc000000000: bits [41:38] (AHBM MBZ) must be zero, got 0x3");
}

static void test_decode_rejects_nonzero_pe_local_mbz(void **state)
{
    (void)state;
    assert_decode_fails(UINT64_C(0x6C000400) | (UINT64_C(1) << 33), "[33]", "PE_LOCAL MBZ");
}

static void test_decode_rejects_nonzero_mcpu_local_mbz(void **state)
{
    (void)state;
    for (unsigned b = 30; b <= 33; b++)
        assert_decode_fails(UINT64_C(0x8C040A000000) | (UINT64_C(1) << b), "[33:30]", "MCPU_LOCAL MBZ");
}

static void test_decode_rejects_nonzero_cube_sram_mbz(void **state)
{
    (void)state;
    for (unsigned b = 25; b <= 33; b++)
        assert_decode_fails(DIE(2) | RKIND(2) | 0x40 | (UINT64_C(1) << b), "[33:25]", "CUBE_SRAM MBZ");
}

static void test_decode_rejects_nonzero_iochiplet_mbz(void **state)
{
    (void)state;
    for (unsigned b = 40; b <= 41; b++) {
        assert_decode_fails(UINT64_C(0xC40010020000) | (UINT64_C(1) << b), "[41:40]", "IOCHIPLET MBZ"); /* IOCPU */
        assert_decode_fails(UINT64_C(0x400100000000) | (UINT64_C(1) << b), "[41:40]", "IOCHIPLET MBZ"); /* UAL */
    }
}

/* ---- reserved values and range ---- */

static void test_decode_rejects_reserved_die_ids(void **state)
{
    (void)state;
    for (unsigned d = 21; d <= 31; d++)
        assert_decode_fails(SIP(1) | DIE(d) | HBM_SPACE, "die_id", "reserved");
    char err[KB_PA_ERRLEN];
    assert_false(kb_pa_decode(DIE(25), NULL, err, sizeof err));
    assert_string_equal(err, "PA 0x640000000000: die_id 25 is reserved (21..31)");
    for (unsigned d = 0; d <= 20; d++) /* every assigned die decodes */
        assert_true(kb_pa_decode(DIE(d), NULL, err, sizeof err));
}

static void test_decode_rejects_reserved_resource_kinds(void **state)
{
    (void)state;
    for (unsigned k = 3; k <= 7; k++) {
        char needle[32];
        snprintf(needle, sizeof needle, "resource_kind %u is reserved", k);
        assert_decode_fails(DIE(4) | RKIND(k), needle, NULL);
    }
}

static void test_decode_rejects_reserved_sub_units(void **state)
{
    (void)state;
    char needle[40];
    for (unsigned su = KB_PE_SU_COUNT; su < 16; su++) {
        snprintf(needle, sizeof needle, "pe_sub_unit %u is reserved", su);
        assert_decode_fails(RKIND(0) | ((uint64_t)su << 25), needle, NULL);
    }
    for (unsigned su = KB_MCPU_SU_COUNT; su < 32; su++) {
        snprintf(needle, sizeof needle, "mcpu_sub_unit %u is reserved", su);
        assert_decode_fails(RKIND(1) | ((uint64_t)su << 25), needle, NULL);
    }
    for (unsigned su = KB_IOCPU_SU_COUNT; su < 16; su++) {
        snprintf(needle, sizeof needle, "iocpu_sub_unit %u is reserved", su);
        assert_decode_fails(DIE(16) | ((uint64_t)su << 27), needle, NULL);
    }
}

static void test_decode_rejects_values_above_53_bits(void **state)
{
    (void)state;
    assert_decode_fails(KB_PA_MAX + 1, "exceeds 53 bits", NULL);
    assert_decode_fails(UINT64_MAX, "exceeds 53 bits", NULL);
    assert_decode_fails(UINT64_C(0x1142000001000) | (UINT64_C(1) << 60), "exceeds 53 bits", NULL); /* IPCQ synthetic */
    kb_pa top = SIP(63) | DIE(15) | HBM_SPACE | (KB_PA_HBM_WINDOW - 1);
    assert_round_trip(top, &(kb_pa_fields){.sip = 63, .die = 15, .kind = KB_PA_HBM, .offset = KB_PA_HBM_WINDOW - 1});
    assert_decode_fails(KB_PA_MAX, "die_id 31 is reserved", NULL); /* within 53 bits, rejected for its die */
}

/* sip_id is the spec's [50:47] widened upward to [52:47]: SIPs 0..15 keep
 * the spec's 51-bit addresses (bits [52:51] zero), SIPs 16..63 set them. */
static void test_sip_id_widens_the_spec_layout_upward(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_int_equal(KB_PA_SIPS, 64);
    assert_true(kb_pa_hbm(15, 15, KB_PA_HBM_WINDOW - 1, &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0x7BC3FFFFFFFFF)); /* the spec's 51-bit top HBM byte */
    assert_true(pa >> 51 == 0);
    assert_true(kb_pa_hbm(16, 0, 0, &pa, err, sizeof err));
    assert_int_equal(pa, (UINT64_C(1) << 51) | HBM_SPACE);
    assert_true(kb_pa_pe_tcm(63, 15, 7, 0x40, &pa, err, sizeof err));
    assert_int_equal(pa, UINT64_C(0x1FBC00EC000040)); /* 63 << 47 | 15 << 42 | pe 7 << 29 | PE_TCM << 25 */
    assert_round_trip(pa, &(kb_pa_fields){.sip = 63, .die = 15, .kind = KB_PA_PE_LOCAL, .pe = 7,
                                          .sub_unit = KB_PE_SU_PE_TCM, .offset = 0x40});
    assert_true(kb_pa_ual(47, 4, TiB - 1, &pa, err, sizeof err));
    assert_round_trip(pa, &(kb_pa_fields){.sip = 47, .die = 20, .kind = KB_PA_UAL, .offset = TiB - 1});
    char s[80];
    kb_pa_format(SIP(40) | DIE(2) | HBM_SPACE | 0x1000, s, sizeof s);
    assert_string_equal(s, "sip40.die2 hbm offset 0x1000");
}

static void test_encode_rejects_bad_arguments_naming_them(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    assert_false(kb_pa_hbm(64, 0, 0, &pa, err, sizeof err));
    assert_string_equal(err, "sip 64 is out of range (0..63)");
    assert_false(kb_pa_hbm(0, 16, 0, &pa, err, sizeof err));
    assert_err_has(err, "die 16 is an IOCHIPLET die");
    assert_false(kb_pa_cube_sram(0, 21, 0, &pa, err, sizeof err));
    assert_string_equal(err, "die 21 is reserved (21..31)");
    assert_false(kb_pa_mcpu(0, 32, 0, 0, &pa, err, sizeof err));
    assert_string_equal(err, "die 32 is out of range (0..31)");
    assert_false(kb_pa_hbm(0, 0, KB_PA_HBM_WINDOW, &pa, err, sizeof err));
    assert_string_equal(err, "hbm_offset 0x2000000000 exceeds the 128 GiB HBM window");
    assert_false(kb_pa_cube_sram(0, 0, KB_PA_CUBE_SRAM_BYTES, &pa, err, sizeof err));
    assert_string_equal(err, "sram_offset 0x2000000 exceeds the 32 MiB CUBE_SRAM window");
    assert_false(kb_pa_pe_tcm(0, 0, 16, 0, &pa, err, sizeof err));
    assert_string_equal(err, "pe 16 is out of range (0..15)");
    assert_false(kb_pa_pe_local(0, 0, 0, 7, 0, &pa, err, sizeof err));
    assert_string_equal(err, "sub_unit 7 is reserved (7..15)");
    assert_false(kb_pa_pe_local(0, 0, 0, 16, 0, &pa, err, sizeof err));
    assert_string_equal(err, "sub_unit 16 is out of range (0..15)");
    assert_false(kb_pa_mcpu(0, 0, 6, 0, &pa, err, sizeof err));
    assert_string_equal(err, "sub_unit 6 is reserved (6..31)");
    assert_false(kb_pa_iocpu(0, 0, 6, 0, &pa, err, sizeof err));
    assert_string_equal(err, "sub_unit 6 is reserved (6..15)");
    assert_false(kb_pa_iocpu(0, 5, 0, 0, &pa, err, sizeof err));
    assert_string_equal(err, "io_index 5 is out of range (0..4)");
    assert_false(kb_pa_ual(0, 0, 2 * GiB - 1, &pa, err, sizeof err));
    assert_err_has(err, "chiplet_offset 0x7fffffff is below the UAL base");
    assert_false(kb_pa_ual(0, 0, TiB, &pa, err, sizeof err));
    assert_string_equal(err, "chiplet_offset 0x10000000000 exceeds the 1 TiB IOCHIPLET window");

    /* kb_pa_encode: kind, die class and fields the kind does not use. */
    assert_false(kb_pa_encode(&(kb_pa_fields){.kind = KB_PA_NKINDS}, &pa, err, sizeof err));
    assert_string_equal(err, "kind 6 is not a PA kind (0..5)");
    assert_false(kb_pa_encode(&(kb_pa_fields){.kind = -1}, &pa, err, sizeof err));
    assert_err_has(err, "kind -1");
    assert_false(kb_pa_encode(&(kb_pa_fields){.kind = KB_PA_IOCPU, .die = 3}, &pa, err, sizeof err));
    assert_string_equal(err, "die 3 is an AHBM die; iocpu needs an IOCHIPLET die (16..20)");
    assert_false(kb_pa_encode(&(kb_pa_fields){.kind = KB_PA_HBM, .pe = 2}, &pa, err, sizeof err));
    assert_string_equal(err, "pe 2 must be 0 for a hbm address");
    assert_false(kb_pa_encode(&(kb_pa_fields){.kind = KB_PA_UAL, .die = 16, .sub_unit = 1, .offset = 4 * GiB}, &pa,
                              err, sizeof err));
    assert_string_equal(err, "sub_unit 1 must be 0 for a ual address");
}

/* ---- HBM slicing and pseudo-channels ---- */

static void test_pe_hbm_places_pe_slices_contiguously(void **state)
{
    (void)state;
    char err[KB_PA_ERRLEN];
    kb_pa pa;
    const uint64_t slice = 6 * GiB; /* 48 GiB / 8 slices */
    assert_true(kb_pa_pe_hbm(0, 3, 7, 0x1234, slice, &pa, err, sizeof err));
    kb_pa_fields f = decode_ok(pa);
    assert_int_equal(f.kind, KB_PA_HBM);
    assert_int_equal(f.die, 3);
    assert_int_equal(f.offset, UINT64_C(0xA80001234)); /* 7 * 6 GiB + 0x1234 */
    assert_int_equal(f.pe, 0);                          /* HBM addresses carry no PE field */
    assert_int_equal(kb_addr_hbm_pe(f.offset, slice), 7);
    assert_true(kb_pa_pe_hbm(0, 3, 7, slice - 1, slice, &pa, err, sizeof err));
    assert_int_equal(decode_ok(pa).offset, 48 * GiB - 1); /* top of the default 48 GiB */
    assert_int_equal(kb_addr_hbm_pe(48 * GiB - 1, slice), 7);

    assert_false(kb_pa_pe_hbm(0, 3, 7, slice, slice, &pa, err, sizeof err));
    assert_string_equal(err, "pe_local_offset 0x180000000 is not below slice_bytes 0x180000000");
    assert_false(kb_pa_pe_hbm(0, 3, 0, 0, 0, &pa, err, sizeof err));
    assert_string_equal(err, "slice_bytes must be > 0");
    assert_false(kb_pa_pe_hbm(0, 3, 16, 0, slice, &pa, err, sizeof err));
    assert_string_equal(err, "pe 16 is out of range (0..15)");
    assert_false(kb_pa_pe_hbm(0, 3, 15, 0, 16 * GiB, &pa, err, sizeof err)); /* 240 GiB */
    assert_err_has(err, "exceeds the 128 GiB HBM window");
    assert_false(kb_pa_pe_hbm(0, 3, 0, 0, UINT64_MAX, &pa, err, sizeof err));
    assert_err_has(err, "slice_bytes");
    assert_false(kb_pa_pe_hbm(0, 16, 0, 0, slice, &pa, err, sizeof err));
    assert_err_has(err, "die 16");
}

static void test_hbm_pc_is_bits_10_8_for_256b_bursts_and_8_pcs(void **state)
{
    (void)state;
    for (unsigned pc = 0; pc < 8; pc++) {
        assert_int_equal(kb_addr_hbm_pc(pc * 0x100u, 256, 8), pc);
        assert_int_equal(kb_addr_hbm_pc(pc * 0x100u + 0xFF, 256, 8), pc); /* bits [7:0]: within one burst */
    }
    assert_int_equal(kb_addr_hbm_pc(0x800, 256, 8), 0); /* bit 11 and up: row/bank/column */
    assert_int_equal(kb_addr_hbm_pc(0x900, 256, 8), 1);
    uint64_t off = UINT64_C(0xA80001234); /* arbitrary offset: the PC is exactly bits [10:8] */
    assert_int_equal(kb_addr_hbm_pc(off, 256, 8), (off >> 8) & 7);
    assert_int_equal(kb_addr_hbm_pc(0x700, 64, 16), (0x700 >> 6) & 15); /* other geometries */
}

/* ---- names, tables, formatting ---- */

static void test_sub_unit_tables_match_spec(void **state)
{
    (void)state;
    assert_string_equal(kb_addr_pe_sub_unit_name(KB_PE_SU_PE_CPU_DTCM), "PE_CPU_DTCM");
    assert_string_equal(kb_addr_pe_sub_unit_name(KB_PE_SU_PE_TCM), "PE_TCM");
    assert_int_equal(kb_addr_pe_sub_unit_budget(KB_PE_SU_PE_CPU_DTCM), 8 * KiB);
    assert_int_equal(kb_addr_pe_sub_unit_budget(KB_PE_SU_IPCQ), 256 * KiB);
    assert_int_equal(kb_addr_pe_sub_unit_budget(KB_PE_SU_DMA_ENGINE_SFR), 192 * KiB);
    assert_int_equal(kb_addr_pe_sub_unit_budget(KB_PE_SU_PE_TCM), 2 * MiB);
    assert_null(kb_addr_pe_sub_unit_name(7));
    assert_int_equal(kb_addr_pe_sub_unit_budget(7), 0);

    assert_string_equal(kb_addr_mcpu_sub_unit_name(KB_MCPU_SU_MCPU_ITCM), "MCPU_ITCM");
    assert_string_equal(kb_addr_mcpu_sub_unit_name(KB_MCPU_SU_MCPU_SRAM), "MCPU_SRAM");
    assert_int_equal(kb_addr_mcpu_sub_unit_budget(KB_MCPU_SU_MCPU_SFR), 8 * KiB);
    assert_int_equal(kb_addr_mcpu_sub_unit_budget(KB_MCPU_SU_MCPU_SRAM), 10 * MiB);
    assert_null(kb_addr_mcpu_sub_unit_name(6));

    assert_string_equal(kb_addr_iocpu_sub_unit_name(KB_IOCPU_SU_IOCPU_ITCM), "IOCPU_ITCM");
    assert_string_equal(kb_addr_iocpu_sub_unit_name(KB_IOCPU_SU_IO_SRAM), "IO_SRAM");
    assert_int_equal(kb_addr_iocpu_sub_unit_budget(KB_IOCPU_SU_IPCQ), 2 * MiB);
    assert_int_equal(kb_addr_iocpu_sub_unit_budget(KB_IOCPU_SU_IO_SRAM), 64 * MiB);
    assert_null(kb_addr_iocpu_sub_unit_name(6));

    assert_int_equal(kb_addr_pe_sub_unit_find("PE_TCM"), KB_PE_SU_PE_TCM);
    assert_int_equal(kb_addr_pe_sub_unit_find("pe_tcm"), KB_PE_SU_PE_TCM);
    assert_int_equal(kb_addr_pe_sub_unit_find("IPCQ"), KB_PE_SU_IPCQ);
    assert_int_equal(kb_addr_mcpu_sub_unit_find("ipcq"), KB_MCPU_SU_IPCQ);
    assert_int_equal(kb_addr_iocpu_sub_unit_find("io_sram"), KB_IOCPU_SU_IO_SRAM);
    assert_int_equal(kb_addr_pe_sub_unit_find("PE_TC"), -1);
    assert_int_equal(kb_addr_pe_sub_unit_find("PE_TCMX"), -1);
    assert_int_equal(kb_addr_mcpu_sub_unit_find("PE_TCM"), -1);
    assert_int_equal(kb_addr_iocpu_sub_unit_find(NULL), -1);
}

static void test_kind_names(void **state)
{
    (void)state;
    const char *want[] = {"hbm", "pe_local", "mcpu_local", "cube_sram", "iocpu", "ual"};
    for (int k = 0; k < KB_PA_NKINDS; k++)
        assert_string_equal(kb_pa_kind_name(k), want[k]);
    assert_null(kb_pa_kind_name(KB_PA_NKINDS));
    assert_null(kb_pa_kind_name(-1));
}

static void test_format_describes_each_kind(void **state)
{
    (void)state;
    char buf[KB_PA_ERRLEN + 16];
    struct {
        kb_pa pa;
        const char *text;
    } cases[] = {
        {UINT64_C(0x1142000001000), "sip2.die5 hbm offset 0x1000"},
        {UINT64_C(0x6C000400), "sip0.die0 pe3 PE_TCM +0x400"},
        {UINT64_C(0x8C040A000000), "sip1.die3 mcpu MCPU_SRAM +0x0"},
        {RKIND(2) | 0x40, "sip0.die0 cube_sram offset 0x40"},
        {UINT64_C(0xC40010020000), "sip1.die17 iocpu IPCQ +0x20000"},
        {UINT64_C(0x400100000000), "sip0.die16 ual offset 0x100000000"},
        {DIE(25), "invalid PA 0x640000000000: die_id 25 is reserved (21..31)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int len = kb_pa_format(cases[i].pa, buf, sizeof buf);
        assert_string_equal(buf, cases[i].text);
        assert_int_equal(len, (int)strlen(cases[i].text));
    }
    char small[8];
    assert_int_equal(kb_pa_format(UINT64_C(0x6C000400), small, sizeof small), 27); /* snprintf semantics */
    assert_string_equal(small, "sip0.di");
}

static void test_error_buffer_may_be_small_or_absent(void **state)
{
    (void)state;
    char err[8];
    memset(err, 'x', sizeof err);
    assert_false(kb_pa_decode(DIE(25), NULL, err, sizeof err));
    assert_string_equal(err, "PA 0x64");
    assert_false(kb_pa_decode(DIE(25), NULL, NULL, 0));
    kb_pa pa = 42;
    assert_false(kb_pa_hbm(64, 0, 0, &pa, NULL, 0));
    assert_int_equal(pa, 42);
    kb_pa_fields f = {.sip = 9};
    assert_false(kb_pa_decode(DIE(25), &f, NULL, 0));
    assert_int_equal(f.sip, 9); /* untouched on failure */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appendix_a_vectors_encode),
        cmocka_unit_test(test_appendix_a_vectors_decode),
        cmocka_unit_test(test_round_trip_every_kind_at_window_edges),
        cmocka_unit_test(test_round_trip_every_sub_unit_at_zero_and_budget_minus_one),
        cmocka_unit_test(test_encode_from_fields_matches_factories),
        cmocka_unit_test(test_every_decodable_value_re_encodes_to_itself),
        cmocka_unit_test(test_encode_rejects_offset_at_budget_naming_sub_unit),
        cmocka_unit_test(test_decode_rejects_offset_at_budget_naming_sub_unit),
        cmocka_unit_test(test_decode_rejects_nonzero_ahbm_mbz),
        cmocka_unit_test(test_decode_rejects_nonzero_pe_local_mbz),
        cmocka_unit_test(test_decode_rejects_nonzero_mcpu_local_mbz),
        cmocka_unit_test(test_decode_rejects_nonzero_cube_sram_mbz),
        cmocka_unit_test(test_decode_rejects_nonzero_iochiplet_mbz),
        cmocka_unit_test(test_decode_rejects_reserved_die_ids),
        cmocka_unit_test(test_decode_rejects_reserved_resource_kinds),
        cmocka_unit_test(test_decode_rejects_reserved_sub_units),
        cmocka_unit_test(test_decode_rejects_values_above_53_bits),
        cmocka_unit_test(test_sip_id_widens_the_spec_layout_upward),
        cmocka_unit_test(test_encode_rejects_bad_arguments_naming_them),
        cmocka_unit_test(test_pe_hbm_places_pe_slices_contiguously),
        cmocka_unit_test(test_hbm_pc_is_bits_10_8_for_256b_bursts_and_8_pcs),
        cmocka_unit_test(test_sub_unit_tables_match_spec),
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_format_describes_each_kind),
        cmocka_unit_test(test_error_buffer_may_be_small_or_absent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
