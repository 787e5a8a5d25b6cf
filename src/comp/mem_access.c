/* Memory access kinds, their payload and buffers of real bytes (mem_access.h). */
#include "comp/mem_access.h"

#include "core/util.h"
#include "mem/memstore.h"
#include "tensor/tensor.h"

#include <stdlib.h>
#include <string.h>

static const char layout; /* the kb_mem_req layout's tag */

static void release(void *payload)
{
    kb_mem_req *r = payload;
    if (r->data && r->data->release)
        r->data->release(r->data);
    r->data = NULL;
}

#define MEM_KIND(nm) KB_MSG_KIND(nm, &layout, release)

const kb_msg_kind kb_msg_mem_write = MEM_KIND("MemoryWrite");
const kb_msg_kind kb_msg_mem_read = MEM_KIND("MemoryRead");
const kb_msg_kind kb_msg_dma_write = MEM_KIND("PeDmaWrite");
const kb_msg_kind kb_msg_dma_read = MEM_KIND("PeDmaRead");
const kb_msg_kind kb_msg_transfer = MEM_KIND("Transfer");

kb_mem_req *kb_mem_req_of(kb_txn *t) { return t->request->layout == &layout ? KB_PAYLOAD(t, kb_mem_req) : NULL; }

/* Whether an access of this kind carries its bytes to the target. */
static bool writes(const kb_msg_kind *k)
{
    return k == &kb_msg_mem_write || k == &kb_msg_dma_write || k == &kb_msg_transfer;
}

bool kb_mem_writes(const kb_txn *t) { return writes(t->request); }

bool kb_mem_is_host(const kb_txn *t) { return t->request == &kb_msg_mem_write || t->request == &kb_msg_mem_read; }

kb_txn *kb_mem_txn_new(kb_fabric *f, const kb_msg_kind *kind, const kb_path *path, uint64_t addr,
                       uint64_t nbytes, kb_data *data)
{
    kb_txn *t = kb_txn_new(f, kind, path, writes(kind) ? nbytes : 0);
    kb_mem_req *r = KB_PAYLOAD(t, kb_mem_req);
    r->addr = addr;
    r->nbytes = nbytes;
    r->data = data;
    return t;
}

/* ---- buffers ---- */

typedef struct buffer_data {
    kb_data d;
    uint64_t n;
    unsigned char bytes[];
} buffer_data;

static void buf_write(kb_data *d, kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n)
{
    buffer_data *b = (buffer_data *)d;
    kb_memstore_write(m, domain, addr, b->bytes, n < b->n ? n : b->n);
}

static void buf_read(kb_data *d, const kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n)
{
    buffer_data *b = (buffer_data *)d;
    kb_memstore_read(m, domain, addr, b->bytes, n < b->n ? n : b->n);
}

static void buf_release(kb_data *d) { free(d); }

kb_data *kb_data_buffer(const void *src, uint64_t n)
{
    buffer_data *b = kb_xcalloc(1, sizeof *b + (n ? n : 1));
    b->d = (kb_data){buf_write, buf_read, buf_release};
    b->n = n;
    if (src)
        memcpy(b->bytes, src, n);
    return &b->d;
}

const void *kb_data_buffer_bytes(const kb_data *d) { return ((const buffer_data *)d)->bytes; }

/* ---- blocks of host tensors ---- */

typedef struct block_data {
    kb_data d;
    const kb_tensor *t;
    int64_t row0, rows, col0, cols;
    void (*release)(void *owner);
    void *owner;
} block_data;

/* Each row of the block is one contiguous run, in the tensor and in memory. */
static char *row_ptr(const block_data *b, int64_t r)
{
    int64_t rows, cols;
    kb_tensor_rows_cols(b->t, &rows, &cols);
    size_t es = kb_dtype_size(b->t->dtype);
    return (char *)b->t->data + ((size_t)(b->row0 + r) * (size_t)cols + (size_t)b->col0) * es;
}

static void block_write(kb_data *d, kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n)
{
    block_data *b = (block_data *)d;
    size_t rowb = (size_t)b->cols * kb_dtype_size(b->t->dtype);
    (void)n; /* == rows * rowb, checked when the operation was made */
    for (int64_t r = 0; r < b->rows; r++)
        kb_memstore_write(m, domain, addr + (uint64_t)r * rowb, row_ptr(b, r), rowb);
}

/* The block is filled when the read is served; the host sees it once the
 * read completes. */
static void block_read(kb_data *d, const kb_memstore *m, uint64_t domain, uint64_t addr, uint64_t n)
{
    block_data *b = (block_data *)d;
    size_t rowb = (size_t)b->cols * kb_dtype_size(b->t->dtype);
    (void)n;
    for (int64_t r = 0; r < b->rows; r++)
        kb_memstore_read(m, domain, addr + (uint64_t)r * rowb, row_ptr(b, r), rowb);
}

static void block_release(kb_data *d)
{
    block_data *b = (block_data *)d;
    if (b->release)
        b->release(b->owner);
    free(b);
}

kb_data *kb_data_tensor_block(const kb_tensor *t, const int64_t *blk, void (*on_release)(void *owner), void *owner)
{
    block_data *b = kb_xcalloc(1, sizeof *b);
    b->d = (kb_data){block_write, block_read, block_release};
    b->t = t;
    b->row0 = blk[0], b->rows = blk[1], b->col0 = blk[2], b->cols = blk[3];
    b->release = on_release;
    b->owner = owner;
    return &b->d;
}

bool kb_data_is_tensor_block(const kb_data *d) { return d && d->release == block_release; }
