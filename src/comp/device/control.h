/* Device control: operations the host starts at a SIP's PCIe endpoint that
 * the command processors carry to PEs and answer (execution-pe-tl.md
 * §1.4-1.9): a kernel launch, an MMU map or unmap.
 *
 *   host -> PCIe EP -> IO_CPU --(a message per cube)--> M_CPU --(per PE)--> leaf
 *   leaf done -> M_CPU (all its PEs) -> IO_CPU (all its cubes) -> PCIe EP: complete
 *
 * Messages (kinds owned here): KernelLaunch, MmuMap, MmuUnmap going down,
 * Completion coming back; every one is a 0-byte control message. IO_CPU
 * fans out to the M_CPUs of its SIP, a launch's start barrier stamped first
 * (io_cpu.c); M_CPU fans out to its PEs' leaves (PE_CPU for a launch,
 * PE_MMU for a map); each aggregates the answers of those it fanned out to
 * (the two are one fan-out and collect at two levels, control.c). Each
 * component pays its overhead once per message it handles; passing a
 * message on is free (kb_fabric_send). A PE_CPU answers a launch with a Completion when its
 * kernel is done; a PE_MMU sends none: its M_CPU counts the map message's
 * arrival (the sub-transaction's completion), as the spec's M_CPU waits
 * on each sub-transaction. The leaves' handlers live in the PE wing.
 *
 * Targets are grouped by SIP (ascending), then by cube and PE in the order
 * they are given. An operation lives until the host's completion has been
 * delivered (or its simulation is freed). */
#ifndef KB_COMP_DEVICE_CONTROL_H
#define KB_COMP_DEVICE_CONTROL_H

#include "fabric/fabric.h"

extern const kb_msg_kind kb_msg_kernel_launch; /* "KernelLaunch" */
extern const kb_msg_kind kb_msg_mmu_map;       /* "MmuMap" */
extern const kb_msg_kind kb_msg_mmu_unmap;     /* "MmuUnmap" */
extern const kb_msg_kind kb_msg_completion;    /* "Completion": an answer going back up */
/* "IpcqInstall": a PE-to-PE queue plan for PE_IPCQ (src/comp/pe/ipcq.h);
 * like a map, M_CPU counts its arrival at the leaf as the PE's answer. */
extern const kb_msg_kind kb_msg_ipcq_install;

typedef struct kb_ctrl_target {
    int sip, cube, pe;
} kb_ctrl_target;

/* One page-table entry of a map (unmap: pa unused). */
typedef struct kb_mmu_entry {
    uint64_t va, pa, size;
} kb_mmu_entry;

/* What one PE reports when its kernel is done. */
typedef struct kb_pe_answer {
    kb_time start_ps, end_ps; /* the kernel body's window */
    kb_time late_ps;          /* how far after the barrier it could start */
    kb_time dma_ps, compute_ps;
    uint64_t calls;           /* tl calls */
} kb_pe_answer;

/* What a KernelLaunch asks of each target PE: its kernel's name and modes,
 * and who runs the body. PE_CPU makes a kernel instance at the launch's
 * start barrier and calls run() with it; the runner tells the body's end
 * with kb_kernel_finish (src/comp/pe/pe.h). */
struct kb_kernel;
typedef struct kb_launch {
    const char *name;   /* copied by kb_ctrl_set_launch */
    bool data;          /* data mode: values are computed */
    bool pa_fallback;   /* an unmapped address is used as a physical one */
    void (*run)(void *ctx, struct kb_kernel *k, int sip, int cube, int pe);
    void (*release)(void *ctx); /* the operation is over (also unfinished) */
    void *ctx;
} kb_launch;

typedef struct kb_ctrl_op kb_ctrl_op;
typedef void (*kb_ctrl_done_fn)(kb_ctrl_op *op, void *arg);

/* A new operation of `kind` (KernelLaunch, MmuMap or MmuUnmap) to the
 * targets (copied; n >= 1). */
kb_ctrl_op *kb_ctrl_new(const kb_msg_kind *kind, const kb_ctrl_target *targets, size_t n);
/* MmuMap / MmuUnmap: the entries every target PE applies (copied). */
void kb_ctrl_set_entries(kb_ctrl_op *op, const kb_mmu_entry *entries, size_t n);
/* MmuMap: what the entries hold ("tensor 'w' [4, 4] f32"), named by PE_MMU
 * when an access leaves an entry (copied; NULL: nothing). */
