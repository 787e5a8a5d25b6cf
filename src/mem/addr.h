/* The physical address (PhysAddr), Rev-2 layout: encode, decode and the
 * sub-unit tables. Spec: memory-addressing.md section 1.
 *
 *   [52:47] sip_id   [46:42] die_id   [41:0] local_offset (4 TiB per die)
 *   die 0..15  AHBM (die = cube index); 16..20 IOCHIPLET (io_index = die-16);
 *   21..31 reserved.
 *
 * The spec's PA is 51 bits with a 4-bit sip_id [50:47] (16 SIPs). We widen
 * sip_id upward to 6 bits (64 SIPs, a 53-bit PA): bits [52:51] are zero
 * for SIPs 0..15, so their addresses are the spec's, bit for bit
 * (docs/decisions.md, "Trays beyond 16 SIPs").
 *
 * Decode is purely positional: it never consults the topology, so it cannot
 * check implemented capacity (HBM size, PEs per cube); that is the
 * validator's job. It does reject every architecturally invalid address:
 * non-zero MBZ bits, reserved die ids / resource kinds / sub-units, and
 * offsets at or beyond a sub-unit's budget. Raw bit positions stay inside
 * addr.c; everything else works on kb_pa_fields.
 *
 * Sizes: the spec's KB/MB/GB/TB are KiB/MiB/GiB/TiB. Error messages are
 * one line, name the offending field (decode) or argument (encode), and fit
 * in KB_PA_ERRLEN bytes; err may be NULL or errlen 0. */
#ifndef KB_MEM_ADDR_H
#define KB_MEM_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t kb_pa;

#define KB_PA_BITS 53 /* the spec's 51 + 2 more sip_id bits */
#define KB_PA_MAX ((UINT64_C(1) << KB_PA_BITS) - 1)
#define KB_PA_ERRLEN 128 /* enough for any codec error message */

#define KB_PA_SIPS 64       /* sip_id 0..63 */
#define KB_PA_AHBM_DIES 16  /* die_id 0..15 */
#define KB_PA_IO_DIE0 16    /* IOCHIPLET[k] is die 16+k */
#define KB_PA_IO_DIES 5     /* io_index 0..4 */
#define KB_PA_PES 16        /* pe_id 0..15 in the PE_LOCAL window */
#define KB_PA_HBM_WINDOW (UINT64_C(1) << 37)       /* hbm_offset < 128 GiB */
#define KB_PA_CUBE_SRAM_BYTES (UINT64_C(1) << 25)  /* sram_offset < 32 MiB */
#define KB_PA_UAL_BASE (UINT64_C(1) << 31)         /* chiplet_offset >= 2 GiB is UAL */
#define KB_PA_IOCHIPLET_WINDOW (UINT64_C(1) << 40) /* chiplet_offset < 1 TiB */

/* Decoded target kinds (D3). */
typedef enum kb_pa_kind {
    KB_PA_HBM,        /* AHBM die, addr_space 1 */
    KB_PA_PE_LOCAL,   /* AHBM die, resource_kind 000 */
    KB_PA_MCPU_LOCAL, /* AHBM die, resource_kind 001 */
    KB_PA_CUBE_SRAM,  /* AHBM die, resource_kind 010 */
    KB_PA_IOCPU,      /* IOCHIPLET die, chiplet_offset < 2 GiB */
    KB_PA_UAL,        /* IOCHIPLET die, chiplet_offset >= 2 GiB */
    KB_PA_NKINDS
} kb_pa_kind;

/* PE_LOCAL sub-units (pe_sub_unit, 4 bits; 7..15 reserved), 32 MiB slots. */
typedef enum kb_pe_sub_unit {
    KB_PE_SU_PE_CPU_DTCM,      /* 8 KiB */
    KB_PE_SU_MATH_ENGINE_DTCM, /* 8 KiB */
    KB_PE_SU_IPCQ,             /* 256 KiB */
    KB_PE_SU_PE_CPU_SFR,       /* 16 KiB */
    KB_PE_SU_MATH_ENGINE_SFR,  /* 16 KiB */
    KB_PE_SU_DMA_ENGINE_SFR,   /* 192 KiB */
    KB_PE_SU_PE_TCM,           /* 2 MiB */
    KB_PE_SU_COUNT
} kb_pe_sub_unit;

