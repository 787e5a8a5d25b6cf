/* Device control operations: targets grouped by SIP and cube, their
 * messages, the command processors' fan-out and collect, answers and
 * completion (control.h). */
#include "comp/device/control.h"

#include "comp/comp.h"
#include "core/sim.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sip_group {
    int sip;
    size_t first_cube, ncubes; /* its cube groups */
    size_t pending;            /* cube answers still expected */
    kb_time start_ps;          /* a launch's barrier, stamped by its IO_CPU */
} sip_group;

struct kb_ctrl_op {
    const kb_msg_kind *kind;
    kb_ctrl_target *targets; /* grouped: by SIP, then cube, then PE */
    size_t n;
    kb_ctrl_target *cubes;   /* cube groups (pe = -1), in target order */
    size_t *cube_first;      /* targets of cube group g: [cube_first[g], cube_first[g + 1]) */
    size_t *cube_pending;    /* leaf answers still expected per cube group */
    size_t ncubes;
    sip_group *sips;         /* ascending */
    size_t nsips, sips_pending;
    kb_mmu_entry *entries;
    size_t nentries;
    char *label;
    void *object;                  /* what the leaves apply (an IPCQ install plan) */
    void (*object_release)(void *object);
    int grid_pes, grid_cubes;
    kb_launch launch;
    kb_pe_answer *answers;
    kb_ctrl_done_fn done;
    void *done_arg;
    int refs; /* the submitter's, and one per message in flight */
};

/* The payload of every control message. */
typedef struct ctrl_payload {
    kb_ctrl_op *op;
    size_t index; /* SIP group (to IO_CPU), cube group (to M_CPU / back to IO_CPU) or target */
} ctrl_payload;
KB_PAYLOAD_FITS(ctrl_payload);

static const char layout;

static void op_unref(kb_ctrl_op *op)
{
    if (--op->refs > 0)
        return;
    free(op->targets);
    free(op->cubes);
    free(op->cube_first);
    free(op->cube_pending);
    free(op->sips);
    free(op->entries);
    free(op->label);
    if (op->object_release)
        op->object_release(op->object);
    free(op->answers);
    if (op->launch.release)
        op->launch.release(op->launch.ctx);
    free((char *)op->launch.name);
    free(op);
}

static void release(void *payload)
{
    ctrl_payload *p = payload;
    if (p->op)
        op_unref(p->op);
    p->op = NULL;
}

/* The PE part an operation's messages end at. */
static const char *leaf_kind(const kb_ctrl_op *op)
{
    if (op->kind == &kb_msg_kernel_launch)
        return "pe_cpu";
    return op->kind == &kb_msg_ipcq_install ? "pe_ipcq" : "pe_mmu";
}

#define CTRL_KIND(nm) KB_MSG_KIND(nm, &layout, release)
const kb_msg_kind kb_msg_kernel_launch = CTRL_KIND("KernelLaunch");
const kb_msg_kind kb_msg_mmu_map = CTRL_KIND("MmuMap");
const kb_msg_kind kb_msg_mmu_unmap = CTRL_KIND("MmuUnmap");
const kb_msg_kind kb_msg_completion = CTRL_KIND("Completion");
const kb_msg_kind kb_msg_ipcq_install = CTRL_KIND("IpcqInstall");

/* ---- building ---- */

typedef struct keyed {
    kb_ctrl_target t;
    size_t cube_rank, index; /* first appearance of its (sip, cube); its own position */
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->t.sip != y->t.sip)
        return x->t.sip < y->t.sip ? -1 : 1;
    if (x->cube_rank != y->cube_rank)
        return x->cube_rank < y->cube_rank ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

