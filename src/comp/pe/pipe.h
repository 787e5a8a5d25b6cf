/* Internal to the PE wing (src/comp/pe): the pieces of the composite
 * pipeline that scheduler.c, pipeline.c, tile_data.c and kernel.c share.
 * Everything outside the wing uses pe.h. */
#ifndef KB_COMP_PE_PIPE_H
#define KB_COMP_PE_PIPE_H

#include "comp/pe/engines.h"

typedef struct kb_token {
    kb_composite *c;
    kb_tile t;
    int idx;               /* current stage */
    uint64_t rf;           /* register-file bytes it holds for its operands */
    float *buf[2];         /* data: operand tiles */
    float *res;            /* data: partial product (GEMM) or result (math) */
    float *acc;            /* data: the accumulator it carries out (last k) */
    struct kb_token *next; /* free list */
} kb_token;

typedef struct kb_lane kb_lane;

/* Something waiting for space in a lane: another lane or the feeder. */
typedef struct kb_producer {
    kb_token *held;
    kb_lane *target;
    void (*resume)(struct kb_producer *p);
    struct kb_producer *next;
} kb_producer;

struct kb_lane {
    struct kb_pipe *pp;
    kb_stage_type type;
    uint32_t node;         /* the part, for the trace */
    int cap;               /* slots of q */
    bool unbounded;        /* queue_depth 0: q grows, an offer always succeeds */
    kb_token **q;
    int head, n;
    kb_token *cur;         /* in service, or finished and waiting to hand over */
    kb_producer me;        /* when this lane waits for space downstream */
    kb_producer *waiters, *waiters_tail;
    bool rf_wait;          /* FETCH: waiting for register-file space */
    int phase;             /* of the current stage (DMA stages have several) */
    kb_time svc_start;     /* when the current stage's service began */
};

typedef struct kb_pipe {
    kb_pe *pe;
    kb_lane lanes[KB_ST_COUNT];
    uint8_t lane_of[KB_ST_COUNT];        /* the lane serving each stage type (serial_worker: shared) */
    kb_composite *feed_head, *feed_tail; /* composites not fully fed */
    kb_producer feeder;
    bool feeder_waiting;                 /* for a ready time or for space */
    kb_token *free_tokens;
    uint64_t rf_cap, rf_used;            /* rf_cap 0 (register_file_kb 0): no capacity model */
    kb_composite **live;                 /* composites not finished */
    size_t nlive, cap_live;
} kb_pipe;

/* pipeline.c */
void kb_pipe_lanes_init(kb_pipe *pp);
kb_lane *kb_pipe_lane(kb_pipe *pp, kb_stage_type st); /* the lane serving stage type st */
void kb_pipe_lanes_free(kb_pipe *pp);    /* tokens in flight too */
kb_token *kb_token_new(kb_pipe *pp, kb_composite *c, uint64_t id);
bool kb_lane_offer(kb_lane *L, kb_token *t); /* false: L's queue is full */
void kb_lane_wait(kb_lane *L, kb_producer *p); /* p->held moves in when a slot frees */
/* scheduler.c: the pipeline's last tile of c is done; a stage of c failed
 * (the first error is kept, err is taken). */
void kb_composite_finish(kb_pipe *pp, kb_composite *c);
void kb_composite_fail(kb_composite *c, char *err);
/* tile_data.c: token t's values after stage st (data mode). */
void kb_tile_data(kb_pipe *pp, kb_token *t, const kb_stage *st);

#endif
