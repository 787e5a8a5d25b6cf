/* PE_MMU (builtin.pe_mmu, pe.h): the PE's page table and the one place a
 * virtual address becomes a memory node and offset. MmuMap and MmuUnmap
 * messages from the host (src/comp/device) change the table when they
 * arrive, their overhead paid; kernel loads and stores
 * translate in their command's mmu stage, composite tiles per DMA and per
 * row of data, composites' base addresses when they are submitted.
 *
 * An address no region maps is a fault, unless the kernel runs with
 * pa_fallback (the address is then used as a physical address). The
 * physical address must be HBM or cube SRAM. Resolving an HBM address
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
    kb_pt_init(pt, (uint64_t)kb_spec_attr(c->n->spec, "page_size"));
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
    size_t n;
    const kb_mmu_entry *e = kb_ctrl_entries(kb_ctrl_of(t, NULL), &n);
    for (size_t i = 0; i < n; i++) {
        if (t->kind == &kb_msg_mmu_map)
            kb_pt_map(c->state, e[i].va, e[i].pa, e[i].size);
        else
            kb_pt_unmap(c->state, e[i].va, e[i].size);
    }
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

bool kb_mmu_va_to_pa(kb_pe *p, uint64_t va, bool pa_fallback, const char *call, const char *kernel, uint64_t *pa,
                     char **err)
{
    kb_pagetable *pt = kb_mmu_table(p, NULL);
    if (pt && kb_pt_translate(pt, va, pa))
        return true;
    *pa = va;
    if (!pa_fallback)
        *err = fault(p, va, call, kernel);
    return pa_fallback;
}

bool kb_mmu_resolve(kb_pe *p, uint64_t va, bool pa_fallback, const char *call, const char *kernel, uint32_t *node,
                    uint64_t *offset, char **err)
{
    uint64_t pa;
    if (!kb_mmu_va_to_pa(p, va, pa_fallback, call, kernel, &pa, err))
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
