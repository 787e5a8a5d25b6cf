/* The builtin.* implementations: names, attributes with their defaults and
 * ranges, and behaviour; the builtin message kinds by name. Defaults are
 * the spec's values for the default topology (topology-fabric-latency.md
 * §4.15); docs/topology.md lists them. */
#include "comp/comp.h"
#include "comp/device/control.h"
#include "comp/pe/ipcq.h"
#include "mem/addr.h"

#include <math.h>
#include <string.h>

/* Every range is finite so that no value's picoseconds, bytes or cycles can
 * overflow (docs/topology.md "Limits"): a duration is at most 1 s. */
#define MAX_NS 1e9
#define ATTR_NS(name, dflt, doc) {name, KB_ATTR_NUMBER, dflt, 0, MAX_NS, false, false, "ns", doc}
#define OVERHEAD(dflt) ATTR_NS("overhead_ns", dflt, "time charged once per transaction")
/* The PE_TCM sub-unit of the physical address (src/mem/addr.c). */
#define TCM_WINDOW (UINT64_C(2) << 20)
#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

static const kb_attr_def forwarding_attrs[] = {OVERHEAD(0.0)};
static const kb_attr_def router_attrs[] = {OVERHEAD(2.0)};
static const kb_attr_def switch_attrs[] = {OVERHEAD(5.0)};
static const kb_attr_def ucie_attrs[] = {OVERHEAD(8.0)};
static const kb_attr_def pcie_ep_attrs[] = {OVERHEAD(5.0)};
static const kb_attr_def io_cpu_attrs[] = {OVERHEAD(10.0)};
static const kb_attr_def m_cpu_attrs[] = {OVERHEAD(5.0)};
static const kb_attr_def sram_attrs[] = {
    OVERHEAD(2.0),
    {"size_mb", KB_ATTR_NUMBER, 32.0, 0, (double)(KB_PA_CUBE_SRAM_BYTES >> 20), true, false, "MiB",
     "capacity (not used for timing); at most the 32 MiB CUBE_SRAM window of the physical address"},
};
static const kb_attr_def hbm_ctrl_attrs[] = {
    {"burst_bytes", KB_ATTR_INT, 256, 1, 1 << 20, false, true, "bytes",
     "bytes one pseudo-channel commits per chunk_time; selects the channel bits"},
    ATTR_NS("switch_penalty_ns", 0.0, "extra time when a channel turns between read and write"),
    {"efficiency", KB_ATTR_NUMBER, 1.0, 0.01, 1, false, false, NULL,
     "fraction of peak HBM bandwidth achieved (scales the router edge and the channels)"},
    OVERHEAD(0.0),
};
/* 0: unbounded, as the original's ports (ADR-0033 D3; docs/pe-model.md). */
#define QUEUE_DEPTH(doc) {"queue_depth", KB_ATTR_INT, 2, 0, 1 << 16, false, false, "tiles", doc "; 0: unbounded"}
/* One pipeline worker for both directions of a part (docs/pe-model.md). */
#define SERIAL_WORKER(what)                                                                                         \
    {"serial_worker", KB_ATTR_BOOL, 0, 0, 1, false, false, NULL,                                                   \
     "tile tokens of " what " are served by one worker in arrival order (false: one lane per direction; true: the " \
     "original's one pipeline worker per component, needs queue_depth 0; docs/pe-model.md)"}
static const kb_attr_def pe_dma_attrs[] = {
    ATTR_NS("overhead_ns", 2.0, "DMA setup time, paid before the first flit leaves"),
    {"rd_engines", KB_ATTR_INT, 1, 1, 64, false, false, NULL, "read transfers in flight"},
    {"wr_engines", KB_ATTR_INT, 1, 1, 64, false, false, NULL, "write transfers in flight"},
    {"read_response_data", KB_ATTR_BOOL, 1, 0, 1, false, false, NULL,
     "a read's response carries its bytes back over the fabric (false: a 0-byte response, as the original; "
     "docs/fidelity.md)"},
    {"tcm_ports", KB_ATTR_BOOL, 1, 0, 1, false, false, NULL,
     "a DMA read lands through PE_TCM's write port and a DMA write leaves through its read port (false: only "
     "PE_FETCH_STORE charges the TCM ports, as the original; docs/fidelity.md)"},
    QUEUE_DEPTH("tile tokens each DMA channel's input queue holds (pipeline backpressure)"),
    SERIAL_WORKER("DMA_READ and DMA_WRITE stages"),
    {"vc_chunk_size", KB_ATTR_INT, 256, 16, 1 << 30, false, false, "bytes",
     "the comm channel reads an IPCQ message from TCM this many bytes at a time and starts sending "
     "after the first chunk (docs/ipcq.md)"},
};
/* PE_IPCQ: the slot tiers of the three buffer kinds (docs/ipcq.md), the
 * poll interval and the credit's size. */
