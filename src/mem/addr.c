/* PhysAddr Rev-2 codec. The only place that knows bit positions (D5). */
#include "mem/addr.h"

#include <stdarg.h>
#include <stdio.h>

#define KiB (UINT64_C(1) << 10)
#define MiB (UINT64_C(1) << 20)

/* Top level. */
#define SIP_HI 52 /* the spec's [50:47], widened (addr.h) */
#define SIP_LO 47
#define DIE_LO 42
#define DIE_RESERVED_LO 21 /* die_id 21..31 */
#define DIE_MAX 31
_Static_assert(SIP_HI + 1 == KB_PA_BITS, "sip_id is the top field");
_Static_assert(KB_PA_SIPS == 1 << (SIP_HI - SIP_LO + 1), "KB_PA_SIPS fills sip_id");

/* AHBM die local_offset. */
#define ADDR_SPACE_BIT 37 /* 1 = HBM */
#define RKIND_LO 34       /* resource_kind [36:34] */
#define RKIND_PE_LOCAL 0u
#define RKIND_MCPU 1u
#define RKIND_CUBE_SRAM 2u
#define SLOT_SUB_LO 25 /* PE/MCPU sub-unit field starts here; sub_offset [24:0] */
#define PE_ID_LO 29    /* pe_id [32:29] */

/* IOCHIPLET die chiplet_offset, IOCPU region. */
#define IOCPU_SUB_LO 27 /* iocpu_sub_unit [30:27], sub_offset [26:0] */

typedef struct sub_unit_info {
    const char *name;
    uint64_t budget;
    uint64_t limit; /* what decoding accepts, when a topology may size the unit beyond its budget (0: the budget) */
} sub_unit_info;

typedef struct sub_table {
    const sub_unit_info *units;
    unsigned count; /* defined sub-units: 0..count-1 */
    unsigned slots; /* 2^(width of the sub-unit field) */
} sub_table;

static const sub_unit_info pe_units[KB_PE_SU_COUNT] = {
    {"PE_CPU_DTCM", 8 * KiB, 0},      {"MATH_ENGINE_DTCM", 8 * KiB, 0}, {"IPCQ", 256 * KiB, KB_PA_PE_IPCQ_MAX_BYTES},
    {"PE_CPU_SFR", 16 * KiB, 0},      {"MATH_ENGINE_SFR", 16 * KiB, 0}, {"DMA_ENGINE_SFR", 192 * KiB, 0},
    {"PE_TCM", 2 * MiB, 0},
};
static const sub_unit_info mcpu_units[KB_MCPU_SU_COUNT] = {
    {"MCPU_ITCM", 512 * KiB, 0}, {"MCPU_DTCM", 512 * KiB, 0},   {"IPCQ", 256 * KiB, 0},
    {"MCPU_SFR", 8 * KiB, 0},    {"MCPU_DMA_SFR", 16 * KiB, 0}, {"MCPU_SRAM", 10 * MiB, 0},
};
static const sub_unit_info iocpu_units[KB_IOCPU_SU_COUNT] = {
    {"IOCPU_ITCM", 512 * KiB, 0}, {"IOCPU_DTCM", 512 * KiB, 0}, {"IPCQ", 2 * MiB, 0},
    {"IOCPU_SFR", 8 * KiB, 0},    {"IO_DMA_SFR", 16 * KiB, 0},  {"IO_SRAM", 64 * MiB, 0},
};

static const sub_table pe_table = {pe_units, KB_PE_SU_COUNT, 16};
static const sub_table mcpu_table = {mcpu_units, KB_MCPU_SU_COUNT, 32};
static const sub_table iocpu_table = {iocpu_units, KB_IOCPU_SU_COUNT, 16};

static const char *const kind_names[KB_PA_NKINDS] = {"hbm", "pe_local", "mcpu_local", "cube_sram", "iocpu", "ual"};

/* ---- helpers ---- */

static uint64_t field(uint64_t v, unsigned hi, unsigned lo) { return (v >> lo) & ((UINT64_C(2) << (hi - lo)) - 1); }