kb_ctrl_op *kb_ctrl_new(const kb_msg_kind *kind, const kb_ctrl_target *targets, size_t n)
{
    kb_ctrl_op *op = kb_xcalloc(1, sizeof *op);
    op->kind = kind;
    op->refs = 1;
    keyed *k = kb_xmalloc((n ? n : 1) * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        size_t rank = i;
        for (size_t j = 0; j < i; j++)
            if (targets[j].sip == targets[i].sip && targets[j].cube == targets[i].cube) {
                rank = k[j].cube_rank;
                break;
            }
        k[i] = (keyed){targets[i], rank, i};
    }
    qsort(k, n, sizeof *k, cmp_keyed);
    op->targets = kb_xmalloc((n ? n : 1) * sizeof *op->targets);
    op->cubes = kb_xmalloc((n ? n : 1) * sizeof *op->cubes);
    op->cube_first = kb_xmalloc((n + 1) * sizeof *op->cube_first);
    op->cube_pending = kb_xcalloc(n ? n : 1, sizeof *op->cube_pending);
    op->sips = kb_xcalloc(n ? n : 1, sizeof *op->sips);
    op->answers = kb_xcalloc(n ? n : 1, sizeof *op->answers);
    op->n = n;
    for (size_t i = 0; i < n; i++) {
        op->targets[i] = k[i].t;
        bool new_cube = i == 0 || k[i].cube_rank != k[i - 1].cube_rank || k[i].t.sip != k[i - 1].t.sip;
        if (new_cube) {
            op->cube_first[op->ncubes] = i;
            op->cubes[op->ncubes] = (kb_ctrl_target){k[i].t.sip, k[i].t.cube, -1};
            if (op->nsips == 0 || op->sips[op->nsips - 1].sip != k[i].t.sip)
                op->sips[op->nsips++] = (sip_group){k[i].t.sip, op->ncubes, 0, 0, 0};
            op->sips[op->nsips - 1].ncubes++;
            op->ncubes++;
        }
        op->cube_pending[op->ncubes - 1]++;
    }
    op->cube_first[op->ncubes] = n;
    for (size_t s = 0; s < op->nsips; s++)
        op->sips[s].pending = op->sips[s].ncubes;
    op->sips_pending = op->nsips;
    free(k);
    return op;
}

void kb_ctrl_set_entries(kb_ctrl_op *op, const kb_mmu_entry *entries, size_t n)
{
    free(op->entries);
    op->entries = kb_xmalloc((n ? n : 1) * sizeof *entries);
    memcpy(op->entries, entries, n * sizeof *entries);
    op->nentries = n;
}

void kb_ctrl_set_label(kb_ctrl_op *op, const char *label)
{
    free(op->label);
    op->label = kb_xstrdup(label);
}

void kb_ctrl_set_object(kb_ctrl_op *op, void *object, void (*free_object)(void *object))
{
    if (op->object_release)
        op->object_release(op->object);
    op->object = object;
    op->object_release = free_object;
}

void *kb_ctrl_object(const kb_ctrl_op *op) { return op->object; }

void kb_ctrl_set_launch(kb_ctrl_op *op, int grid_pes, int grid_cubes, const kb_launch *l)
{
    op->grid_pes = grid_pes;
    op->grid_cubes = grid_cubes;
    op->launch = *l;
    op->launch.name = kb_xstrdup(l->name);
}

void kb_ctrl_on_done(kb_ctrl_op *op, kb_ctrl_done_fn fn, void *arg)
{
    op->done = fn;
    op->done_arg = arg;
}

/* ---- accessors ---- */

kb_ctrl_op *kb_ctrl_of(const kb_txn *t, size_t *index)
{
    if (t->request->layout != &layout)
        return NULL;
    const ctrl_payload *p = KB_PAYLOAD((kb_txn *)t, ctrl_payload);
    if (index)
        *index = p->index;
    return p->op;
}

const kb_msg_kind *kb_ctrl_kind(const kb_ctrl_op *op) { return op->kind; }
const kb_ctrl_target *kb_ctrl_target_at(const kb_ctrl_op *op, size_t i) { return &op->targets[i]; }
size_t kb_ctrl_ntargets(const kb_ctrl_op *op) { return op->n; }
const kb_launch *kb_ctrl_launch(const kb_ctrl_op *op) { return &op->launch; }
const kb_pe_answer *kb_ctrl_answers(const kb_ctrl_op *op) { return op->answers; }

const kb_mmu_entry *kb_ctrl_entries(const kb_ctrl_op *op, size_t *n)
{
    *n = op->nentries;
    return op->entries;
}

const char *kb_ctrl_label(const kb_ctrl_op *op) { return op->label; }

static sip_group *sip_of(const kb_ctrl_op *op, int sip)
{
    for (size_t s = 0; s < op->nsips; s++)
        if (op->sips[s].sip == sip)
            return &op->sips[s];
    return NULL;
}

kb_time kb_ctrl_start_ps(const kb_ctrl_op *op, int sip)
{
    const sip_group *g = sip_of(op, sip);
    return g ? g->start_ps : 0;
}