/* MCPU_LOCAL sub-units (mcpu_sub_unit, 5 bits; 6..31 reserved), 32 MiB slots. */
typedef enum kb_mcpu_sub_unit {
    KB_MCPU_SU_MCPU_ITCM,    /* 512 KiB */
    KB_MCPU_SU_MCPU_DTCM,    /* 512 KiB */
    KB_MCPU_SU_IPCQ,         /* 256 KiB */
    KB_MCPU_SU_MCPU_SFR,     /* 8 KiB */
    KB_MCPU_SU_MCPU_DMA_SFR, /* 16 KiB */
    KB_MCPU_SU_MCPU_SRAM,    /* 10 MiB */
    KB_MCPU_SU_COUNT
} kb_mcpu_sub_unit;

/* IOCPU sub-units (iocpu_sub_unit, 4 bits; 6..15 reserved), 128 MiB slots. */
typedef enum kb_iocpu_sub_unit {
    KB_IOCPU_SU_IOCPU_ITCM, /* 512 KiB */
    KB_IOCPU_SU_IOCPU_DTCM, /* 512 KiB */
    KB_IOCPU_SU_IPCQ,       /* 2 MiB */
    KB_IOCPU_SU_IOCPU_SFR,  /* 8 KiB */
    KB_IOCPU_SU_IO_DMA_SFR, /* 16 KiB */
    KB_IOCPU_SU_IO_SRAM,    /* 64 MiB */
    KB_IOCPU_SU_COUNT
} kb_iocpu_sub_unit;

/* A decoded address. Fields a kind does not use are 0.
 *   sip       0..63
 *   die       0..15 for AHBM kinds, 16..20 for KB_PA_IOCPU / KB_PA_UAL
 *   kind      a kb_pa_kind
 *   pe        PE_LOCAL only: pe_id 0..15 (an HBM address carries no PE;
 *             its slice is hbm_offset / slice_bytes, see kb_addr_hbm_pe)
 *   sub_unit  PE_LOCAL / MCPU_LOCAL / IOCPU: index into that kind's table
 *   offset    HBM: hbm_offset (< 128 GiB)
 *             PE_LOCAL, MCPU_LOCAL, IOCPU: sub_offset (< the sub-unit budget)
 *             CUBE_SRAM: sram_offset (< 32 MiB)
 *             UAL: chiplet_offset (2 GiB <= offset < 1 TiB)
 *   io_index  IOCPU / UAL: die - 16 (0..4). Output only: encode ignores it. */
typedef struct kb_pa_fields {
    unsigned sip, die;
    int kind;
    unsigned pe;
    unsigned sub_unit;
    uint64_t offset;
    unsigned io_index;
} kb_pa_fields;

/* Decodes pa. On success fills *out (if out is not NULL) and returns true;
 * on failure leaves *out untouched, writes "PA 0x...: <field> ..." to err
 * and returns false. */
bool kb_pa_decode(kb_pa pa, kb_pa_fields *out, char *err, size_t errlen);

/* Encodes f (reading sip, die, kind, pe, sub_unit, offset as documented on
 * kb_pa_fields). Fields f->kind does not use must be 0. Returns false with
 * the offending field named in err if f does not describe a valid address;
 * *out is then untouched. encode(decode(pa)) == pa for every valid pa. */
bool kb_pa_encode(const kb_pa_fields *f, kb_pa *out, char *err, size_t errlen);

/* Factories: validate like kb_pa_encode and name the bad argument. */
bool kb_pa_hbm(unsigned sip, unsigned die, uint64_t hbm_offset, kb_pa *out, char *err, size_t errlen);
/* hbm_offset = pe * slice_bytes + pe_local_offset; requires pe 0..15,
 * slice_bytes > 0, pe_local_offset < slice_bytes and the sum in the window. */
