/* Builtin component implementations and what they share.
 *
 * Each builtin is a kb_impl (name, attributes with defaults, behaviour)
 * registered by kb_comp_register_builtins. Behaviours live one per file:
 * transit.c (routers, UCIe, switch), store_forward.c (PCIe endpoint),
 * hbm_ctrl.c, sram.c; the command processors IO_CPU and M_CPU in device/
 * (device/control.h); the PE's parts in the PE wing, pe/ (pe/pe.h
 * declares their behaviours and the PE DMA's entry point); what a target
 * does once it has served a request (op log, data, answer) is in target.c.
 * Components whose behaviour is a script in a higher layer (Lua) are in
 * scripted.c (scripted.h). */
#ifndef KB_COMP_COMP_H
#define KB_COMP_COMP_H

#include "comp/mem_access.h"
#include "fabric/fabric.h"
#include "topo/registry.h"

/* Adds every builtin.* implementation to reg. */
void kb_comp_register_builtins(kb_registry *reg);
/* The builtin message kind named `name` (MemoryWrite, KernelLaunch ...),
 * or NULL. */
const kb_msg_kind *kb_comp_builtin_kind(const char *name);

/* Behaviours (kb_impl.ops of the builtins). */
extern const kb_comp_ops kb_transit_ops;
extern const kb_comp_ops kb_pcie_ep_ops;
extern const kb_comp_ops kb_hbm_ctrl_ops;
extern const kb_comp_ops kb_sram_ops;

/* What a target (HBM controller, SRAM) does once a memory access (t:
 * kb_mem_req_of(t) is not NULL) is served at the current time: a write
 * completes (host) or is acknowledged with an empty response (PE DMA); a
 * read returns its bytes on the reverse path. */
void kb_target_finish(kb_txn *t);
/* Memory target c received t, which is not a memory access: fails the run
 * naming t's kind, transaction and sender. */
void kb_target_refuse(kb_comp *c, const kb_txn *t);
/* The memory space a target node holds, for op-log records: "hbm", "sram". */
const char *kb_target_space(const kb_node *n);
/* Completes t at time `at` (now or later). */
void kb_complete_at(kb_txn *t, kb_time at);

/* Store-and-forward handling of a whole transaction (PCIe endpoint, and
 * what IO_CPU, M_CPU, PE_CPU and PE_MMU pass on or end without acting on
 * it): overhead in parallel, then on or done. */
void kb_store_forward_txn(kb_comp *c, kb_txn *t);

#endif