/* ---- messages ---- */

/* A 0-byte control message of `kind` for op from node src to dst (view
 * all), sent now as one src has already handled; `index` names the target
 * or group it serves; done (may be NULL; its argument is op) fires where
 * it completes. */
static bool send_message(kb_fabric *f, kb_ctrl_op *op, const kb_msg_kind *kind, size_t index, uint32_t src,
                         uint32_t dst, kb_txn_done_fn done, char **err)
{
    const kb_path *path = kb_route(kb_fabric_topo(f), KB_VIEW_ALL, src, dst, err);
    if (!path)
        return false;
    kb_txn *t = kb_txn_new(f, kind, path, 0);
    *KB_PAYLOAD(t, ctrl_payload) = (ctrl_payload){op, index};
    op->refs++;
    t->done = done;
    t->done_arg = op;
    kb_fabric_send(f, t);
    return true;
}

/* The host's completion: every SIP's Completion is back at its PCIe endpoint. */
static void sip_done(kb_txn *t, void *arg)
{
    (void)t;
    kb_ctrl_op *op = arg;
    if (--op->sips_pending > 0)
        return;
    kb_ctrl_done_fn fn = op->done;
    op->done = NULL;
    if (fn)
        fn(op, op->done_arg);
    op_unref(op); /* the submitter's */
}

void kb_ctrl_abandon(kb_ctrl_op *op)
{
    op->done = NULL;
    op_unref(op);
}

/* "sip 0, cube 3, pe 5": the coordinates that apply. */
static void format_place(char *buf, size_t n, int sip, int cube, int pe, int io)
{
    int at = snprintf(buf, n, "sip %d", sip);
    if (cube >= 0)
        at += snprintf(buf + at, n - (size_t)at, ", cube %d", cube);
    if (pe >= 0)
        at += snprintf(buf + at, n - (size_t)at, ", pe %d", pe);
    if (io >= 0)
        snprintf(buf + at, n - (size_t)at, ", io %d", io);
}

bool kb_ctrl_node_at(kb_fabric *f, const char *kind, int sip, int cube, int pe, int io, const kb_comp_ops *need,
                     const char *what, uint32_t *out, char **err)
{
    const kb_topo *t = kb_fabric_topo(f);
    int64_t n = kb_topo_node_at(t, kind, sip, cube, pe, io);
    if (n < 0) {
        char place[96];
        format_place(place, sizeof place, sip, cube, pe, io);
        *err = kb_asprintf("%s: %s %s at %s in topology %s", what, n == KB_NODE_AMBIGUOUS ? "more than one" : "no",
                           kind, place, kb_topo_name(t));
        return false;
    }
    const kb_comp *c = kb_fabric_comp(f, (uint32_t)n);
    if (need && c->ops != need) {
        *err = kb_asprintf("%s: %s is %s, which does not carry %s messages (builtin.%s does)", what,
                           c->n->id, c->n->spec->impl->name, what, kind);
        return false;
    }
    *out = (uint32_t)n;
    return true;
}

