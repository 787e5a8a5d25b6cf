/* Store-and-forward handling (builtin.pcie_ep; the messages IO_CPU, M_CPU
 * and the PE leaves pass on or end without acting on them): not
 * flit-aware, so a transaction is reassembled here; each one pays the
 * overhead in parallel with the others (each message is its own process
 * in the spec) and leaves as a new train of flits, or completes if this is
 * the end of its path. */
#include "comp/comp.h"

#include "comp/device/control.h"
#include "core/sim.h"

void kb_store_forward_txn(kb_comp *c, kb_txn *t)
{
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab));
    kb_time ready = now + c->overhead_ps;
    kb_comp_busy(c, now, ready);
    if (t->step + 1 < t->path->n)
        kb_fabric_forward(t, ready);
    else
        kb_complete_at(t, ready);
}

/* What may end at a PCIe endpoint: a SIP's answer to a device control
 * operation, a host read's data, a transfer. */
static const kb_msg_handler pcie_ep_handlers[] = {{&kb_msg_completion, kb_store_forward_txn},
                                                  {&kb_msg_response, kb_store_forward_txn},
                                                  {&kb_msg_transfer, kb_store_forward_txn},
                                                  {NULL, NULL}};

const kb_comp_ops kb_pcie_ep_ops = {.flit_aware = false, .handlers = pcie_ep_handlers, .on_txn = kb_store_forward_txn};
