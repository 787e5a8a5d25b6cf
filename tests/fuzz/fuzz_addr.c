/* Fuzz harness: the physical address codec (src/mem/addr.h).
 *
 * Input: one operation byte, then its operands as little-endian integers
 * (missing bytes read as 0):
 *   0 decode   u64 pa
 *   1 encode   u8 sip, u8 die, u8 kind (signed), u8 pe, u8 sub_unit, u64 offset
 *   2 factory  u8 which (kb_pa_hbm ... kb_pa_ual), then the encode operands
 *              and u64 slice_bytes (kb_pa_pe_hbm)
 *   3 hbm      u64 hbm_offset, u8 log2 burst_bytes, u8 log2 num_pcs, u64 slice_bytes
 *   4 names    u8 table, u8 index, then a sub-unit name (the rest)
 *   5 format   u64 pa, u8 buffer size
 *
 * Every answer is compared with a reference model written here from the
 * layout in addr.h (bit positions, windows, budgets), independently of
 * addr.c: decode accepts exactly the valid addresses and encode exactly
 * the valid fields; decode(encode(f)) == f and encode(decode(pa)) == pa;
 * each error message is non-empty and fits KB_PA_ERRLEN; kb_pa_format
 * behaves like snprintf. */
#include "fuzz.h"

#include "mem/addr.h"

#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

/* ---- the reference model ---- */

static const uint64_t ref_pe_budget[] = {8 * KiB, 8 * KiB, 256 * KiB, 16 * KiB, 16 * KiB, 192 * KiB, 2 * MiB};
/* What a PE_LOCAL address may carry: the budgets, but the IPCQ window's whole
 * 32 MiB slot (a topology sizes the window: pe_ipcq.attrs.window_kb). */
static const uint64_t ref_pe_limit[] = {8 * KiB, 8 * KiB, 32 * MiB, 16 * KiB, 16 * KiB, 192 * KiB, 2 * MiB};
static const uint64_t ref_mcpu_budget[] = {512 * KiB, 512 * KiB, 256 * KiB, 8 * KiB, 16 * KiB, 10 * MiB};
static const uint64_t ref_iocpu_budget[] = {512 * KiB, 512 * KiB, 2 * MiB, 8 * KiB, 16 * KiB, 64 * MiB};
#define NSUB(t) (sizeof t / sizeof t[0])

static uint64_t bits(uint64_t v, unsigned hi, unsigned lo) { return (v >> lo) & ((UINT64_C(2) << (hi - lo)) - 1); }

/* Whether f (as encode reads it) is a valid address; *pa its encoding. */
static bool ref_encode(const kb_pa_fields *f, uint64_t *pa)
{
    uint64_t off = f->offset, local;
    bool io = f->kind == KB_PA_IOCPU || f->kind == KB_PA_UAL;
    if (f->kind < 0 || f->kind >= KB_PA_NKINDS || f->sip > 63)
        return false;
    if (io ? f->die < 16 || f->die > 20 : f->die > 15)
        return false;
    if (f->kind != KB_PA_PE_LOCAL && f->pe != 0)
        return false;
    switch (f->kind) {
    case KB_PA_HBM:
        if (f->sub_unit || off >= UINT64_C(1) << 37)
            return false;
        local = UINT64_C(1) << 37 | off;
        break;
    case KB_PA_PE_LOCAL:
        if (f->pe > 15 || f->sub_unit >= NSUB(ref_pe_limit) || off >= ref_pe_limit[f->sub_unit])
            return false;
        local = (uint64_t)f->pe << 29 | (uint64_t)f->sub_unit << 25 | off;
        break;
    case KB_PA_MCPU_LOCAL:
        if (f->sub_unit >= NSUB(ref_mcpu_budget) || off >= ref_mcpu_budget[f->sub_unit])
            return false;
        local = UINT64_C(1) << 34 | (uint64_t)f->sub_unit << 25 | off;
        break;
    case KB_PA_CUBE_SRAM:
        if (f->sub_unit || off >= UINT64_C(1) << 25)
            return false;
        local = UINT64_C(2) << 34 | off;
        break;
    case KB_PA_IOCPU:
        if (f->sub_unit >= NSUB(ref_iocpu_budget) || off >= ref_iocpu_budget[f->sub_unit])
            return false;
        local = (uint64_t)f->sub_unit << 27 | off;
        break;
    default: /* UAL */
        if (f->sub_unit || off < UINT64_C(1) << 31 || off >= UINT64_C(1) << 40)
            return false;
        local = off;
        break;
    }
    *pa = (uint64_t)f->sip << 47 | (uint64_t)f->die << 42 | local;
    return true;
}

