/* Internal to PE_IPCQ (ipcq.c, the component; ipcq_cmd.c, its commands):
 * its state per PE, per direction (a queue pair) and per slot, and the
 * send and recv commands' fields. Everything else uses ipcq.h. */
#ifndef KB_COMP_PE_IPCQ_STATE_H
#define KB_COMP_PE_IPCQ_STATE_H

#include "comp/pe/engines.h"
#include "comp/pe/ipcq.h"
#include "core/sim.h"

/* Per-direction figures (s:stats(), --stats-json). */
typedef struct dir_stats {
    const char *name;
    uint32_t peer;
    uint64_t sent, received; /* messages */
    uint64_t bytes_sent, bytes_received;
    kb_time credit_wait_ps;  /* sends blocked on a full ring */
    kb_time recv_wait_ps;    /* recvs waiting for their message */
    uint32_t max_occupancy;  /* most slots full at once */
} dir_stats;

struct qp;
typedef struct slot {
    struct qp *q;
    bool pending, full, consumed; /* written (not yet visible), visible, read */
    uint64_t seq, nbytes;
    uint32_t src_rank;
    kb_time t_arrive, t_vis;
    void *data;                   /* data mode: the bytes until they land */
} slot;

typedef struct qp {
    const kb_ipcq_dir_cfg *cfg;
    struct kb_ipcq *owner;
    int index;
    kb_pe *peer;
    uint64_t peer_rx_pa;        /* the paired ring at the peer: my tokens go there */
    uint32_t rx_node;           /* my ring's memory (memory-store domain) and offset */
    uint64_t rx_off;
    uint32_t bank;              /* sram/hbm: the memory node of my ring (the bank hop) */
    const kb_path *path;        /* my PE_DMA -> the peer's: tokens out, credits back */
    /* send side */
    uint64_t seq, peer_tail;
    kb_pe_op *send_head, *send_tail;
    /* receive side */
    uint64_t claimed, tail;
    kb_time last_vis;
    slot *slots;
    kb_pe_op *recv_head, *recv_tail;
    uint32_t occupancy;
    char counter[KB_IPCQ_NAME + 64];
    dir_stats st;
} qp;

typedef struct kb_ipcq {
    kb_comp *c;
    kb_pe *pe;
    kb_ipcq_plan *plan;
    uint32_t rank;
    int nq;
    qp *q; /* nq queue pairs, made when a plan is installed (most PEs never have one) */
    kb_pe_op *any_head, *any_tail; /* recvs from any direction */
    kb_reporter rep;
    void (*log)(void *ctx, const char *line); /* --ipcq-trace */
    void *log_ctx;
    /* attributes */
    kb_time poll_ps, tier_ps[3];
    double tier_bw[3];
    uint64_t credit_bytes;
    bool credit_fast; /* credit_fast_path: credit_bytes at the route's narrowest link, off the fabric */
    bool tcm_slot_ports;    /* tcm slots go through PE_TCM's ports (else a tier of their own) */
} kb_ipcq;

/* The send and recv commands' fields (kb_pe_op.args). */
typedef struct kb_ipcq_args {
    bool send;          /* a send, else a recv */
    int dir;            /* the direction's index (recv: -1, any) */
    uint64_t seq;       /* the message's sequence number in it */
    bool claimed;       /* recv: seq is set (a tl.recv_async future's) */
    bool consume;       /* recv: it reads its slot */
    bool credit;        /* recv: its read freed slots, so a credit goes back */
    kb_tview src;       /* send: the source in TCM */
    kb_time t_wait;     /* when it began waiting in PE_IPCQ */
    kb_txn *fast_credit; /* recv: its credit on the fast path (credit_fast_path) */
    kb_pe_op *next;     /* PE_IPCQ's list of waiting commands */
} kb_ipcq_args;
KB_PE_ARGS_FIT(kb_ipcq_args);

static inline kb_ipcq_args *A(const kb_pe_op *op) { return KB_PE_ARGS((kb_pe_op *)op, kb_ipcq_args); }

/* The PE_IPCQ state of PE p, or NULL if its PE_IPCQ is not builtin (ipcq.c). */
kb_ipcq *kb_ipcq_of(const kb_pe *p);

/* The handlers of the two messages, at the PE_IPCQ they are for: PE_DMA,
 * the PE's port, hands them over (kb_pe_dma_serve) (ipcq_cmd.c). */
void kb_ipcq_on_token(kb_comp *ipcq, kb_txn *t);
void kb_ipcq_on_credit(kb_comp *ipcq, kb_txn *t);

#endif