static bool fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return false;
}

/* "8 KiB", "10 MiB", "128 GiB": exact for every size in this codec. */
static const char *size_str(uint64_t bytes, char buf[32])
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    unsigned u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, 32, "%llu %s", (unsigned long long)bytes, units[u]);
    return buf;
}

static const sub_table *table_of(int kind)
{
    switch (kind) {
    case KB_PA_PE_LOCAL: return &pe_table;
    case KB_PA_MCPU_LOCAL: return &mcpu_table;
    case KB_PA_IOCPU: return &iocpu_table;
    default: return NULL;
    }
}

static const char *sub_name(const sub_table *t, unsigned su) { return su < t->count ? t->units[su].name : NULL; }
static uint64_t sub_budget(const sub_table *t, unsigned su) { return su < t->count ? t->units[su].budget : 0; }

static int sub_find(const sub_table *t, const char *name)
{
    if (!name)
        return -1;
    for (unsigned i = 0; i < t->count; i++) {
        const char *a = t->units[i].name, *b = name;
        while (*a && *b) {
            char ca = *a >= 'a' && *a <= 'z' ? (char)(*a - 'a' + 'A') : *a;
            char cb = *b >= 'a' && *b <= 'z' ? (char)(*b - 'a' + 'A') : *b;
            if (ca != cb)
                break;
            a++;
            b++;
        }
        if (!*a && !*b)
            return (int)i;
    }
    return -1;
}

/* Checks shared by encode and decode. ctx prefixes the message ("PA 0x..: "
 * or ""); the *_arg strings name the field or argument. */

static bool check_die(const char *ctx, const char *die_arg, unsigned die, bool want_io, int kind, char *err,
                      size_t errlen)
{
    if (die > DIE_MAX)
        return fail(err, errlen, "%s%s %u is out of range (0..%u)", ctx, die_arg, die, DIE_MAX);
    if (die >= DIE_RESERVED_LO)
        return fail(err, errlen, "%s%s %u is reserved (%u..%u)", ctx, die_arg, die, DIE_RESERVED_LO, DIE_MAX);
    if (want_io && die < KB_PA_IO_DIE0)
        return fail(err, errlen, "%s%s %u is an AHBM die; %s needs an IOCHIPLET die (%u..%u)", ctx, die_arg, die,
                    kind_names[kind], KB_PA_IO_DIE0, KB_PA_IO_DIE0 + KB_PA_IO_DIES - 1);
    if (!want_io && die >= KB_PA_IO_DIE0)
        return fail(err, errlen, "%s%s %u is an IOCHIPLET die; %s needs an AHBM die (0..%u)", ctx, die_arg, die,
                    kind_names[kind], KB_PA_AHBM_DIES - 1);
    return true;
}

static bool check_sub(const char *ctx, const char *su_arg, const char *off_arg, int kind, unsigned su,
                      uint64_t off, char *err, size_t errlen)
{
    const sub_table *t = table_of(kind);
    if (su >= t->slots)
        return fail(err, errlen, "%s%s %u is out of range (0..%u)", ctx, su_arg, su, t->slots - 1);
    if (su >= t->count)
        return fail(err, errlen, "%s%s %u is reserved (%u..%u)", ctx, su_arg, su, t->count, t->slots - 1);
    uint64_t limit = t->units[su].limit ? t->units[su].limit : t->units[su].budget;
    if (off >= limit) {
        char sz[32];
        return fail(err, errlen, "%s%s 0x%llx exceeds the %s budget of %s", ctx, off_arg, (unsigned long long)off,
                    t->units[su].name, size_str(t->units[su].budget, sz));
    }
    return true;
}

static bool check_mbz(const char *ctx, kb_pa pa, unsigned hi, unsigned lo, const char *window, char *err,
                      size_t errlen)
{
    uint64_t v = field(pa, hi, lo);
    if (v == 0)
        return true;
    if (hi == lo)
        return fail(err, errlen, "%sbit [%u] (%s MBZ) must be zero", ctx, hi, window);
    return fail(err, errlen, "%sbits [%u:%u] (%s MBZ) must be zero, got 0x%llx", ctx, hi, lo, window,
                (unsigned long long)v);
}