bool kb_ctrl_submit(kb_fabric *f, kb_ctrl_op *op, char **err)
{
    const kb_topo *t = kb_fabric_topo(f);
    const char *what = op->kind->name;
    uint32_t *ends = kb_xmalloc(2 * op->nsips * sizeof *ends); /* per SIP: PCIe endpoint, IO_CPU */
    for (size_t i = 0; i < op->n; i++)
        for (size_t j = 0; j < i; j++)
            if (op->targets[j].sip == op->targets[i].sip && op->targets[j].cube == op->targets[i].cube &&
                op->targets[j].pe == op->targets[i].pe) {
                *err = kb_asprintf("%s: PE sip%d.cube%d.pe%d is targeted twice", what, op->targets[i].sip,
                                   op->targets[i].cube, op->targets[i].pe);
                goto fail;
            }
    /* everything the messages will meet, before the first one leaves */
    for (size_t s = 0; s < op->nsips; s++) {
        int sip = op->sips[s].sip;
        uint32_t *ep = &ends[2 * s], *io = &ends[2 * s + 1], m, leaf;
        if (!kb_ctrl_node_at(f, "pcie_ep", sip, -1, -1, 0, NULL, what, ep, err) ||
            !kb_ctrl_node_at(f, "io_cpu", sip, -1, -1, 0, &kb_io_cpu_ops, what, io, err) ||
            !kb_route(t, KB_VIEW_ALL, *ep, *io, err) || !kb_route(t, KB_VIEW_ALL, *io, *ep, err))
            goto fail;
        for (size_t g = op->sips[s].first_cube; g < op->sips[s].first_cube + op->sips[s].ncubes; g++) {
            if (!kb_ctrl_node_at(f, "m_cpu", sip, op->cubes[g].cube, -1, -1, &kb_m_cpu_ops, what, &m, err) ||
                !kb_route(t, KB_VIEW_ALL, *io, m, err) || !kb_route(t, KB_VIEW_ALL, m, *io, err))
                goto fail;
            for (size_t i = op->cube_first[g]; i < op->cube_first[g + 1]; i++)
                if (!kb_ctrl_node_at(f, leaf_kind(op), sip, op->cubes[g].cube, op->targets[i].pe, -1,
                                     NULL, what, &leaf, err) ||
                    !kb_route(t, KB_VIEW_ALL, m, leaf, err) || !kb_route(t, KB_VIEW_ALL, leaf, m, err))
                    goto fail;
        }
    }
    for (size_t s = 0; s < op->nsips; s++) {
        kb_txn *x = kb_txn_new(f, op->kind, kb_route(t, KB_VIEW_ALL, ends[2 * s], ends[2 * s + 1], err), 0);
        *KB_PAYLOAD(x, ctrl_payload) = (ctrl_payload){op, s};
        op->refs++;
        kb_fabric_inject(f, x);
    }
    free(ends);
    return true;
fail:
    free(ends);
    op->done = NULL;
    op_unref(op);
    return false;
}

/* send_message() from component c, whose failure (a node or route
 * missing) stops the run naming c. */
static void pass_on(kb_comp *c, kb_ctrl_op *op, const kb_msg_kind *kind, size_t index, int64_t dst,
                    kb_txn_done_fn done)
{
    char *err = NULL;
    if (dst < 0 || !send_message(c->fab, op, kind, index, c->node, (uint32_t)dst, done, &err)) {
        kb_comp_fail(c, "cannot pass on %s: %s", kind->name, err ? err : "its next node is missing");
        free(err);
    }
}

/* ---- the leaves' steps ---- */

void kb_ctrl_leaf_answer(kb_fabric *f, uint32_t leaf, kb_ctrl_op *op, size_t i, const kb_pe_answer *a)
{
    op->answers[i] = *a;
    const kb_ctrl_target *tg = &op->targets[i];
    pass_on(kb_fabric_comp(f, leaf), op, &kb_msg_completion, i,
            kb_topo_cube_node(kb_fabric_topo(f), tg->sip, tg->cube, "m_cpu"), NULL);
}

void kb_ctrl_after_overhead(kb_comp *c, kb_txn *t, void (*fn)(kb_txn *t))
{
    kb_time now = kb_sim_now(kb_fabric_sim(c->fab)), ready = now + c->overhead_ps;
    kb_comp_busy(c, now, ready);
    if (ready > now)
        kb_fabric_at(t, ready, fn);
    else
        fn(t);
}

kb_ctrl_op *kb_ctrl_take(kb_txn *t, size_t *index)
{
    kb_ctrl_op *op = kb_ctrl_of(t, index);
    op->refs++; /* kept across the message's completion */
    kb_txn_complete(t);
    return op;
}

void kb_ctrl_put(kb_ctrl_op *op) { op_unref(op); }

/* ---- the command processors ----
 *
 * IO_CPU and M_CPU do the same at two levels of an operation's groups.
 * IO_CPU holds a SIP group, whose children are its cube groups (at their
 * M_CPUs); M_CPU holds a cube group, whose children are its targets (at
 * their leaves). A message going down, its overhead paid, goes on to each
 * child; an answer coming up is counted, and with the last one the
 * group's Completion goes a level up: M_CPU's to IO_CPU, IO_CPU's to the
 * PCIe endpoint, where it completes the SIP's part for the host. Before
 * fanning out a launch, IO_CPU stamps its start barrier (io_cpu.c). */

typedef enum level { SIP_LEVEL, CUBE_LEVEL } level;

/* The two processors share their handlers: their ops tell them apart. */
static level level_of(const kb_comp *c) { return c->ops == &kb_io_cpu_ops ? SIP_LEVEL : CUBE_LEVEL; }