/* Whether pa is valid; *f its fields (unused ones 0). */
static bool ref_decode(uint64_t pa, kb_pa_fields *f)
{
    memset(f, 0, sizeof *f);
    if (pa >> 53) /* sip_id [52:47]: the spec's [50:47] widened to 64 SIPs */
        return false;
    f->sip = (unsigned)bits(pa, 52, 47);
    f->die = (unsigned)bits(pa, 46, 42);
    if (f->die > 20)
        return false;
    if (f->die >= 16) {
        if (bits(pa, 41, 40))
            return false;
        f->io_index = f->die - 16;
        uint64_t chiplet = bits(pa, 39, 0);
        if (chiplet >= UINT64_C(1) << 31) {
            f->kind = KB_PA_UAL;
            f->offset = chiplet;
            return true;
        }
        f->kind = KB_PA_IOCPU;
        f->sub_unit = (unsigned)bits(pa, 30, 27);
        f->offset = bits(pa, 26, 0);
        return f->sub_unit < NSUB(ref_iocpu_budget) && f->offset < ref_iocpu_budget[f->sub_unit];
    }
    if (bits(pa, 41, 38))
        return false;
    if (bits(pa, 37, 37)) {
        f->kind = KB_PA_HBM;
        f->offset = bits(pa, 36, 0);
        return true;
    }
    f->offset = bits(pa, 24, 0);
    switch (bits(pa, 36, 34)) {
    case 0:
        f->kind = KB_PA_PE_LOCAL;
        f->pe = (unsigned)bits(pa, 32, 29);
        f->sub_unit = (unsigned)bits(pa, 28, 25);
        return !bits(pa, 33, 33) && f->sub_unit < NSUB(ref_pe_limit) && f->offset < ref_pe_limit[f->sub_unit];
    case 1:
        f->kind = KB_PA_MCPU_LOCAL;
        f->sub_unit = (unsigned)bits(pa, 29, 25);
        return !bits(pa, 33, 30) && f->sub_unit < NSUB(ref_mcpu_budget) &&
               f->offset < ref_mcpu_budget[f->sub_unit];
    case 2: f->kind = KB_PA_CUBE_SRAM; return !bits(pa, 33, 25);
    default: return false;
    }
}

/* ---- reading the input ---- */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static uint64_t take(input *in, unsigned nbytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < nbytes; i++) {
        uint64_t b = 0;
        if (in->n) {
            b = *in->p++;
            in->n--;
        }
        v |= b << (8 * i);
    }
    return v;
}

static kb_pa_fields take_fields(input *in)
{
    kb_pa_fields f = {0};
    f.sip = (unsigned)take(in, 1);
    f.die = (unsigned)take(in, 1);
    f.kind = (int8_t)take(in, 1);
    f.pe = (unsigned)take(in, 1);
    f.sub_unit = (unsigned)take(in, 1);
    f.offset = take(in, 8);
    return f;
}

/* ---- checks ---- */

static bool same_fields(const kb_pa_fields *a, const kb_pa_fields *b)
{
    return a->sip == b->sip && a->die == b->die && a->kind == b->kind && a->pe == b->pe &&
           a->sub_unit == b->sub_unit && a->offset == b->offset && a->io_index == b->io_index;
}

/* A failure's message is non-empty and is the same in a larger buffer
 * (addr.h: every message fits in KB_PA_ERRLEN). */
