/* PE_MMU (builtin.pe_mmu, pe.h): the PE's page table and the one place a
 * virtual address becomes a memory node and offset. MmuMap and MmuUnmap
 * messages from the host (src/comp/device) change the table when they
 * arrive, their overhead paid; kernel loads and stores
 * translate in their command's mmu stage, composite tiles per DMA and per
 * row of data, composites' operand and output rows when they are submitted.
 *
 * Every translation is of an access, a byte range: it must lie inside the
 * map entry its first byte lies in (one tensor's allocation on one memory:
 * the DMA moves the bytes contiguously from there, so any byte past the
 * entry belongs to something else); leaving it is an error naming the
 * tensor (the map message's label), its extent and the bytes outside. An
 * address no entry maps is a fault, unless the kernel runs with
 * pa_fallback (the address is then used as a physical address, unchecked).
 * The physical address must be HBM or cube SRAM. Resolving an HBM address
 * remembers its slice, so the next address on the same slice costs a
 * comparison. Translation itself takes no time here: the stages that
 * translate charge tlb_overhead_ns. */
#include "comp/pe/engines.h"

#include "comp/device/control.h"
#include "comp/entry.h"
#include "core/util.h"

#include <stdlib.h>

static void mmu_init(kb_comp *c)
{
    kb_pagetable *pt = kb_xmalloc(sizeof *pt);
    kb_pt_init(pt);
    c->state = pt;
}

static void mmu_fini(kb_comp *c)
{
    kb_pt_free(c->state);
    free(c->state);
}

/* A map or unmap from the PE's M_CPU, its overhead paid: the page table
 * changes (here only) and the message completes (its M_CPU counts it). */
static void apply(kb_txn *t)
{
    kb_comp *c = kb_txn_comp(t);
    const kb_ctrl_op *op = kb_ctrl_of(t, NULL);
    size_t n;
    const kb_mmu_entry *e = kb_ctrl_entries(op, &n);
    const char *text = kb_ctrl_label(op);
    kb_pt_label *label = t->kind == &kb_msg_mmu_map && text ? kb_pt_label_new(text) : NULL;
    for (size_t i = 0; i < n; i++) {
        if (t->kind == &kb_msg_mmu_map)
            kb_pt_map(c->state, e[i].va, e[i].pa, e[i].size, label);
        else
            kb_pt_unmap(c->state, e[i].va, e[i].size);
    }
    kb_pt_label_unref(label); /* the mappings hold their own references */
    kb_txn_complete(t);
}

static void update(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, apply); }

static const kb_msg_handler handlers[] = {
    {&kb_msg_mmu_map, update}, {&kb_msg_mmu_unmap, update}, {&kb_msg_transfer, kb_store_forward_txn}, {NULL, NULL}};

const kb_comp_ops kb_pe_mmu_ops = {
    .flit_aware = false, .handlers = handlers, .init = mmu_init, .fini = mmu_fini, .on_txn = kb_store_forward_txn};

kb_pagetable *kb_mmu_table(kb_pe *p, char **err)
{
    kb_comp *c = kb_fabric_comp(p->fab, p->mmu);
    if (c->ops == &kb_pe_mmu_ops)
        return c->state;
    if (err)
        *err = kb_asprintf("sip%d.cube%d.pe%d: its PE_MMU is not builtin.pe_mmu (no page table)", p->sip, p->cube,
                           p->pe);
    return NULL;
}

/* The fault message of an unmapped va. */
static char *fault(kb_pe *p, uint64_t va, const char *call, const char *kernel)
{
    char *where = kb_pe_where(p, kernel);
    char *msg = kb_asprintf("%s: virtual address 0x%llx is not mapped on %s: not inside any tensor placed "
                            "for this PE",
                            call, (unsigned long long)va, where);
    free(where);
    return msg;
}

/* The message of an access [va, va + n) that leaves mapping e, the one its
 * start lies in: the call, the PE, kernel and time, what e holds, its
 * extent and where it lives, and the bytes outside it. */
