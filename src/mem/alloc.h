/* First-fit allocators with coalescing (memory-addressing.md §4.2-4.4):
 * the free list is sorted by address; allocation carves the front of the
 * first block that fits (after alignment); freeing coalesces with both
 * neighbours. Frees are checked: freeing an address
 * that is not the start of a live allocation (never allocated, interior,
 * or already freed) is an error naming it, and leaves the state unchanged.
 * Live allocations are a sorted array searched by bisection, so a free finds
 * its block in O(log n) (plus a memmove); nothing depends on hash order.
 *
 * The same mechanism serves an HBM slice (base 0, the slice's size), a TCM
 * (the allocatable part only: the scheduler-reserved region is outside the
 * range by construction) and the device-wide VA space (sizes rounded up to
 * whole pages, page-aligned); see the named constructors at the end.
 *
 * Error messages are malloc'd one-line strings (the caller frees them). */
#ifndef KB_MEM_ALLOC_H
#define KB_MEM_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_span {
    uint64_t start, size;
} kb_span;

/* Fields are readable (tests check invariants); change them only through
 * the functions below. */
typedef struct kb_alloc {
    uint64_t base, size;
    uint64_t granule;   /* minimum alignment and size quantum (1, or the page size) */
    kb_span *free;      /* sorted by start, non-overlapping, non-adjacent */
    size_t nfree, cap_free;
    kb_span *live;      /* sorted by start; sizes are the rounded (charged) sizes */
    size_t nlive, cap_live;
    uint64_t used;      /* sum of live sizes; used + free bytes == size */
} kb_alloc;

/* ---- the mechanism ---- */

/* Checks init's arguments: granule 0 or 1 (bytes) or a power of two, base a
 * multiple of it, and base + size <= UINT64_MAX. For callers holding
 * untrusted values; false with a message otherwise. */
bool kb_alloc_check_range(uint64_t base, uint64_t size, uint64_t granule, char **err);

/* Manages [base, base + size). granule (the minimum alignment, "min_align")
 * also rounds every size up to a multiple of itself, so every block start
 * stays granule-aligned: 0 or 1 for byte allocators, the page size for a VA
 * allocator. Arguments must pass kb_alloc_check_range (a violation is a
 * programming error: it aborts with a message). A tail shorter than one
 * granule can never be handed out. Release with kb_alloc_fini. */
void kb_alloc_init(kb_alloc *a, uint64_t base, uint64_t size, uint64_t granule);
void kb_alloc_fini(kb_alloc *a);
/* Back to the initial state: everything free, no live allocations. */
void kb_alloc_reset(kb_alloc *a);

/* Allocates nbytes at the lowest address that fits, aligned to
 * max(align, granule); align is a power of two (0 means 1). The charged size
 * is nbytes rounded up to the granule; alignment padding in front stays
 * free. A 0-byte request is an error (the spec does not say; a zero-size
 * block would share its address with the next allocation and make frees
 * ambiguous). On failure nothing changes and *err says why; exhaustion is
 *   "out of memory: 4096 bytes requested (alignment 256), largest free block
 *    1024 bytes, 3072 of 65536 bytes free"
 * (with "8192 in 4096-byte granules, " before "alignment" when rounded). */
bool kb_alloc_alloc(kb_alloc *a, uint64_t nbytes, uint64_t align, uint64_t *out, char **err);
/* Frees the live allocation that starts at addr, coalescing with free
 * neighbours. An address that starts no live allocation (outside the range,
 * interior to one, never allocated, or freed already) is an error naming it
 * (and the enclosing allocation, for an interior address); nothing changes. */
bool kb_alloc_free(kb_alloc *a, uint64_t addr, char **err);

uint64_t kb_alloc_free_bytes(const kb_alloc *a);
uint64_t kb_alloc_used_bytes(const kb_alloc *a);
uint64_t kb_alloc_largest_free(const kb_alloc *a); /* O(free blocks) */
size_t kb_alloc_live_count(const kb_alloc *a);
/* The charged size of the live allocation starting at addr; 0 if none. */
uint64_t kb_alloc_live_size(const kb_alloc *a, uint64_t addr);
/* The live allocation that contains addr (its start and charged size), a
 * range query by bisection: true with *out, false if addr lies in none. */
