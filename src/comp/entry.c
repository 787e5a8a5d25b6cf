/* Address resolution and the operations the host can start. */
#include "comp/entry.h"

#include "comp/pe/pe.h"
#include "core/sim.h"
#include "core/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

uint64_t kb_pe_ipcq_window(const kb_topo *t, int sip, int cube, int pe)
{
    int64_t q = kb_topo_pe_node(t, sip, cube, pe, "pe_ipcq");
    if (q < 0)
        return kb_addr_pe_sub_unit_budget(KB_PE_SU_IPCQ);
    return (uint64_t)llround(kb_spec_attr(kb_topo_node(t, (uint32_t)q)->spec, "window_kb") * 1024.0);
}

bool kb_resolve_pa(const kb_topo *t, kb_pa pa, kb_target *out, char **err)
{
    char msg[KB_PA_ERRLEN];
    if (!kb_pa_decode(pa, &out->f, msg, sizeof msg)) {
        *err = kb_xstrdup(msg);
        return false;
    }
    const kb_topo_params *p = kb_topo_params_of(t);
    const kb_pa_fields *f = &out->f;
    out->pa_lo = out->pa_hi = 0;
    int64_t node;
    const char *kind = "";
    int pe = -1;
    switch (f->kind) {
    case KB_PA_HBM: {
        uint64_t cap = (uint64_t)llround(p->hbm_total_gb_per_cube * (double)(1ull << 30));
        if (p->hbm_slice_bytes == 0 || f->offset >= cap) {
            *err = kb_asprintf("PA 0x%llx: hbm_offset 0x%llx is beyond the %g GiB of HBM per cube "
                               "in this topology", (unsigned long long)pa,
                               (unsigned long long)f->offset, p->hbm_total_gb_per_cube);
            return false;
        }
        /* When the capacity does not divide evenly, the few left-over bytes belong to the
         * last slice (docs/decisions.md). */
        uint64_t slice = f->offset / p->hbm_slice_bytes;
        if (slice >= (uint64_t)p->pes_per_cube)
            slice = (uint64_t)p->pes_per_cube - 1;
        uint64_t first = slice * p->hbm_slice_bytes;
        uint64_t last = slice + 1 == (uint64_t)p->pes_per_cube ? cap : first + p->hbm_slice_bytes;
        out->pa_lo = pa - (f->offset - first); /* an HBM offset is the PA's low bits */
        out->pa_hi = out->pa_lo + (last - first);
        kind = "hbm_ctrl", pe = (int)slice;
        break;
    }
    case KB_PA_PE_LOCAL:
        kind = "pe_tcm", pe = (int)f->pe;
        if (f->sub_unit == KB_PE_SU_IPCQ) {
            uint64_t window = kb_pe_ipcq_window(t, (int)f->sip, (int)f->die, pe);
            if (f->offset >= window) {
                *err = kb_asprintf("PA 0x%llx: sub_offset 0x%llx is beyond the %llu KiB IPCQ window of "
                                   "sip%u.cube%u.pe%u in topology %s (pe_ipcq.attrs.window_kb)",
                                   (unsigned long long)pa, (unsigned long long)f->offset,
                                   (unsigned long long)(window >> 10), f->sip, f->die, f->pe, kb_topo_name(t));
                return false;
            }
        }
        break;
    case KB_PA_CUBE_SRAM:
        kind = "sram";
        break;
    case KB_PA_MCPU_LOCAL:
        kind = "m_cpu";
        break;
    default:
        *err = kb_asprintf("PA 0x%llx: %s addresses are not routable yet", (unsigned long long)pa,
                           kb_pa_kind_name(f->kind));
        return false;
    }
    node = kb_topo_pe_node(t, (int)f->sip, (int)f->die, pe, kind);
    if (node < 0) {
        char slice[24] = "";
        if (pe >= 0)
            snprintf(slice, sizeof slice, " pe %d", pe);
        *err = kb_asprintf("PA 0x%llx: no %s node at sip%u.cube%u%s in topology %s", (unsigned long long)pa, kind,
                           f->sip, f->die, slice, kb_topo_name(t));
        return false;
    }
    out->node = (uint32_t)node;
    out->offset = f->offset;
    return true;
}