/* ---- decode ---- */

bool kb_pa_decode(kb_pa pa, kb_pa_fields *out, char *err, size_t errlen)
{
    char ctx[40];
    snprintf(ctx, sizeof ctx, "PA 0x%llx: ", (unsigned long long)pa);
    if (pa > KB_PA_MAX)
        return fail(err, errlen, "%svalue exceeds %d bits", ctx, KB_PA_BITS);

    kb_pa_fields f = {0};
    f.sip = (unsigned)field(pa, SIP_HI, SIP_LO);
    f.die = (unsigned)field(pa, 46, DIE_LO);
    if (f.die >= DIE_RESERVED_LO)
        return fail(err, errlen, "%sdie_id %u is reserved (%u..%u)", ctx, f.die, DIE_RESERVED_LO, DIE_MAX);

    if (f.die < KB_PA_IO_DIE0) {
        if (!check_mbz(ctx, pa, 41, 38, "AHBM", err, errlen))
            return false;
        if (field(pa, ADDR_SPACE_BIT, ADDR_SPACE_BIT)) {
            f.kind = KB_PA_HBM;
            f.offset = field(pa, 36, 0);
        } else {
            unsigned rkind = (unsigned)field(pa, 36, RKIND_LO);
            switch (rkind) {
            case RKIND_PE_LOCAL:
                if (!check_mbz(ctx, pa, 33, 33, "PE_LOCAL", err, errlen))
                    return false;
                f.kind = KB_PA_PE_LOCAL;
                f.pe = (unsigned)field(pa, 32, PE_ID_LO);
                f.sub_unit = (unsigned)field(pa, 28, SLOT_SUB_LO);
                f.offset = field(pa, 24, 0);
                if (!check_sub(ctx, "pe_sub_unit", "sub_offset", f.kind, f.sub_unit, f.offset, err, errlen))
                    return false;
                break;
            case RKIND_MCPU:
                if (!check_mbz(ctx, pa, 33, 30, "MCPU_LOCAL", err, errlen))
                    return false;
                f.kind = KB_PA_MCPU_LOCAL;
                f.sub_unit = (unsigned)field(pa, 29, SLOT_SUB_LO);
                f.offset = field(pa, 24, 0);
                if (!check_sub(ctx, "mcpu_sub_unit", "sub_offset", f.kind, f.sub_unit, f.offset, err, errlen))
                    return false;
                break;
            case RKIND_CUBE_SRAM:
                if (!check_mbz(ctx, pa, 33, 25, "CUBE_SRAM", err, errlen))
                    return false;
                f.kind = KB_PA_CUBE_SRAM;
                f.offset = field(pa, 24, 0);
                break;
            default: return fail(err, errlen, "%sresource_kind %u is reserved (3..7)", ctx, rkind);
            }
        }
    } else {
        if (!check_mbz(ctx, pa, 41, 40, "IOCHIPLET", err, errlen))
            return false;
        f.io_index = f.die - KB_PA_IO_DIE0;
        uint64_t chiplet = field(pa, 39, 0);
        if (chiplet < KB_PA_UAL_BASE) {
            f.kind = KB_PA_IOCPU;
            f.sub_unit = (unsigned)field(pa, 30, IOCPU_SUB_LO);
            f.offset = field(pa, IOCPU_SUB_LO - 1, 0);
            if (!check_sub(ctx, "iocpu_sub_unit", "sub_offset", f.kind, f.sub_unit, f.offset, err, errlen))
                return false;
        } else {
            f.kind = KB_PA_UAL;
            f.offset = chiplet;
        }
    }
    if (out)
        *out = f;
    return true;
}

/* ---- encode ---- */

/* Argument names used in messages: sip/pe/sub_unit are fixed, the die and
 * offset names vary by entry point. */