static const kb_attr_def pe_ipcq_attrs[] = {
    OVERHEAD(0.0),
    {"window_kb", KB_ATTR_NUMBER, 256.0, 1, (double)(KB_PA_PE_IPCQ_MAX_BYTES >> 10), false, false, "KiB",
     "the PE's IPCQ window, where tcm rings are reserved: the address map's 256 KiB budget, at most its "
     "32 MiB address slot (the original's rings were outside the physical map: docs/fidelity.md)"},
    ATTR_NS("poll_interval_ns", 4.0, "backpressure poll: one check of the cached peer pointer on PE_CPU"),
    ATTR_NS("tcm_slot_overhead_ns", 0.0, "tcm ring: fixed time per slot write or read (bytes at PE_TCM's port)"),
    {"tcm_slot_ports", KB_ATTR_BOOL, 1, 0, 1, false, false, NULL,
     "tcm ring: slot writes and reads go through PE_TCM's write and read ports, contending with loads, "
     "stores and fetches (false: the original's tier of its own, tcm_slot_bw_gbs, no port; docs/fidelity.md)"},
    {"tcm_slot_bw_gbs", KB_ATTR_NUMBER, 512.0, 0.001, INFINITY, false, false, "GB/s",
     "tcm ring: slot write/read bandwidth when tcm_slot_ports is false"},
    ATTR_NS("sram_slot_overhead_ns", 2.0, "sram ring: fixed time per slot write or read"),
    {"sram_slot_bw_gbs", KB_ATTR_NUMBER, 512.0, 0.001, INFINITY, false, false, "GB/s",
     "sram ring: slot write/read bandwidth (plus the PE-to-SRAM hop)"},
    ATTR_NS("hbm_slot_overhead_ns", 6.0, "hbm ring: fixed time per slot write or read"),
    {"hbm_slot_bw_gbs", KB_ATTR_NUMBER, 256.0, 0.001, INFINITY, false, false, "GB/s",
     "hbm ring: slot write/read bandwidth (plus the PE-to-HBM hop)"},
    {"credit_bytes", KB_ATTR_INT, 16, 0, 4096, false, false, "bytes", "size of the credit a recv returns"},
    {"slot_fits_payload", KB_ATTR_BOOL, 0, 0, 1, false, false, NULL,
     "false: a collective's payload larger than a slot goes in slot-sized chunks, streamed through the "
     "phases; true (the original): a slot holds the whole payload, the wiring is reinstalled with slots of the "
     "payload's size when needed, and each cube sends one message (docs/fidelity.md)"},
    {"credit_fast_path", KB_ATTR_BOOL, 0, 0, 1, false, false, NULL,
     "false: the credit is a message over the fabric from the receiver's comm channel; true (the original's "
     "fast path, ccl-ipcq-parallel.md §1.9): it reaches the sender after credit_bytes at its route's narrowest "
     "link, without using the fabric (docs/fidelity.md)"},
};
/* PE clock and engine shapes: the spec gives none (execution-pe-tl.md §2.9);
 * the defaults and where they come from are in docs/pe-model.md. */
