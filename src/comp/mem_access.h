/* Memory accesses: the messages that read or write a memory target (an HBM
 * controller, the cube SRAM) and the bytes they carry.
 *
 * Kinds: MemoryWrite and MemoryRead (the host's, entering at a PCIe
 * endpoint), PeDmaWrite and PeDmaRead (a PE DMA engine's), Transfer (raw
 * bytes to a node: chains, tests, s:transfer). All share one payload
 * layout, kb_mem_req; a memory target serves any of them the same way and
 * its kind says how it is answered (kb_target_finish in comp.h). */
#ifndef KB_COMP_MEM_ACCESS_H
#define KB_COMP_MEM_ACCESS_H

#include "fabric/fabric.h"

struct kb_memstore;

/* Where an operation's real bytes come from or go to. The target calls
 * `write` when it serves a write (source -> store) and `read` when it
 * serves a read (store -> sink); timing never depends on either. The
 * operation owns the kb_data and calls `release` when its last transaction
 * is freed. */
typedef struct kb_data {
    void (*write)(struct kb_data *d, struct kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n);
    void (*read)(struct kb_data *d, const struct kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n);
    void (*release)(struct kb_data *d);
} kb_data;

/* A kb_data over a malloc'd buffer of n bytes: a write's bytes (copied from
 * src), or, with src NULL, a buffer a read fills. kb_data_buffer_bytes
 * gives the buffer. */
kb_data *kb_data_buffer(const void *src, uint64_t n);
const void *kb_data_buffer_bytes(const kb_data *d);
/* A kb_data over block b = {row0, rows, col0, cols} of host tensor t's 2-D
 * view (rows = all dimensions but the last), read or filled in place, row
 * by row, when the target serves the operation: a write's source, a read's
 * sink. The tensor must stay alive: `release(owner)` is called when the
 * operation lets go of it. The block must lie inside the view. */
struct kb_tensor;
kb_data *kb_data_tensor_block(const struct kb_tensor *t, const int64_t *b, void (*release)(void *owner),
                              void *owner);
bool kb_data_is_tensor_block(const kb_data *d);

/* The payload of every memory access (it moves to the response leg). */
typedef struct kb_mem_req {
    uint64_t addr;   /* target-local byte offset of the first byte */
    uint64_t nbytes; /* bytes the operation moves (a read's size) */
    kb_data *data;   /* its real bytes, if any (taken over) */
    kb_comp *owner;  /* the component that issued it (a PE DMA engine), if any */
    bool ack_only;   /* a read answered by a 0-byte response (its bytes move untimed) */
    kb_time t_serve; /* when the target began serving it (op log) */
    kb_time t_chan;  /* when the issuing PE DMA channel took it (op log) */
} kb_mem_req;
KB_PAYLOAD_FITS(kb_mem_req);

extern const kb_msg_kind kb_msg_mem_write; /* "MemoryWrite": host bytes to memory, done when served */
extern const kb_msg_kind kb_msg_mem_read;  /* "MemoryRead": host read, its bytes come back */
extern const kb_msg_kind kb_msg_dma_write; /* "PeDmaWrite": PE DMA bytes to memory, acknowledged */
extern const kb_msg_kind kb_msg_dma_read;  /* "PeDmaRead": PE DMA read, its bytes come back */
extern const kb_msg_kind kb_msg_transfer;  /* "Transfer": raw bytes to a node, done when handled */

/* The memory access t belongs to (request or response leg), or NULL if t
 * is another kind of message. */
kb_mem_req *kb_mem_req_of(kb_txn *t);
/* Whether t's operation writes its bytes at the target (it carries them). */
bool kb_mem_writes(const kb_txn *t);
/* Whether t's operation is the host's (logged where it is served). */
bool kb_mem_is_host(const kb_txn *t);

/* A new memory access of `kind` over path: nbytes at target offset addr,
 * carrying them if it writes; `data` (may be NULL) is taken over. */
kb_txn *kb_mem_txn_new(kb_fabric *f, const kb_msg_kind *kind, const kb_path *path, uint64_t addr,
                       uint64_t nbytes, kb_data *data);

#endif
