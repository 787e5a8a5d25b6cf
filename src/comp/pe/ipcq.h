/* PE_IPCQ: queues between PEs (docs/ipcq.md), the PE wing's second public
 * header beside pe.h.
 *
 * An install plan gives every PE of a set its rank, its directions ("E",
 * "global_W", "parent" ...) and, per direction, the peer, the direction
 * it pairs with at the peer and this direction's receive ring: n_slots
 * slots of slot_size bytes at a physical address (the PE's IPCQ window
 * for tcm, the cube SRAM for sram, the PE's HBM slice for hbm). The plan
 * travels from the host to each PE_IPCQ as an IpcqInstall control message
 * (src/comp/device/control.h) and is applied when it arrives.
 *
 * Then tl.send and tl.recv are commands of the PE (kinds of kb_pe_op,
 * pe.h, defined in ipcq_cmd.c):
 *   send: dispatch -> ring space (credits) -> the comm channel reads the
 *         source from TCM and the token leaves (the command ends here)
 *   recv: dispatch -> the token is in the slot -> slot read (+ bank hop for
 *         sram/hbm) -> the 16-byte credit reaches the sender (blocking)
 * A token is one transaction carrying the message's bytes and metadata to
 * the receiving PE's PE_DMA (the PE's port, which hands it to PE_IPCQ);
 * the slot becomes visible (data and metadata at
 * once, I6) when its last flit has arrived and the slot write is done. Times are picoseconds. */
#ifndef KB_COMP_PE_IPCQ_H
#define KB_COMP_PE_IPCQ_H

#include "comp/pe/pe.h"

#define KB_IPCQ_MAX_DIRS 16
#define KB_IPCQ_NAME 32 /* a direction name's bytes, with its NUL */
/* Slots per ring at most: each has state in PE_IPCQ (a message in flight). */
#define KB_IPCQ_MAX_SLOTS 1024

extern const kb_comp_ops kb_pe_ipcq_ops;
extern const kb_msg_kind kb_msg_ipcq_token;  /* "IpcqToken": a message */
extern const kb_msg_kind kb_msg_ipcq_credit; /* "IpcqCredit": a consumed slot, back to the sender */

typedef enum kb_ipcq_kind { KB_IPCQ_TCM, KB_IPCQ_SRAM, KB_IPCQ_HBM } kb_ipcq_kind;
const char *kb_ipcq_kind_name(kb_ipcq_kind k);
bool kb_ipcq_kind_find(const char *name, kb_ipcq_kind *out);

typedef struct kb_ipcq_dir_cfg {
    char name[KB_IPCQ_NAME];
    uint32_t peer;     /* the peer's rank (index in plan->pes) */
    uint32_t peer_dir; /* the paired direction's index at the peer */
    uint64_t rx_pa;    /* this direction's receive ring: n_slots * slot_size bytes */
} kb_ipcq_dir_cfg;

typedef struct kb_ipcq_pe_cfg {
    int sip, cube, pe;
    int ndirs;
    kb_ipcq_dir_cfg dir[KB_IPCQ_MAX_DIRS];
} kb_ipcq_pe_cfg;

typedef struct kb_ipcq_plan {
    int refs;
    kb_ipcq_kind kind;
    bool poll;          /* backpressure: poll (spin on PE_CPU) or sleep */
    uint32_t n_slots;
    uint64_t slot_size;
    uint32_t npes;      /* ranks */
    kb_ipcq_pe_cfg *pes; /* in rank order */
} kb_ipcq_plan;

/* A plan of npes ranks (zeroed configs), one reference. */
kb_ipcq_plan *kb_ipcq_plan_new(uint32_t npes);
void kb_ipcq_plan_unref(kb_ipcq_plan *p);
/* Checks a filled plan against the topology before it is sent: every PE
 * exists and is distinct, ring sizes are sane, each direction's pairing is
 * mutual (my dir d -> peer's peer_dir, which points back to me and to d),
 * distinct direction slots (I3: no two directions of one PE pair with the
 * same peer direction), every ring lies in memory of the buffer kind at
 * its own PE (or, sram, its cube), and the rings are pairwise disjoint
 * (I3.1, by sorting: O(n log n)). False with *err naming the offender. */
bool kb_ipcq_plan_check(const kb_topo *t, const kb_ipcq_plan *p, char **err);

/* ---- what the bindings ask (ipcq.c, ipcq_cmd.c) ---- */

/* The index of direction `name` at p, or -1 (then *err, when err is not
 * NULL, says what is installed: "no IPCQ is installed" or the list). */
int kb_ipcq_dir(kb_pe *p, const char *name, const char *call, char **err);
/* The installed plan's slot size (0 when none is installed). */
uint64_t kb_ipcq_slot_size(const kb_pe *p);
/* This PE's rank, the world size and its directions, or false when no
 * plan includes it. dirs[i] gets the name, peers[i] the peer's rank. */
bool kb_ipcq_rank(const kb_pe *p, uint32_t *rank, uint32_t *world);
int kb_ipcq_neighbors(const kb_pe *p, const char **dirs, uint32_t *peers);

/* Claims the next message of direction dir for a recv to come (a
 * tl.recv_async future): its sequence number. */
uint64_t kb_ipcq_claim(kb_pe *p, int dir);

/* A send or recv command (ipcq_cmd.c): dir is the direction index (recv:
 * -1 for any direction), src the source view in TCM (send), out the
 * result's view, placed in scratch (recv); consume: the recv reads its
 * slot; seq: a tl.recv_async future's claimed message (NULL: the next). */
void kb_pe_op_send(kb_pe_op *op, int dir, const kb_tview *src);
void kb_pe_op_recv(kb_pe_op *op, int dir, const kb_tview *out, bool consume, const uint64_t *seq);
/* A send's or recv's direction index; a recv from any direction: the one
 * it took, once done (-1 before). */
int kb_ipcq_op_dir(const kb_pe_op *op);

/* --ipcq-trace: PE_IPCQ component c calls log(ctx, line) for every
 * message its PE sends and receives (NULL: off). */
void kb_ipcq_set_log(kb_comp *c, void (*log)(void *ctx, const char *line), void *ctx);

#endif