void kb_ctrl_set_label(kb_ctrl_op *op, const char *label);
/* What the leaves apply, shared by all of them (an IpcqInstall's plan):
 * the operation owns it and calls release(object) when it ends. */
void kb_ctrl_set_object(kb_ctrl_op *op, void *object, void (*release)(void *object));
void *kb_ctrl_object(const kb_ctrl_op *op);
/* KernelLaunch: the grid whose rectangle the start barrier covers (PEs
 * 0..pes-1 of cubes 0..cubes-1 of each target SIP), and what the PEs run
 * (copied; the operation owns l->ctx from now: release() when it ends). */
void kb_ctrl_set_launch(kb_ctrl_op *op, int grid_pes, int grid_cubes, const kb_launch *l);
/* Called once when the completion is back at the host. */
void kb_ctrl_on_done(kb_ctrl_op *op, kb_ctrl_done_fn fn, void *arg);

/* Sends op (taken over: freed after its done callback, or now on failure)
 * from the PCIe endpoint of each target SIP's first IO chiplet now. False
 * with *err naming the missing node or route. */
bool kb_ctrl_submit(kb_fabric *f, kb_ctrl_op *op, char **err);
/* Drops the submitter's interest: the operation is freed when its last
 * message is (a simulation closed before the operation completed). */
void kb_ctrl_abandon(kb_ctrl_op *op);

/* ---- what the leaves see ---- */

/* The operation a control message belongs to and the target or group it
 * serves, or NULL if t is not a control message. */
kb_ctrl_op *kb_ctrl_of(const kb_txn *t, size_t *index);
const kb_msg_kind *kb_ctrl_kind(const kb_ctrl_op *op);
const kb_ctrl_target *kb_ctrl_target_at(const kb_ctrl_op *op, size_t i);
size_t kb_ctrl_ntargets(const kb_ctrl_op *op);
const kb_mmu_entry *kb_ctrl_entries(const kb_ctrl_op *op, size_t *n);
const char *kb_ctrl_label(const kb_ctrl_op *op); /* NULL if none */
const kb_launch *kb_ctrl_launch(const kb_ctrl_op *op);
/* A launch's start barrier, stamped by the target's SIP's IO_CPU. */
kb_time kb_ctrl_start_ps(const kb_ctrl_op *op, int sip);
/* The answers of a launch's PEs, in target order (valid in the done callback). */
const kb_pe_answer *kb_ctrl_answers(const kb_ctrl_op *op);

/* A leaf (PE_CPU) has finished target i: records its answer and sends the
 * Completion from node `leaf` to the target's M_CPU now. */
void kb_ctrl_leaf_answer(kb_fabric *f, uint32_t leaf, kb_ctrl_op *op, size_t i, const kb_pe_answer *a);
/* Charges c's overhead for t (busy time) and runs fn(t) when it is paid
 * (kb_txn_comp(t) is c). */
void kb_ctrl_after_overhead(kb_comp *c, kb_txn *t, void (*fn)(kb_txn *t));
/* Completes control message t at its node now, returning its operation and
 * index with a reference the caller drops with kb_ctrl_put. */
kb_ctrl_op *kb_ctrl_take(kb_txn *t, size_t *index);
void kb_ctrl_put(kb_ctrl_op *op);

/* ---- the command processors ---- */

/* IO_CPU and M_CPU (control.c; registered in builtin.c). */
extern const kb_comp_ops kb_io_cpu_ops;
extern const kb_comp_ops kb_m_cpu_ops;

/* The node of `kind` at (sip, cube, pe, io) (-1: a coordinate that does
 * not apply) in f's topology, checked: one is there and, if `need` is not
 * NULL, its behaviour is `need`. False with *err naming the place, saying
 * `what` asked. */
bool kb_ctrl_node_at(kb_fabric *f, const char *kind, int sip, int cube, int pe, int io, const kb_comp_ops *need,
                     const char *what, uint32_t *out, char **err);
/* IO_CPU io's start barrier for a launch over a grid of pes x cubes on its
 * SIP, from now (io_cpu.c). False after failing the run if a node or a
 * route of the grid is missing. */
bool kb_ctrl_start_barrier(kb_comp *io, int sip, int pes, int cubes, kb_time *at);

#endif