bool kb_pa_pe_hbm(unsigned sip, unsigned die, unsigned pe, uint64_t pe_local_offset, uint64_t slice_bytes,
                  kb_pa *out, char *err, size_t errlen);
/* PE_LOCAL, sub-unit PE_TCM. */
bool kb_pa_pe_tcm(unsigned sip, unsigned die, unsigned pe, uint64_t tcm_offset, kb_pa *out, char *err,
                  size_t errlen);
bool kb_pa_pe_local(unsigned sip, unsigned die, unsigned pe, unsigned sub_unit, uint64_t offset, kb_pa *out,
                    char *err, size_t errlen);
bool kb_pa_mcpu(unsigned sip, unsigned die, unsigned sub_unit, uint64_t offset, kb_pa *out, char *err,
                size_t errlen);
bool kb_pa_cube_sram(unsigned sip, unsigned die, uint64_t sram_offset, kb_pa *out, char *err, size_t errlen);
/* IOCHIPLET[io_index] (die 16 + io_index). */
bool kb_pa_iocpu(unsigned sip, unsigned io_index, unsigned sub_unit, uint64_t offset, kb_pa *out, char *err,
                 size_t errlen);
bool kb_pa_ual(unsigned sip, unsigned io_index, uint64_t chiplet_offset, kb_pa *out, char *err, size_t errlen);

/* "hbm", "pe_local", "mcpu_local", "cube_sram", "iocpu", "ual"; NULL for
 * anything else. */
const char *kb_pa_kind_name(int kind);

/* One-line description of pa, snprintf-style (returns the length needed):
 *   sip2.die5 hbm offset 0x1000        sip0.die0 pe3 PE_TCM +0x400
 *   sip1.die3 mcpu MCPU_SRAM +0x0      sip0.die0 cube_sram offset 0x40
 *   sip1.die17 iocpu IPCQ +0x20000     sip0.die16 ual offset 0x100000000
 * An invalid pa gives "invalid PA 0x...: <reason>". */
int kb_pa_format(kb_pa pa, char *buf, size_t n);

/* Sub-unit tables. name: the spec's name, NULL for a reserved or
 * out-of-range index; budget: implemented bytes, 0 for reserved;
 * find: index of an ASCII case-insensitive name match, -1 if none. */
const char *kb_addr_pe_sub_unit_name(unsigned sub_unit);
uint64_t kb_addr_pe_sub_unit_budget(unsigned sub_unit);
/* A PE's IPCQ window is 256 KiB (its budget) unless the topology sizes it
 * (pe_ipcq.attrs.window_kb) up to its whole 32 MiB address slot: decoding
 * accepts offsets up to this, resolving against a topology (kb_resolve_pa)
 * up to that PE's window. */
#define KB_PA_PE_IPCQ_MAX_BYTES (UINT64_C(32) << 20)
int kb_addr_pe_sub_unit_find(const char *name);
const char *kb_addr_mcpu_sub_unit_name(unsigned sub_unit);
uint64_t kb_addr_mcpu_sub_unit_budget(unsigned sub_unit);
int kb_addr_mcpu_sub_unit_find(const char *name);
const char *kb_addr_iocpu_sub_unit_name(unsigned sub_unit);
uint64_t kb_addr_iocpu_sub_unit_budget(unsigned sub_unit);
int kb_addr_iocpu_sub_unit_find(const char *name);

/* HBM pseudo-channel of a byte offset: (hbm_offset / burst_bytes) mod
 * num_pcs. burst_bytes and num_pcs are non-zero powers of two; with 256 B
 * bursts and 8 PCs, bits [10:8] are the PC index. */
unsigned kb_addr_hbm_pc(uint64_t hbm_offset, uint64_t burst_bytes, unsigned num_pcs);

/* The PE whose HBM slice holds hbm_offset: hbm_offset / slice_bytes
 * (slice_bytes > 0). */
uint64_t kb_addr_hbm_pe(uint64_t hbm_offset, uint64_t slice_bytes);

#endif
