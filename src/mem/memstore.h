/* The memory store: real bytes per memory domain (an HBM slice, a TCM, a
 * cube SRAM ...), sparse, so memory use follows the bytes written, not the
 * size of the address space. Bytes never written read as zero.
 *
 * A domain is an opaque 64-bit key chosen by the caller (the fabric uses
 * the node index of the component that holds the memory). Storage is in
 * 64 KiB pages found through an open-addressing hash table keyed by
 * (domain, page): deterministic, no pointer hashing. */
#ifndef KB_MEM_MEMSTORE_H
#define KB_MEM_MEMSTORE_H

#include "mem/dtype.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kb_memstore kb_memstore;

kb_memstore *kb_memstore_new(void);
void kb_memstore_free(kb_memstore *m);

void kb_memstore_write(kb_memstore *m, uint64_t domain, uint64_t addr, const void *src, size_t n);
void kb_memstore_read(const kb_memstore *m, uint64_t domain, uint64_t addr, void *dst, size_t n);
/* Bytes of pages held (a multiple of the page size). */
size_t kb_memstore_resident(const kb_memstore *m);

/* count elements of type t at addr (packed, little-endian, any alignment),
 * converted with kb_dtype_store / kb_dtype_load. */
void kb_memstore_write_elems(kb_memstore *m, uint64_t domain, uint64_t addr, kb_dtype t, const double *vals,
                             size_t count);
void kb_memstore_read_elems(const kb_memstore *m, uint64_t domain, uint64_t addr, kb_dtype t, double *vals,
                            size_t count);

#define KB_MEMSTORE_PAGE 65536

#endif