bool kb_resolve_data_target(const kb_topo *t, kb_pa pa, kb_target *tg, const char *what, char **err)
{
    if (!kb_resolve_pa(t, pa, tg, err))
        return false;
    if (tg->f.kind != KB_PA_HBM && tg->f.kind != KB_PA_CUBE_SRAM) {
        *err = kb_asprintf("%s to a %s address (%s) is not modelled: targets are HBM and cube SRAM",
                           what, kb_pa_kind_name(tg->f.kind), kb_topo_node(t, tg->node)->id);
        return false;
    }
    return true;
}

uint64_t kb_target_end(const kb_topo *t, const kb_target *tg, kb_pa pa, char *what, size_t whatlen)
{
    const kb_node *n = kb_topo_node(t, tg->node);
    switch (tg->f.kind) {
    case KB_PA_HBM:
        snprintf(what, whatlen, "the HBM slice of sip%u.cube%u.pe%d", tg->f.sip, tg->f.die, n->pe);
        return tg->offset + (tg->pa_hi - pa);
    case KB_PA_CUBE_SRAM:
        snprintf(what, whatlen, "the SRAM of sip%u.cube%u", tg->f.sip, tg->f.die);
        if (kb_impl_attr_index(n->spec->impl, "size_mb") >= 0)
            return (uint64_t)llround(kb_spec_attr(n->spec, "size_mb") * 1048576.0);
        return KB_PA_CUBE_SRAM_BYTES;
    case KB_PA_PE_LOCAL:
        snprintf(what, whatlen, "sub-unit %u of sip%u.cube%u.pe%u", tg->f.sub_unit, tg->f.sip, tg->f.die, tg->f.pe);
        if (tg->f.sub_unit == KB_PE_SU_IPCQ)
            return kb_pe_ipcq_window(t, (int)tg->f.sip, (int)tg->f.die, (int)tg->f.pe);
        if (tg->f.sub_unit == KB_PE_SU_PE_TCM && kb_impl_attr_index(n->spec->impl, "size_mb") >= 0) {
            snprintf(what, whatlen, "the TCM of sip%u.cube%u.pe%u", tg->f.sip, tg->f.die, tg->f.pe);
            return (uint64_t)llround(kb_spec_attr(n->spec, "size_mb") * 1048576.0);
        }
        return kb_addr_pe_sub_unit_budget(tg->f.sub_unit);
    case KB_PA_MCPU_LOCAL:
        snprintf(what, whatlen, "sub-unit %u of sip%u.cube%u's M_CPU", tg->f.sub_unit, tg->f.sip, tg->f.die);
        return kb_addr_mcpu_sub_unit_budget(tg->f.sub_unit);
    default:
        snprintf(what, whatlen, "%s", n->id);
        return UINT64_MAX;
    }
}

bool kb_target_check_range(const kb_topo *t, const kb_target *tg, kb_pa pa, uint64_t nbytes, const char *call,
                           char **err)
{
    char what[96];
    uint64_t end = kb_target_end(t, tg, pa, what, sizeof what);
    if (tg->offset <= end && nbytes <= end - tg->offset)
        return true;
    uint64_t past = tg->offset > end ? nbytes : nbytes - (end - tg->offset);
    *err = kb_asprintf("%s: %llu bytes at PA 0x%llx (offset 0x%llx) run %llu bytes past the end of %s (which ends at "
                       "offset 0x%llx); it must lie inside the memory it starts in",
                       call, (unsigned long long)nbytes, (unsigned long long)pa, (unsigned long long)tg->offset,
                       (unsigned long long)past, what, (unsigned long long)end);
    return false;
}

