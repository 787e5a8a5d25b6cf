/* Device control operations: targets grouped by SIP and cube, their
 * messages, answers and completion (control.h). */
#include "comp/device/control.h"

#include "core/sim.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

const kb_msg_kind kb_msg_kernel_launch;
const kb_msg_kind kb_msg_mmu_map;
const kb_msg_kind kb_msg_mmu_unmap;
const kb_msg_kind kb_msg_completion;

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

#define CTRL_KIND(nm) KB_MSG_KIND(nm, &layout, release)
const kb_msg_kind kb_msg_kernel_launch = CTRL_KIND("KernelLaunch");
const kb_msg_kind kb_msg_mmu_map = CTRL_KIND("MmuMap");
const kb_msg_kind kb_msg_mmu_unmap = CTRL_KIND("MmuUnmap");
const kb_msg_kind kb_msg_completion = CTRL_KIND("Completion");

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

void kb_ctrl_grid(const kb_ctrl_op *op, int *pes, int *cubes)
{
    *pes = op->grid_pes;
    *cubes = op->grid_cubes;
}

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

void kb_ctrl_set_start(kb_ctrl_op *op, int sip, kb_time at) { sip_of(op, sip)->start_ps = at; }

size_t kb_ctrl_cube_first(const kb_ctrl_op *op, size_t g, size_t *n)
{
    *n = op->cube_first[g + 1] - op->cube_first[g];
    return op->cube_first[g];
}

size_t kb_ctrl_sip_cubes(const kb_ctrl_op *op, int sip, size_t *n)
{
    const sip_group *g = sip_of(op, sip);
    *n = g->ncubes;
    return g->first_cube;
}

const kb_ctrl_target *kb_ctrl_cube(const kb_ctrl_op *op, size_t g) { return &op->cubes[g]; }
int kb_ctrl_group_sip(const kb_ctrl_op *op, size_t s) { return op->sips[s].sip; }

size_t kb_ctrl_cube_of(const kb_ctrl_op *op, size_t target)
{
    size_t g = 0;
    while (g + 1 < op->ncubes && op->cube_first[g + 1] <= target)
        g++;
    return g;
}

bool kb_ctrl_cube_answered(kb_ctrl_op *op, size_t g) { return --op->cube_pending[g] == 0; }
bool kb_ctrl_sip_answered(kb_ctrl_op *op, int sip) { return --sip_of(op, sip)->pending == 0; }

/* ---- messages ---- */

bool kb_ctrl_send(kb_fabric *f, kb_ctrl_op *op, const kb_msg_kind *kind, size_t index, uint32_t src,
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

/* The node of `kind` at a place, checked: it exists and, for the nodes that
 * carry the protocol, is the builtin that does. */
static bool node_at(const kb_topo *t, const char *kind, int sip, int cube, int pe, int io, const kb_comp_ops *need,
                    kb_fabric *f, uint32_t *out, const char *what, char **err)
{
    int64_t n = kb_topo_node_at(t, kind, sip, cube, pe, io);
    if (n < 0) {
        *err = kb_asprintf("%s: no %s for sip %d%s in topology %s", what, kind, sip,
                           cube >= 0 ? (pe >= 0 ? " (its cube and PE)" : " (its cube)") : "", kb_topo_name(t));
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
    bool launch = op->kind == &kb_msg_kernel_launch;
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
        if (!node_at(t, "pcie_ep", sip, -1, -1, 0, NULL, f, ep, what, err) ||
            !node_at(t, "io_cpu", sip, -1, -1, 0, &kb_io_cpu_ops, f, io, what, err) ||
            !kb_route(t, KB_VIEW_ALL, *ep, *io, err) || !kb_route(t, KB_VIEW_ALL, *io, *ep, err))
            goto fail;
        for (size_t g = op->sips[s].first_cube; g < op->sips[s].first_cube + op->sips[s].ncubes; g++) {
            if (!node_at(t, "m_cpu", sip, op->cubes[g].cube, -1, -1, &kb_m_cpu_ops, f, &m, what, err) ||
                !kb_route(t, KB_VIEW_ALL, *io, m, err) || !kb_route(t, KB_VIEW_ALL, m, *io, err))
                goto fail;
            for (size_t i = op->cube_first[g]; i < op->cube_first[g + 1]; i++)
                if (!node_at(t, launch ? "pe_cpu" : "pe_mmu", sip, op->cubes[g].cube, op->targets[i].pe, -1, NULL,
                             f, &leaf, what, err) ||
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

void kb_ctrl_pass_on(kb_comp *c, kb_ctrl_op *op, const kb_msg_kind *kind, size_t index, int64_t dst,
                     kb_txn_done_fn done)
{
    char *err = NULL;
    if (dst < 0 || !kb_ctrl_send(c->fab, op, kind, index, c->node, (uint32_t)dst, done, &err)) {
        kb_comp_fail(c, "cannot pass on %s: %s", kind->name, err ? err : "its next node is missing");
        free(err);
    }
}

/* ---- answers ---- */

void kb_ctrl_leaf_answer(kb_fabric *f, uint32_t leaf, kb_ctrl_op *op, size_t i, const kb_pe_answer *a)
{
    op->answers[i] = *a;
    const kb_ctrl_target *tg = &op->targets[i];
    kb_ctrl_pass_on(kb_fabric_comp(f, leaf), op, &kb_msg_completion, i,
                    kb_topo_cube_node(kb_fabric_topo(f), tg->sip, tg->cube, "m_cpu"), NULL);
}

void kb_ctrl_answer_host(kb_fabric *f, kb_ctrl_op *op, int sip, uint32_t io)
{
    kb_ctrl_pass_on(kb_fabric_comp(f, io), op, &kb_msg_completion, (size_t)(sip_of(op, sip) - op->sips),
                    kb_topo_io_node(kb_fabric_topo(f), sip, 0, "pcie_ep"), sip_done);
}

/* ---- the command processors' shared steps ---- */

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
void kb_ctrl_hold(kb_ctrl_op *op) { op->refs++; }

void kb_ctrl_end_transfer(kb_comp *c, kb_txn *t) { kb_ctrl_after_overhead(c, t, kb_txn_complete); }