static char *extent_error(kb_pe *p, const kb_extent *e, uint64_t va, uint64_t n, const char *call,
                          const char *kernel)
{
    char *where = kb_pe_where(p, kernel);
    const char *label = kb_pt_label_text(e->tag);
    uint64_t end = e->start + e->size;
    uint64_t stop = n > UINT64_MAX - va ? UINT64_MAX : va + n; /* past 2^64: shown as its last address */
    kb_target tg;
    char *why = NULL, holder[128];
    if (kb_resolve_data_target(kb_fabric_topo(p->fab), (kb_pa)e->value, &tg, call, &why))
        snprintf(holder, sizeof holder, "%s", kb_topo_node(kb_fabric_topo(p->fab), tg.node)->id);
    else
        kb_pa_format((kb_pa)e->value, holder, sizeof holder);
    free(why);
    char *msg = kb_asprintf("%s: bytes [0x%llx, 0x%llx) (%llu bytes) leave their allocation on %s: %s is mapped "
                            "at [0x%llx, 0x%llx) (%llu bytes, held by %s); bytes [0x%llx, 0x%llx) lie past its end",
                            call, (unsigned long long)va, (unsigned long long)stop, (unsigned long long)n, where,
                            label ? label : "the mapping (no tensor named)", (unsigned long long)e->start,
                            (unsigned long long)end, (unsigned long long)e->size, holder, (unsigned long long)end,
                            (unsigned long long)stop);
    free(where);
    return msg;
}

/* The mapping at va, checked to hold all of [va, va + nbytes): true with
 * *e (NULL when nothing maps va and pa_fallback lets va through as a
 * physical address, unchecked). */
static bool lookup(kb_pe *p, uint64_t va, uint64_t nbytes, bool pa_fallback, const char *call, const char *kernel,
                   const kb_extent **e, char **err)
{
    kb_pagetable *pt = kb_mmu_table(p, NULL);
    *e = pt ? kb_pt_lookup(pt, va) : NULL;
    if (!*e) {
        if (!pa_fallback)
            *err = fault(p, va, call, kernel);
        return pa_fallback;
    }
    if (nbytes > (*e)->start + (*e)->size - va) {
        *err = extent_error(p, *e, va, nbytes, call, kernel);
        return false;
    }
    return true;
}

bool kb_mmu_va_to_pa(kb_pe *p, uint64_t va, uint64_t nbytes, bool pa_fallback, const char *call,
                     const char *kernel, uint64_t *pa, char **err)
{
    const kb_extent *e;
    if (!lookup(p, va, nbytes, pa_fallback, call, kernel, &e, err))
        return false;
    *pa = e ? e->value + (va - e->start) : va;
    return true;
}

bool kb_mmu_check_rows(kb_pe *p, uint64_t va, uint64_t rows, uint64_t row_bytes, bool pa_fallback,
                       const char *call, const char *kernel, char **err)
{
    if (rows == 0 || row_bytes == 0)
        return true;
    if (rows > (UINT64_MAX - va) / row_bytes) {
        char *where = kb_pe_where(p, kernel);
        *err = kb_asprintf("%s: %llu rows of %llu bytes from virtual address 0x%llx run past the end of the "
                           "address space on %s",
                           call, (unsigned long long)rows, (unsigned long long)row_bytes, (unsigned long long)va,
                           where);
        free(where);
        return false;
    }
    /* One lookup per mapping the rows cross: the rows that end inside a
     * mapping are checked together. */
    for (uint64_t r = 0; r < rows;) {
        const kb_extent *e;
        if (!lookup(p, va + r * row_bytes, row_bytes, pa_fallback, call, kernel, &e, err))
            return false;
        r = e ? (e->start + e->size - va) / row_bytes : r + 1;
    }
    return true;
}

bool kb_mmu_resolve(kb_pe *p, uint64_t va, uint64_t nbytes, bool pa_fallback, const char *call,
                    const char *kernel, uint32_t *node, uint64_t *offset, char **err)
{
    uint64_t pa;
    if (!kb_mmu_va_to_pa(p, va, nbytes, pa_fallback, call, kernel, &pa, err))
        return false;
    if (pa >= p->xl_lo && pa < p->xl_hi) { /* the HBM slice of the last address */
        *node = p->xl_node;
        *offset = p->xl_off + (pa - p->xl_lo);
        return true;
    }
    kb_target tg;
    char *why = NULL;
    if (!kb_resolve_data_target(kb_fabric_topo(p->fab), (kb_pa)pa, &tg, call, &why)) {
        char *where = kb_pe_where(p, kernel);
        *err = kb_asprintf("%s (virtual address 0x%llx on %s)", why, (unsigned long long)va, where);
        free(where);
        free(why);
        return false;
    }
    *node = tg.node;
    *offset = tg.offset;
    p->xl_lo = tg.pa_lo; /* the slice (empty for other targets) */
    p->xl_hi = tg.pa_hi;
    p->xl_node = tg.node;
    p->xl_off = tg.offset - (pa - tg.pa_lo);
    return true;
}
