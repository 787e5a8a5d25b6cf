/* Entry points: how the host (and tests) start operations on a fabric.
 *
 * Physical addresses are turned into topology nodes only here, through the
 * physical address codec (src/mem/addr.h) and the place of each address
 * kind's node (kb_resolve_pa). */
#ifndef KB_COMP_ENTRY_H
#define KB_COMP_ENTRY_H

#include "comp/comp.h"
#include "mem/addr.h"

/* Where a physical address lives: its node and the node-local offset. */
typedef struct kb_target {
    uint32_t node;
    uint64_t offset;   /* HBM: the cube's hbm_offset; others: the sub-offset */
    kb_pa_fields f;
    /* HBM: every PA in [pa_lo, pa_hi) is on `node`, at offset
     * offset + (PA - pa) (a whole slice); else both 0 */
    kb_pa pa_lo, pa_hi;
} kb_target;

/* Bytes of the IPCQ window of PE (sip, cube, pe): its PE_IPCQ's window_kb
 * (docs/topology.md), or the address map's 256 KiB budget without one. */
uint64_t kb_pe_ipcq_window(const kb_topo *t, int sip, int cube, int pe);

/* Decodes pa and finds its node (HBM -> hbm_ctrl.pe{offset / slice},
 * PE_LOCAL -> pe{P}.pe_tcm, CUBE_SRAM -> sram, MCPU_LOCAL -> m_cpu); checks
 * the HBM offset against the implemented capacity. */
bool kb_resolve_pa(const kb_topo *t, kb_pa pa, kb_target *out, char **err);

/* kb_resolve_pa for a data transfer: the address must be HBM or cube SRAM
 * (`what` names the operation in the error). */
bool kb_resolve_data_target(const kb_topo *t, kb_pa pa, kb_target *out, const char *what, char **err);

/* The end (exclusive) of the memory pa lies in, as an offset comparable
 * with tg->offset (tg from kb_resolve_pa of pa): HBM the PE's slice, cube
 * SRAM its size_mb (the address window without one), a PE-local sub-unit
 * its budget (TCM its size_mb, the IPCQ window its window_kb), an M_CPU
 * sub-unit its budget. *what names the memory ("the HBM slice of
 * sip0.cube0.pe3", a static or per-call buffer of 64 bytes). */
uint64_t kb_target_end(const kb_topo *t, const kb_target *tg, kb_pa pa, char *what, size_t whatlen);

/* Whether [pa, pa + nbytes) lies in the one memory pa lies in (tg from
 * kb_resolve_pa of pa); else an error "CALL: N bytes at PA 0x.. run M bytes
 * past the end of WHAT (S bytes, ending at offset E)". nbytes 0 is fine. */
bool kb_target_check_range(const kb_topo *t, const kb_target *tg, kb_pa pa, uint64_t nbytes, const char *call,
                           char **err);

/* Host MemoryWrite / MemoryRead of nbytes at pa, entering at the SIP's
 * first IO chiplet's PCIe endpoint and bypassing IO_CPU and M_CPU. A write
 * completes when its last burst is committed; a read when its data is back
 * at the PCIe endpoint (a MemoryWrite if `write`, else a MemoryRead).
 * `data` (optional, taken over even on failure; timing is the same with or
 * without): a write's bytes land in the memory store when the write is
 * served; a read takes what the store holds when it is served. */
bool kb_host_memory(kb_fabric *f, bool write, kb_pa pa, uint64_t nbytes, kb_data *data,
                    kb_txn_done_fn done, void *arg, kb_hoplog *log, const kb_path **path,
                    char **err);

/* A PE DMA transfer from PE (sip, cube, pe) to/from pa (HBM or cube SRAM).
 * Both check the whole range [pa, pa + nbytes) against the memory pa lies
 * in (kb_target_check_range). */
bool kb_pe_dma(kb_fabric *f, int sip, int cube, int pe, bool write, kb_pa pa, uint64_t nbytes,
               kb_txn_done_fn done, void *arg, kb_hoplog *log, const kb_path **path, char **err);

/* nbytes from node src to node dst over the view's shortest path,
 * completing when the last flit has been handled at dst. `relay`: src
 * passes on a message it has already paid its overhead for (a fan-out
 * step after the message arrived there), so src charges no overhead again. */
bool kb_transfer(kb_fabric *f, uint32_t src, uint32_t dst, kb_view view, uint64_t nbytes, bool relay,
                 kb_txn_done_fn done, void *arg, kb_hoplog *log, const kb_path **path, char **err);

#endif