/* 1 MHz .. 1 THz: a cycle takes 1 ps .. 1 us. */
#define CLOCK(doc) {"clock_ghz", KB_ATTR_NUMBER, 1.0, 0.001, 1000, false, false, "GHz", doc}
static const kb_attr_def pe_cpu_attrs[] = {
    OVERHEAD(0.0),
    CLOCK("PE_CPU clock: converts dispatch and tl.cycles cycles to time"),
    {"dispatch_cycles", KB_ATTR_INT, 1, 0, 1 << 20, false, false, "cycles",
     "PE_CPU cycles to issue one blocking tl.* call (dispatch overhead)"},
    {"scratch_kb", KB_ATTR_NUMBER, 1024.0, 0, (double)(TCM_WINDOW >> 10), true, false, "KiB",
     "TCM scratch a kernel instance gets for tl results (taken from the allocatable TCM)"},
};
static const kb_attr_def pe_scheduler_attrs[] = {
    ATTR_NS("overhead_ns", 0.0, "time to dispatch one command to an engine"),
    {"tile_m", KB_ATTR_INT, 32, 1, 1 << 20, false, false, NULL, "default tile rows of composite commands"},
    {"tile_k", KB_ATTR_INT, 64, 1, 1 << 20, false, false, NULL, "default tile depth (K) of composite GEMMs"},
    {"tile_n", KB_ATTR_INT, 32, 1, 1 << 20, false, false, NULL, "default tile columns of composite commands"},
};
static const kb_attr_def pe_gemm_attrs[] = {
    OVERHEAD(0.0),
    CLOCK("MAC array clock"),
    QUEUE_DEPTH("tile tokens PE_GEMM's input queue holds"),
    {"mac_rows", KB_ATTR_INT, 32, 1, 1 << 16, false, false, NULL, "output rows the MAC array computes at once"},
    {"mac_cols", KB_ATTR_INT, 32, 1, 1 << 16, false, false, NULL, "output columns the MAC array computes at once"},
    {"mac_depth", KB_ATTR_INT, 4, 1, 1 << 16, false, false, NULL,
     "K elements each MAC cell accumulates per cycle (16-bit inputs)"},
    {"f32_slowdown", KB_ATTR_NUMBER, 4.0, 1, 1024, false, false, NULL,
     "cycles an f32 (or 32-bit integer) product takes relative to a 16-bit one"},
};
static const kb_attr_def pe_math_attrs[] = {
    OVERHEAD(0.0),
    CLOCK("vector unit clock"),
    QUEUE_DEPTH("tile tokens PE_MATH's input queue holds"),
    {"simd_bytes", KB_ATTR_INT, 128, 1, 1 << 20, false, false, "bytes",
     "bytes of elements one vector instruction processes (64 f16 or 32 f32 lanes)"},
    {"transcendental_cycles", KB_ATTR_NUMBER, 4.0, 1, 1e6, false, false, "cycles",
     "cycles per vector of exp, log, sqrt, sigmoid, sin, cos and division"},
};
static const kb_attr_def pe_fetch_store_attrs[] = {
    ATTR_NS("overhead_ns", 0.0, "time to start one TCM <-> register file move"),
    {"stages_simple_commands", KB_ATTR_BOOL, 1, 0, 1, false, false, NULL,
     "a simple tl.dot or math command fetches its operands from TCM and writes its result back through "
     "PE_FETCH_STORE (false: the original's one engine sub-command on the register file, "
     "execution-pe-tl.md §2.2; docs/fidelity.md)"},
    QUEUE_DEPTH("tile tokens each of the fetch and store queues holds"),
    SERIAL_WORKER("FETCH and STORE stages"),
    {"register_file_kb", KB_ATTR_NUMBER, 64.0, 0, 1 << 20, false, false, "KiB",
     "register file the pipeline's operands and accumulators share; a fetch stalls when it is full (0: no "
     "capacity model, as the original)"},
};
static const kb_attr_def pe_tcm_attrs[] = {
    OVERHEAD(0.0),
    {"size_mb", KB_ATTR_NUMBER, 2.0, 0, (double)(TCM_WINDOW >> 20), true, false, "MiB",
     "scratchpad capacity; at most the 2 MiB PE_TCM window of the physical address"},
    {"scheduler_reserved_kb", KB_ATTR_NUMBER, 512.0, 0, (double)(TCM_WINDOW >> 10), false, false, "KiB",
     "TCM held by PE_SCHEDULER for tile buffers, at the start; never allocatable"},
    {"read_bw_gbs", KB_ATTR_NUMBER, 512.0, 0.001, INFINITY, false, false, "GB/s", "read bandwidth"},
    {"write_bw_gbs", KB_ATTR_NUMBER, 512.0, 0.001, INFINITY, false, false, "GB/s", "write bandwidth"},
};
static const kb_attr_def pe_mmu_attrs[] = {
    OVERHEAD(0.0),
    {"page_size", KB_ATTR_INT, 2 << 20, 4096, 1 << 30, false, true, "bytes", "translation page size"},
    ATTR_NS("tlb_overhead_ns", 0.0, "time per translation"),
};

#define IMPL(nm, kinds, attrs, ops, doc) {nm, kinds, attrs, COUNT(attrs), &ops, doc, NULL}
/* With a latency formula a Lua model may replace: `lat` says what it gets. */
#define IMPL_LAT(nm, kinds, attrs, ops, doc, lat) {nm, kinds, attrs, COUNT(attrs), &ops, doc, lat}
#define TRANSIT_LAT "{op = \"decode\", bytes, builtin_ns = overhead_ns}: a transaction's header decode"