static bool drop_data(kb_data *data)
{
    if (data && data->release)
        data->release(data);
    return false;
}

bool kb_host_memory(kb_fabric *f, bool write, kb_pa pa, uint64_t nbytes, kb_data *data,
                    kb_txn_done_fn done, void *arg, kb_hoplog *log, const kb_path **path,
                    char **err)
{
    const kb_topo *t = kb_fabric_topo(f);
    const kb_msg_kind *kind = write ? &kb_msg_mem_write : &kb_msg_mem_read;
    const char *what = kind->name;
    kb_target tg;
    if (!kb_resolve_data_target(t, pa, &tg, what, err) || !kb_target_check_range(t, &tg, pa, nbytes, what, err))
        return drop_data(data);
    /* The SIP's first IO chiplet (find_pcie_ep(sip, "io0")). */
    int64_t ep = -1;
    for (size_t i = 0; i < kb_topo_node_count(t) && ep < 0; i++) {
        const kb_node *n = kb_topo_node(t, (uint32_t)i);
        if (n->io == 0 && n->sip == (int)tg.f.sip && kb_impl_serves(n->spec->impl, "pcie_ep") &&
            strcmp(n->spec->kind, "pcie_ep") == 0)
            ep = (int64_t)i;
    }
    if (ep < 0) {
        *err = kb_asprintf("%s: SIP %u has no PCIe endpoint in topology %s", what, tg.f.sip,
                           kb_topo_name(t));
        return drop_data(data);
    }
    const kb_path *p = kb_route(t, KB_VIEW_MEMORY, (uint32_t)ep, tg.node, err);
    if (!p)
        return drop_data(data);
    kb_txn *tx = kb_mem_txn_new(f, kind, p, tg.offset, nbytes, data);
    tx->done = done;
    tx->done_arg = arg;
    kb_txn_set_log(tx, log);
    if (path)
        *path = p;
    kb_fabric_inject(f, tx);
    return true;
}

bool kb_pe_dma(kb_fabric *f, int sip, int cube, int pe, bool write, kb_pa pa, uint64_t nbytes,
               kb_txn_done_fn done, void *arg, kb_hoplog *log, const kb_path **path, char **err)
{
    const kb_topo *t = kb_fabric_topo(f);
    kb_target tg;
    const char *what = write ? "PE DMA write" : "PE DMA read";
    if (!kb_resolve_data_target(t, pa, &tg, what, err) || !kb_target_check_range(t, &tg, pa, nbytes, what, err))
        return false;
    int64_t src = kb_topo_pe_node(t, sip, cube, pe, "pe_dma");
    if (src < 0) {
        *err = kb_asprintf("PE DMA: no PE sip%d.cube%d.pe%d in topology %s", sip, cube, pe,
                           kb_topo_name(t));
        return false;
    }
    if (path && !(*path = kb_route_pe(t, (uint32_t)src, tg.node, err)))
        return false;
    return kb_pe_dma_submit(f, (uint32_t)src, write ? &kb_msg_dma_write : &kb_msg_dma_read, tg.node,
                            tg.offset, nbytes, NULL, done, arg, log, err);
}

bool kb_transfer(kb_fabric *f, uint32_t src, uint32_t dst, kb_view view, uint64_t nbytes, bool relay,
                 kb_txn_done_fn done, void *arg, kb_hoplog *log, const kb_path **path, char **err)
{
    const kb_path *p = kb_route(kb_fabric_topo(f), view, src, dst, err);
    if (!p)
        return false;
    kb_txn *tx = kb_mem_txn_new(f, &kb_msg_transfer, p, 0, nbytes, NULL);
    tx->done = done;
    tx->done_arg = arg;
    kb_txn_set_log(tx, log);
    if (path)
        *path = p;
    if (relay)
        kb_fabric_send(f, tx);
    else
        kb_fabric_inject(f, tx);
    return true;
}