static void check_message(const char *err, const char *again, const char *call)
{
    FUZZ_CHECK(err[0], "%s failed without a message", call);
    FUZZ_CHECK(strcmp(err, again) == 0, "%s: the message does not fit KB_PA_ERRLEN: %s", call, again);
}

static void check_decode(uint64_t pa)
{
    kb_pa_fields want, got, untouched;
    memset(&got, 0xA5, sizeof got);
    untouched = got;
    char err[KB_PA_ERRLEN] = "", big[1024] = "";
    bool valid = ref_decode(pa, &want);
    bool ok = kb_pa_decode(pa, &got, err, sizeof err);
    FUZZ_CHECK(ok == valid, "decode(0x%" PRIx64 ") gives %d, the layout says %d (%s)", pa, ok, valid, err);
    char text[256];
    int len = kb_pa_format(pa, text, sizeof text);
    FUZZ_CHECK(len >= 0 && (size_t)len < sizeof text, "format(0x%" PRIx64 ") needs %d bytes", pa, len);
    if (!ok) {
        FUZZ_CHECK(memcmp(&got, &untouched, sizeof got) == 0, "a failed decode wrote its output");
        kb_pa_decode(pa, NULL, big, sizeof big);
        check_message(err, big, "decode");
        FUZZ_CHECK(strncmp(err, "PA 0x", 5) == 0, "decode message does not name the address: %s", err);
        FUZZ_CHECK(strncmp(text, "invalid ", 8) == 0, "format of an invalid PA: %s", text);
        return;
    }
    FUZZ_CHECK(same_fields(&got, &want),
               "decode(0x%" PRIx64 "): sip %u die %u kind %d pe %u sub %u offset 0x%" PRIx64
               ", the layout says sip %u die %u kind %d pe %u sub %u offset 0x%" PRIx64,
               pa, got.sip, got.die, got.kind, got.pe, got.sub_unit, got.offset, want.sip, want.die, want.kind,
               want.pe, want.sub_unit, want.offset);
    uint64_t back = ~pa;
    FUZZ_CHECK(kb_pa_encode(&got, &back, err, sizeof err), "encode(decode(0x%" PRIx64 ")) fails: %s", pa, err);
    FUZZ_CHECK(back == pa, "encode(decode(0x%" PRIx64 ")) = 0x%" PRIx64, pa, back);
    char head[32];
    snprintf(head, sizeof head, "sip%u.die%u ", got.sip, got.die);
    FUZZ_CHECK(strncmp(text, head, strlen(head)) == 0, "format of a valid PA: %s", text);
}

static void check_encode(const kb_pa_fields *f)
{
    uint64_t want = 0, got = 0x5A5A5A5A;
    char err[KB_PA_ERRLEN] = "", big[1024] = "";
    bool valid = ref_encode(f, &want);
    bool ok = kb_pa_encode(f, &got, err, sizeof err);
    FUZZ_CHECK(ok == valid,
               "encode(sip %u die %u kind %d pe %u sub %u offset 0x%" PRIx64 ") gives %d, the layout says %d (%s)",
               f->sip, f->die, f->kind, f->pe, f->sub_unit, f->offset, ok, valid, err);
    if (!ok) {
        FUZZ_CHECK(got == 0x5A5A5A5A, "a failed encode wrote its output");
        kb_pa_encode(f, &got, big, sizeof big);
        check_message(err, big, "encode");
        return;
    }
    FUZZ_CHECK(got == want, "encode gives 0x%" PRIx64 ", the layout says 0x%" PRIx64, got, want);
    kb_pa_fields back;
    FUZZ_CHECK(kb_pa_decode(got, &back, err, sizeof err), "decode(encode(f)) fails: %s", err);
    kb_pa_fields expect = *f;
    expect.io_index = f->die >= KB_PA_IO_DIE0 ? f->die - KB_PA_IO_DIE0 : 0;
    FUZZ_CHECK(same_fields(&back, &expect), "decode(encode(f)) != f for PA 0x%" PRIx64, got);
}