static const kb_impl builtins[] = {
    IMPL_LAT("builtin.forwarding", NULL, forwarding_attrs, kb_transit_ops,
         "flit-aware transit node: one serial worker, overhead on the first flit", TRANSIT_LAT),
    IMPL_LAT("builtin.noc", NULL, router_attrs, kb_transit_ops, "cube NoC router (transit node)", TRANSIT_LAT),
    IMPL_LAT("builtin.switch", NULL, switch_attrs, kb_transit_ops, "tray switch (transit node)", TRANSIT_LAT),
    IMPL_LAT("builtin.ucie", NULL, ucie_attrs, kb_transit_ops, "UCIe protocol endpoint (transit node)", TRANSIT_LAT),
    IMPL("builtin.pcie_ep", "pcie_ep", pcie_ep_attrs, kb_pcie_ep_ops,
         "PCIe endpoint: reassembles, overhead per transaction"),
    IMPL("builtin.io_cpu", "io_cpu", io_cpu_attrs, kb_io_cpu_ops,
         "IO chiplet command processor: launch and map fan-out to cubes, launch barrier, completions"),
    IMPL("builtin.m_cpu", "m_cpu", m_cpu_attrs, kb_m_cpu_ops,
         "cube command processor: launch and map fan-out to PEs, completions"),
    IMPL("builtin.sram", "sram", sram_attrs, kb_sram_ops, "cube shared SRAM (terminal)"),
    IMPL_LAT("builtin.hbm_ctrl", "hbm_ctrl", hbm_ctrl_attrs, kb_hbm_ctrl_ops,
             "per-PE HBM controller with address-interleaved pseudo-channels",
             "{op = \"commit\", bytes, channel, write, builtin_ns = chunk time}: one burst's commit on its "
             "pseudo-channel"),
    IMPL_LAT("builtin.pe_dma", "pe_dma", pe_dma_attrs, kb_pe_dma_ops, "PE DMA engine",
             "{op = \"setup\", bytes, write, builtin_ns = overhead_ns}: a transfer's setup before its first flit"),
    /* Launch messages end here; the PE's engines hang off its state (pe/pe.c). */
    IMPL("builtin.pe_cpu", "pe_cpu", pe_cpu_attrs, kb_pe_cpu_ops, "PE control processor (runs kernels)"),
    IMPL("builtin.pe_scheduler", "pe_scheduler", pe_scheduler_attrs, kb_pe_part_ops, "PE command scheduler"),
    IMPL("builtin.pe_fetch_store", "pe_fetch_store", pe_fetch_store_attrs, kb_pe_part_ops,
         "TCM <-> register file mover"),
    IMPL_LAT("builtin.pe_gemm", "pe_gemm", pe_gemm_attrs, kb_pe_part_ops, "matrix engine (MAC array)",
             "{op = \"gemm\", m, k, n, dtype, builtin_ns}: one product on the MAC array"),
    IMPL_LAT("builtin.pe_math", "pe_math", pe_math_attrs, kb_pe_part_ops, "vector/math engine",
             "{op = NAME, elements, outputs, dtype, builtin_ns}: one vector operation (exp, add, sum ...)"),
    IMPL_LAT("builtin.pe_tcm", "pe_tcm", pe_tcm_attrs, kb_pe_part_ops, "PE scratchpad",
             "{op = \"read\" | \"write\", bytes, builtin_ns}: one transfer through a TCM port"),
    /* Map/unmap messages end here; the page table is its state (pe/mmu.c). */
    IMPL("builtin.pe_mmu", "pe_mmu", pe_mmu_attrs, kb_pe_mmu_ops, "PE address translation (page table)"),
    /* Install plans end here; tokens and credits end at PE_DMA (pe/ipcq.c). */
    IMPL("builtin.pe_ipcq", "pe_ipcq", pe_ipcq_attrs, kb_pe_ipcq_ops, "PE-to-PE queues (IPCQ)"),
};

/* Every message kind the builtins define (a new one is listed here, so
 * that no scripted kind takes its name). */
static const kb_msg_kind *const builtin_kinds[] = {
    &kb_msg_response, &kb_msg_mem_write, &kb_msg_mem_read, &kb_msg_dma_write, &kb_msg_dma_read, &kb_msg_transfer,
    &kb_msg_kernel_launch, &kb_msg_mmu_map, &kb_msg_mmu_unmap, &kb_msg_completion, &kb_msg_ipcq_install,
    &kb_msg_ipcq_token, &kb_msg_ipcq_credit,
};

const kb_msg_kind *kb_comp_builtin_kind(const char *name)
{
    for (size_t i = 0; i < COUNT(builtin_kinds); i++)
        if (strcmp(builtin_kinds[i]->name, name) == 0)
            return builtin_kinds[i];
    return NULL;
}

void kb_comp_register_builtins(kb_registry *reg)
{
    for (size_t i = 0; i < COUNT(builtins); i++)
        kb_registry_add(reg, &builtins[i]);
}