bool kb_alloc_find(const kb_alloc *a, uint64_t addr, kb_span *out);
/* No live allocations, and one free block equal to the initial range. */
bool kb_alloc_is_pristine(const kb_alloc *a);

/* ---- named allocators (alloc_kinds.c) ----
 * Parameters come from the caller (the topology); the *_DEFAULT
 * initialisers give the documented defaults. Each constructor checks its
 * parameters and returns false with a message naming the bad one. */

/* One PE's HBM slice: a free list over the slice's bytes.
 * Addresses are PE-local offsets in [0, slice_bytes): encode a PA with
 * kb_pa_pe_hbm(sip, die, pe, offset, slice_bytes) (hbm_offset = pe *
 * slice_bytes + offset). One allocator per (sip, cube, pe). */
typedef struct kb_hbm_slice_params {
    uint64_t slice_bytes; /* 6 GiB: hbm_total_gb_per_cube 48 / hbm_slices_per_cube 8 (MA §6) */
    uint64_t align;       /* 1: the spec aligns nothing (MA §4.2) */
} kb_hbm_slice_params;
#define KB_HBM_SLICE_PARAMS_DEFAULT {UINT64_C(6) << 30, 1}
bool kb_alloc_init_hbm_slice(kb_alloc *a, const kb_hbm_slice_params *p, char **err);

/* One PE's TCM, PE_TCM sub_offset space [0, tcm_bytes). The
 * scheduler-reserved region (owned by PE_SCHEDULER, never seen by the
 * allocator) is excluded from the range by construction: the
 * allocator covers only the allocatable part (MA §4.3). */
typedef enum kb_tcm_reserved_at {
    KB_TCM_RESERVED_AT_START, /* reserved [0, R), allocatable [R, tcm_bytes) */
    KB_TCM_RESERVED_AT_END,   /* allocatable [0, tcm_bytes - R), reserved above */
} kb_tcm_reserved_at;
typedef struct kb_tcm_params {
    uint64_t tcm_bytes;      /* 2 MiB: the PE_TCM budget (MA §1.3; a larger figure in the spec is an example) */
    uint64_t reserved_bytes; /* 512 KiB: the spec gives none (MA §4.1, §8.7); docs/decisions.md "TCM split" */
    kb_tcm_reserved_at reserved_at; /* START: docs/decisions.md and pe_tcm.attrs.scheduler_reserved_kb */
    uint64_t align;          /* 16: the kernel scratch alignment (MA §4.9); a granule, sizes round up */
} kb_tcm_params;
#define KB_TCM_PARAMS_DEFAULT {UINT64_C(2) << 20, UINT64_C(512) << 10, KB_TCM_RESERVED_AT_START, 16}
/* The reserved region of p as [*start, *start + *size). */
void kb_tcm_reserved_region(const kb_tcm_params *p, uint64_t *start, uint64_t *size);
bool kb_alloc_init_tcm(kb_alloc *a, const kb_tcm_params *p, char **err);

/* The device-wide VA space: page-aligned,
 * sizes rounded up to whole pages. */
typedef struct kb_va_params {
    uint64_t base;      /* 0x1_0000_0000 (MA §4.1: the spec's fixed base) */
    uint64_t size;      /* 64 GiB (MA §4.1) */
    uint64_t page_size; /* 2 MiB: pe_mmu.attrs.page_size default; the spec also says 4096 (MA §4.6, §8.1) */
} kb_va_params;
#define KB_VA_PARAMS_DEFAULT {UINT64_C(1) << 32, UINT64_C(64) << 30, UINT64_C(2) << 20}
bool kb_alloc_init_va(kb_alloc *a, const kb_va_params *p, char **err);

#endif