/* The factories are encode with some fields fixed: same answer, same PA. */
static void check_factory(input *in)
{
    unsigned which = (unsigned)take(in, 1) % 8;
    kb_pa_fields f = take_fields(in);
    uint64_t slice = take(in, 8);
    char err[KB_PA_ERRLEN] = "", big[1024] = "";
    kb_pa got = 0, big_pa = 0;
    bool ok;
    kb_pa_fields as = {.sip = f.sip, .die = f.die, .offset = f.offset};
    bool known = true; /* whether `as` states exactly what the factory must do */
    switch (which) {
    case 0:
        ok = kb_pa_hbm(f.sip, f.die, f.offset, &got, err, sizeof err);
        kb_pa_hbm(f.sip, f.die, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_HBM;
        break;
    case 1: {
        ok = kb_pa_pe_hbm(f.sip, f.die, f.pe, f.offset, slice, &got, err, sizeof err);
        kb_pa_pe_hbm(f.sip, f.die, f.pe, f.offset, slice, &big_pa, big, sizeof big);
        as.kind = KB_PA_HBM;
        /* valid iff pe < 16, 0 < slice <= window, offset < slice, and the sum in the window */
        bool args = f.pe < 16 && slice > 0 && slice <= UINT64_C(1) << 37 && f.offset < slice;
        if (!args) {
            FUZZ_CHECK(!ok, "pe_hbm accepted pe %u offset 0x%" PRIx64 " slice 0x%" PRIx64, f.pe, f.offset, slice);
            known = false;
        } else {
            as.offset = f.pe * slice + f.offset;
        }
        break;
    }
    case 2:
        ok = kb_pa_pe_tcm(f.sip, f.die, f.pe, f.offset, &got, err, sizeof err);
        kb_pa_pe_tcm(f.sip, f.die, f.pe, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_PE_LOCAL;
        as.pe = f.pe;
        as.sub_unit = KB_PE_SU_PE_TCM;
        break;
    case 3:
        ok = kb_pa_pe_local(f.sip, f.die, f.pe, f.sub_unit, f.offset, &got, err, sizeof err);
        kb_pa_pe_local(f.sip, f.die, f.pe, f.sub_unit, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_PE_LOCAL;
        as.pe = f.pe;
        as.sub_unit = f.sub_unit;
        break;
    case 4:
        ok = kb_pa_mcpu(f.sip, f.die, f.sub_unit, f.offset, &got, err, sizeof err);
        kb_pa_mcpu(f.sip, f.die, f.sub_unit, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_MCPU_LOCAL;
        as.sub_unit = f.sub_unit;
        break;
    case 5:
        ok = kb_pa_cube_sram(f.sip, f.die, f.offset, &got, err, sizeof err);
        kb_pa_cube_sram(f.sip, f.die, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_CUBE_SRAM;
        break;
    case 6: /* die is the io_index here */
        ok = kb_pa_iocpu(f.sip, f.die, f.sub_unit, f.offset, &got, err, sizeof err);
        kb_pa_iocpu(f.sip, f.die, f.sub_unit, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_IOCPU;
        as.sub_unit = f.sub_unit;
        as.die = f.die < 5 ? 16 + f.die : 99;
        break;
    default:
        ok = kb_pa_ual(f.sip, f.die, f.offset, &got, err, sizeof err);
        kb_pa_ual(f.sip, f.die, f.offset, &big_pa, big, sizeof big);
        as.kind = KB_PA_UAL;
        as.die = f.die < 5 ? 16 + f.die : 99;
        break;
    }
    if (!ok)
        check_message(err, big, "factory");
    if (!known)
        return;
    uint64_t want = 0;
    bool valid = ref_encode(&as, &want);
    FUZZ_CHECK(ok == valid, "factory %u gives %d, the layout says %d (%s)", which, ok, valid, err);
    FUZZ_CHECK(!ok || got == want, "factory %u gives 0x%" PRIx64 ", the layout says 0x%" PRIx64, which, got, want);
}

static void check_hbm(input *in)
{
    uint64_t off = take(in, 8);
    uint64_t burst = UINT64_C(1) << (take(in, 1) % 64);
    unsigned pcs = 1u << (take(in, 1) % 32);
    uint64_t slice = take(in, 8);
    unsigned pc = kb_addr_hbm_pc(off, burst, pcs);
    FUZZ_CHECK(pc == (off / burst) % pcs, "hbm_pc(0x%" PRIx64 ", %" PRIu64 ", %u) = %u", off, burst, pcs, pc);
    if (slice)
        FUZZ_CHECK(kb_addr_hbm_pe(off, slice) == off / slice, "hbm_pe");
}

static void check_names(input *in)
{
    static const char *(*const name[])(unsigned) = {kb_addr_pe_sub_unit_name, kb_addr_mcpu_sub_unit_name,
                                                    kb_addr_iocpu_sub_unit_name};
    static uint64_t (*const budget[])(unsigned) = {kb_addr_pe_sub_unit_budget, kb_addr_mcpu_sub_unit_budget,
                                                   kb_addr_iocpu_sub_unit_budget};
    static int (*const find[])(const char *) = {kb_addr_pe_sub_unit_find, kb_addr_mcpu_sub_unit_find,
                                                kb_addr_iocpu_sub_unit_find};
    static const uint64_t *const ref[] = {ref_pe_budget, ref_mcpu_budget, ref_iocpu_budget};
    static const unsigned nref[] = {NSUB(ref_pe_budget), NSUB(ref_mcpu_budget), NSUB(ref_iocpu_budget)};
    unsigned t = (unsigned)take(in, 1) % 3, i = (unsigned)take(in, 1);
    const char *n = name[t](i);
    FUZZ_CHECK(budget[t](i) == (i < nref[t] ? ref[t][i] : 0), "table %u: budget of sub-unit %u", t, i);
    FUZZ_CHECK((n != NULL) == (i < nref[t]), "table %u: name of sub-unit %u", t, i);
    if (n)
        FUZZ_CHECK(find[t](n) == (int)i, "table %u: find(name(%u))", t, i);
    char s[64];
    size_t len = in->n < sizeof s - 1 ? in->n : sizeof s - 1;
    memcpy(s, in->p, len);
    s[len] = '\0';
    int k = find[t](s);
    if (k >= 0) {
        const char *kn = name[t]((unsigned)k);
        FUZZ_CHECK(kn && strlen(kn) == strlen(s), "table %u: find(\"%s\") = %d", t, s, k);
        for (size_t j = 0; kn[j]; j++) {
            char c = s[j] >= 'a' && s[j] <= 'z' ? (char)(s[j] - 'a' + 'A') : s[j];
            FUZZ_CHECK(c == kn[j], "table %u: find(\"%s\") = %d (%s)", t, s, k, kn);
        }
    }
}

static void check_format(input *in)
{
    uint64_t pa = take(in, 8);
    size_t n = (size_t)take(in, 1) % 80;
    char full[256], *small = malloc(n ? n : 1);
    int need = kb_pa_format(pa, full, sizeof full);
    int got = kb_pa_format(pa, small, n);
    FUZZ_CHECK(got == need, "format returns %d with %zu bytes, %d with 256", got, n, need);
    if (n) {
        size_t len = strlen(small);
        FUZZ_CHECK(len < n && strncmp(small, full, len) == 0, "format into %zu bytes: \"%s\"", n, small);
    }
    free(small);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    unsigned op = (unsigned)take(&in, 1) % 6;
    switch (op) {
    case 0: check_decode(take(&in, 8)); break;
    case 1: {
        kb_pa_fields f = take_fields(&in);
        check_encode(&f);
        break;
    }
    case 2: check_factory(&in); break;
    case 3: check_hbm(&in); break;
    case 4: check_names(&in); break;
    default: check_format(&in); break;
    }
    return 0;
}