static bool build(const kb_pa_fields *f, const char *die_arg, const char *off_arg, kb_pa *out, char *err,
                  size_t errlen)
{
    if (f->kind < 0 || f->kind >= KB_PA_NKINDS)
        return fail(err, errlen, "kind %d is not a PA kind (0..%d)", f->kind, KB_PA_NKINDS - 1);
    const char *kname = kind_names[f->kind];
    if (f->sip >= KB_PA_SIPS)
        return fail(err, errlen, "sip %u is out of range (0..%u)", f->sip, KB_PA_SIPS - 1);
    bool io = f->kind == KB_PA_IOCPU || f->kind == KB_PA_UAL;
    if (!check_die("", die_arg, f->die, io, f->kind, err, errlen))
        return false;
    if (f->kind != KB_PA_PE_LOCAL && f->pe != 0)
        return fail(err, errlen, "pe %u must be 0 for a %s address", f->pe, kname);
    if (!table_of(f->kind) && f->sub_unit != 0)
        return fail(err, errlen, "sub_unit %u must be 0 for a %s address", f->sub_unit, kname);

    uint64_t off = f->offset, local = 0;
    char sz[32];
    switch (f->kind) {
    case KB_PA_HBM:
        if (off >= KB_PA_HBM_WINDOW)
            return fail(err, errlen, "%s 0x%llx exceeds the %s HBM window", off_arg, (unsigned long long)off,
                        size_str(KB_PA_HBM_WINDOW, sz));
        local = (UINT64_C(1) << ADDR_SPACE_BIT) | off;
        break;
    case KB_PA_PE_LOCAL:
        if (f->pe >= KB_PA_PES)
            return fail(err, errlen, "pe %u is out of range (0..%u)", f->pe, KB_PA_PES - 1);
        if (!check_sub("", "sub_unit", off_arg, f->kind, f->sub_unit, off, err, errlen))
            return false;
        local = ((uint64_t)RKIND_PE_LOCAL << RKIND_LO) | ((uint64_t)f->pe << PE_ID_LO) |
                ((uint64_t)f->sub_unit << SLOT_SUB_LO) | off;
        break;
    case KB_PA_MCPU_LOCAL:
        if (!check_sub("", "sub_unit", off_arg, f->kind, f->sub_unit, off, err, errlen))
            return false;
        local = ((uint64_t)RKIND_MCPU << RKIND_LO) | ((uint64_t)f->sub_unit << SLOT_SUB_LO) | off;
        break;
    case KB_PA_CUBE_SRAM:
        if (off >= KB_PA_CUBE_SRAM_BYTES)
            return fail(err, errlen, "%s 0x%llx exceeds the %s CUBE_SRAM window", off_arg, (unsigned long long)off,
                        size_str(KB_PA_CUBE_SRAM_BYTES, sz));
        local = ((uint64_t)RKIND_CUBE_SRAM << RKIND_LO) | off;
        break;
    case KB_PA_IOCPU:
        if (!check_sub("", "sub_unit", off_arg, f->kind, f->sub_unit, off, err, errlen))
            return false;
        local = ((uint64_t)f->sub_unit << IOCPU_SUB_LO) | off;
        break;
    case KB_PA_UAL:
        if (off < KB_PA_UAL_BASE)
            return fail(err, errlen, "%s 0x%llx is below the UAL base of %s (the IOCPU region)", off_arg,
                        (unsigned long long)off, size_str(KB_PA_UAL_BASE, sz));
        if (off >= KB_PA_IOCHIPLET_WINDOW)
            return fail(err, errlen, "%s 0x%llx exceeds the %s IOCHIPLET window", off_arg, (unsigned long long)off,
                        size_str(KB_PA_IOCHIPLET_WINDOW, sz));
        local = off;
        break;
    }
    *out = ((uint64_t)f->sip << SIP_LO) | ((uint64_t)f->die << DIE_LO) | local;
    return true;
}

bool kb_pa_encode(const kb_pa_fields *f, kb_pa *out, char *err, size_t errlen)
{
    return build(f, "die", "offset", out, err, errlen);
}