/* The children of group g: [*first, *first + count). */
static size_t children(const kb_ctrl_op *op, level l, size_t g, size_t *first)
{
    if (l == SIP_LEVEL) {
        *first = op->sips[g].first_cube;
        return op->sips[g].ncubes;
    }
    *first = op->cube_first[g];
    return op->cube_first[g + 1] - op->cube_first[g];
}

/* Where child j is: its cube's M_CPU, or its target's leaf. */
static int64_t child_node(const kb_topo *t, const kb_ctrl_op *op, level l, size_t j)
{
    if (l == SIP_LEVEL)
        return kb_topo_cube_node(t, op->cubes[j].sip, op->cubes[j].cube, "m_cpu");
    const kb_ctrl_target *tg = &op->targets[j];
    return kb_topo_pe_node(t, tg->sip, tg->cube, tg->pe, leaf_kind(op));
}

/* The group child j belongs to. */
static size_t parent(const kb_ctrl_op *op, level l, size_t j)
{
    if (l == SIP_LEVEL)
        return (size_t)(sip_of(op, op->cubes[j].sip) - op->sips);
    size_t g = 0;
    while (g + 1 < op->ncubes && op->cube_first[g + 1] <= j)
        g++;
    return g;
}

/* Child j has answered at processor c: with the last of its group, the
 * group's Completion goes a level up. */
static void count_answer(kb_comp *c, kb_ctrl_op *op, level l, size_t j)
{
    size_t g = parent(op, l, j);
    size_t *left = l == SIP_LEVEL ? &op->sips[g].pending : &op->cube_pending[g];
    if (--*left > 0)
        return;
    const kb_topo *t = kb_fabric_topo(c->fab);
    if (l == SIP_LEVEL)
        pass_on(c, op, &kb_msg_completion, g, kb_topo_io_node(t, op->sips[g].sip, 0, "pcie_ep"), sip_done);
    else
        pass_on(c, op, &kb_msg_completion, g, kb_topo_io_node(t, op->cubes[g].sip, 0, "io_cpu"), NULL);
}

/* A map message reached its PE_MMU and was applied: that PE's answer, at
 * the M_CPU that sent it. */
static void map_applied(kb_txn *t, void *arg)
{
    (void)arg; /* the operation, also in the payload */
    const ctrl_payload *p = KB_PAYLOAD(t, ctrl_payload);
    count_answer(kb_fabric_comp(t->fab, t->path->nodes[0]), p->op, CUBE_LEVEL, p->index);
}

/* A message going down, its overhead paid: on to every child. */
static void fan_out(kb_txn *t)
{
    kb_comp *c = kb_txn_comp(t);
    level l = level_of(c);
    size_t g;
    kb_ctrl_op *op = kb_ctrl_take(t, &g);
    bool launch = op->kind == &kb_msg_kernel_launch;
    if (l == SIP_LEVEL && launch &&
        !kb_ctrl_start_barrier(c, op->sips[g].sip, op->grid_pes, op->grid_cubes, &op->sips[g].start_ps)) {
        op_unref(op);
        return;
    }
    size_t first, n = children(op, l, g, &first);
    for (size_t j = first; j < first + n; j++)
        pass_on(c, op, op->kind, j, child_node(kb_fabric_topo(c->fab), op, l, j),
                l == CUBE_LEVEL && !launch ? map_applied : NULL);
    op_unref(op);
}

/* A child's Completion, its overhead paid: counted. */
static void collect(kb_txn *t)
{
    kb_comp *c = kb_txn_comp(t);
    size_t j;
    kb_ctrl_op *op = kb_ctrl_take(t, &j);
    count_answer(c, op, level_of(c), j);
    op_unref(op);
}

static void down(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, fan_out); }
static void up(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, collect); }

static const kb_msg_handler handlers[] = {{&kb_msg_kernel_launch, down}, {&kb_msg_mmu_map, down},
                                          {&kb_msg_mmu_unmap, down},      {&kb_msg_ipcq_install, down},
                                          {&kb_msg_completion, up},
                                          {&kb_msg_transfer, kb_store_forward_txn}, {NULL, NULL}};

const kb_comp_ops kb_io_cpu_ops = {.flit_aware = false, .handlers = handlers, .on_txn = kb_store_forward_txn};
const kb_comp_ops kb_m_cpu_ops = {.flit_aware = false, .handlers = handlers, .on_txn = kb_store_forward_txn};