static bool build_ahbm(int kind, unsigned sip, unsigned die, unsigned pe, unsigned sub_unit, uint64_t offset,
                       const char *off_arg, kb_pa *out, char *err, size_t errlen)
{
    kb_pa_fields f = {.sip = sip, .die = die, .kind = kind, .pe = pe, .sub_unit = sub_unit, .offset = offset};
    return build(&f, "die", off_arg, out, err, errlen);
}

static bool build_io(int kind, unsigned sip, unsigned io_index, unsigned sub_unit, uint64_t offset,
                     const char *off_arg, kb_pa *out, char *err, size_t errlen)
{
    if (io_index >= KB_PA_IO_DIES)
        return fail(err, errlen, "io_index %u is out of range (0..%u)", io_index, KB_PA_IO_DIES - 1);
    kb_pa_fields f = {
        .sip = sip, .die = KB_PA_IO_DIE0 + io_index, .kind = kind, .sub_unit = sub_unit, .offset = offset};
    return build(&f, "die", off_arg, out, err, errlen);
}

bool kb_pa_hbm(unsigned sip, unsigned die, uint64_t hbm_offset, kb_pa *out, char *err, size_t errlen)
{
    return build_ahbm(KB_PA_HBM, sip, die, 0, 0, hbm_offset, "hbm_offset", out, err, errlen);
}

bool kb_pa_pe_hbm(unsigned sip, unsigned die, unsigned pe, uint64_t pe_local_offset, uint64_t slice_bytes,
                  kb_pa *out, char *err, size_t errlen)
{
    char sz[32];
    if (pe >= KB_PA_PES)
        return fail(err, errlen, "pe %u is out of range (0..%u)", pe, KB_PA_PES - 1);
    if (slice_bytes == 0)
        return fail(err, errlen, "slice_bytes must be > 0");
    if (slice_bytes > KB_PA_HBM_WINDOW)
        return fail(err, errlen, "slice_bytes 0x%llx exceeds the %s HBM window", (unsigned long long)slice_bytes,
                    size_str(KB_PA_HBM_WINDOW, sz));
    if (pe_local_offset >= slice_bytes)
        return fail(err, errlen, "pe_local_offset 0x%llx is not below slice_bytes 0x%llx",
                    (unsigned long long)pe_local_offset, (unsigned long long)slice_bytes);
    uint64_t hbm_offset = pe * slice_bytes + pe_local_offset; /* < 16 * 2^37: no overflow */
    if (hbm_offset >= KB_PA_HBM_WINDOW)
        return fail(err, errlen, "hbm_offset 0x%llx (pe * slice_bytes + pe_local_offset) exceeds the %s HBM window",
                    (unsigned long long)hbm_offset, size_str(KB_PA_HBM_WINDOW, sz));
    return build_ahbm(KB_PA_HBM, sip, die, 0, 0, hbm_offset, "hbm_offset", out, err, errlen);
}

bool kb_pa_pe_tcm(unsigned sip, unsigned die, unsigned pe, uint64_t tcm_offset, kb_pa *out, char *err,
                  size_t errlen)
{
    return build_ahbm(KB_PA_PE_LOCAL, sip, die, pe, KB_PE_SU_PE_TCM, tcm_offset, "tcm_offset", out, err, errlen);
}

bool kb_pa_pe_local(unsigned sip, unsigned die, unsigned pe, unsigned sub_unit, uint64_t offset, kb_pa *out,
                    char *err, size_t errlen)
{
    return build_ahbm(KB_PA_PE_LOCAL, sip, die, pe, sub_unit, offset, "offset", out, err, errlen);
}

bool kb_pa_mcpu(unsigned sip, unsigned die, unsigned sub_unit, uint64_t offset, kb_pa *out, char *err,
                size_t errlen)
{
    return build_ahbm(KB_PA_MCPU_LOCAL, sip, die, 0, sub_unit, offset, "offset", out, err, errlen);
}

bool kb_pa_cube_sram(unsigned sip, unsigned die, uint64_t sram_offset, kb_pa *out, char *err, size_t errlen)
{
    return build_ahbm(KB_PA_CUBE_SRAM, sip, die, 0, 0, sram_offset, "sram_offset", out, err, errlen);
}

bool kb_pa_iocpu(unsigned sip, unsigned io_index, unsigned sub_unit, uint64_t offset, kb_pa *out, char *err,
                 size_t errlen)
{
    return build_io(KB_PA_IOCPU, sip, io_index, sub_unit, offset, "offset", out, err, errlen);
}

bool kb_pa_ual(unsigned sip, unsigned io_index, uint64_t chiplet_offset, kb_pa *out, char *err, size_t errlen)
{
    return build_io(KB_PA_UAL, sip, io_index, 0, chiplet_offset, "chiplet_offset", out, err, errlen);
}

/* ---- names and formatting ---- */

const char *kb_pa_kind_name(int kind) { return kind >= 0 && kind < KB_PA_NKINDS ? kind_names[kind] : NULL; }

int kb_pa_format(kb_pa pa, char *buf, size_t n)
{
    kb_pa_fields f;
    char err[KB_PA_ERRLEN];
    if (!kb_pa_decode(pa, &f, err, sizeof err))
        return snprintf(buf, n, "invalid %s", err);
    unsigned long long off = (unsigned long long)f.offset;
    switch (f.kind) {
    case KB_PA_HBM: return snprintf(buf, n, "sip%u.die%u hbm offset 0x%llx", f.sip, f.die, off);
    case KB_PA_PE_LOCAL:
        return snprintf(buf, n, "sip%u.die%u pe%u %s +0x%llx", f.sip, f.die, f.pe, sub_name(&pe_table, f.sub_unit),
                        off);
    case KB_PA_MCPU_LOCAL:
        return snprintf(buf, n, "sip%u.die%u mcpu %s +0x%llx", f.sip, f.die, sub_name(&mcpu_table, f.sub_unit), off);
    case KB_PA_CUBE_SRAM: return snprintf(buf, n, "sip%u.die%u cube_sram offset 0x%llx", f.sip, f.die, off);
    case KB_PA_IOCPU:
        return snprintf(buf, n, "sip%u.die%u iocpu %s +0x%llx", f.sip, f.die, sub_name(&iocpu_table, f.sub_unit),
                        off);
    default: return snprintf(buf, n, "sip%u.die%u ual offset 0x%llx", f.sip, f.die, off);
    }
}

const char *kb_addr_pe_sub_unit_name(unsigned sub_unit) { return sub_name(&pe_table, sub_unit); }
uint64_t kb_addr_pe_sub_unit_budget(unsigned sub_unit) { return sub_budget(&pe_table, sub_unit); }
int kb_addr_pe_sub_unit_find(const char *name) { return sub_find(&pe_table, name); }
const char *kb_addr_mcpu_sub_unit_name(unsigned sub_unit) { return sub_name(&mcpu_table, sub_unit); }
uint64_t kb_addr_mcpu_sub_unit_budget(unsigned sub_unit) { return sub_budget(&mcpu_table, sub_unit); }
int kb_addr_mcpu_sub_unit_find(const char *name) { return sub_find(&mcpu_table, name); }
const char *kb_addr_iocpu_sub_unit_name(unsigned sub_unit) { return sub_name(&iocpu_table, sub_unit); }
uint64_t kb_addr_iocpu_sub_unit_budget(unsigned sub_unit) { return sub_budget(&iocpu_table, sub_unit); }
int kb_addr_iocpu_sub_unit_find(const char *name) { return sub_find(&iocpu_table, name); }

unsigned kb_addr_hbm_pc(uint64_t hbm_offset, uint64_t burst_bytes, unsigned num_pcs)
{
    return (unsigned)((hbm_offset / burst_bytes) & (num_pcs - 1u));
}

uint64_t kb_addr_hbm_pe(uint64_t hbm_offset, uint64_t slice_bytes) { return hbm_offset / slice_bytes; }
