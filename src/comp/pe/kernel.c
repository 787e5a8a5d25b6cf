/* Kernel instances (pe.h): a kernel's run on one PE, as machine state.
 * Whoever runs the kernel's body (the Lua binding today) creates the
 * instance, issues its commands and composites through it and is woken,
 * through the instance's wake function, when the command completes or a
 * wait is satisfied; nothing here knows about Lua.
 *
 * Lifetime: reference counted. The creator holds one; a command in flight
 * holds one from its submission until its completion has been delivered;
 * a composite holds one for its own life (kb_composite_unref releases it).
 * The PE lists its instances: when it is freed with its simulation's
 * fabric, commands that will never complete drop their references and
 * the instances left are detached (kb_kernel_pe returns NULL). */
#include "comp/pe/pipe.h"

#include "core/sim.h"
#include "core/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_kernel {
    int refs;
    kb_pe *pe;                  /* NULL once detached */
    kb_kernel *prev, *next;     /* the PE's instances */
    char *name;
    char where[48];             /* "sip0.cube0.pe3" */
    uint32_t tcm;               /* the PE's TCM node (results live there) */
    uint64_t scratch_base, scratch_size;
    uint64_t vcur;              /* scratch handed out so far (virtual, never wraps) */
    bool data, pa_fallback;
    kb_kernel_wake_fn wake;
    void *wake_arg;
    kb_pe_op op;                /* the blocking command */
    bool busy;                  /* it is in flight */
    bool cmd_ref;               /* it (or its pending wake-up) holds a reference */
    size_t composites;          /* in flight */
    bool waiting, wait_all;     /* a wait for wait_for, or for every composite */
    kb_composite *wait_for;
    char *composite_error;      /* the first failed composite's, until taken */
    kb_time dma_ps, compute_ps;
    uint64_t calls;
    kb_kernel_finish_fn on_finish; /* its launcher (PE_CPU), told once */
    void *finish_arg;
    bool ended;                 /* its body has returned (kb_kernel_finish) */
    bool abandoned;             /* its body failed: it ends when nothing is in flight */
};

kb_kernel *kb_kernel_new(kb_pe *p, const char *name, uint64_t scratch_base, uint64_t scratch_size, bool data,
                         bool pa_fallback)
{
    kb_kernel *k = kb_xcalloc(1, sizeof *k);
    k->refs = 1;
    k->pe = p;
    k->name = kb_xstrdup(name ? name : "kernel");
    snprintf(k->where, sizeof k->where, "sip%d.cube%d.pe%d", p->sip, p->cube, p->pe);
    k->tcm = p->tcm;
    k->scratch_base = scratch_base;
    k->scratch_size = scratch_size;
    k->data = data;
    k->pa_fallback = pa_fallback;
    k->next = p->kernels;
    if (p->kernels)
        p->kernels->prev = k;
    p->kernels = k;
    return k;
}

void kb_kernel_ref(kb_kernel *k) { k->refs++; }

void kb_kernel_unref(kb_kernel *k)
{
    if (--k->refs > 0)
        return;
    if (k->pe) {
        if (k->prev)
            k->prev->next = k->next;
        else
            k->pe->kernels = k->next;
        if (k->next)
            k->next->prev = k->prev;
    }
    free(k->name);
    free(k->op.error);
    free(k->op.buf);
    free(k->composite_error);
    free(k);
}

void kb_kernel_detach_all(kb_pe *p)
{
    while (p->kernels) {
        kb_kernel *k = p->kernels;
        p->kernels = k->next;
        if (p->kernels)
            p->kernels->prev = NULL;
        k->prev = k->next = NULL;
        k->pe = NULL;
        k->busy = false;
        if (k->cmd_ref) { /* its events went with the simulation */
            k->cmd_ref = false;
            kb_kernel_unref(k);
        }
    }
    p->active = NULL;
}

void kb_kernel_set_wake(kb_kernel *k, kb_kernel_wake_fn fn, void *arg)
{
    k->wake = fn;
    k->wake_arg = arg;
}

void kb_kernel_on_finish(kb_kernel *k, kb_kernel_finish_fn fn, void *arg)
{
    k->on_finish = fn;
    k->finish_arg = arg;
}

static void end_instance(kb_kernel *k)
{
    kb_kernel_finish_fn fn = k->on_finish;
    k->on_finish = NULL;
    k->ended = true;
    if (fn)
        fn(k, k->finish_arg);
}

bool kb_kernel_finish(kb_kernel *k, char **err)
{
    if (k->composites || k->busy) {
        *err = kb_asprintf("kernel '%s' on %s: its body ended with %s in flight", k->name, k->where,
                           k->busy ? "a command" : "composite commands");
        return false;
    }
    end_instance(k);
    return true;
}

/* An abandoned instance ends once its last command in flight has. */
static void end_if_abandoned(kb_kernel *k)
{
    if (k->abandoned && !k->ended && !k->busy && !k->composites && k->pe)
        end_instance(k);
}

void kb_kernel_abandon(kb_kernel *k)
{
    if (k->ended || k->abandoned)
        return;
    k->abandoned = true;
    k->wake = NULL; /* nobody to resume */
    k->waiting = k->wait_all = false;
    k->wait_for = NULL;
    end_if_abandoned(k);
}

kb_pe *kb_kernel_pe(const kb_kernel *k) { return k->pe; }
bool kb_kernel_ended(const kb_kernel *k) { return k->ended; }
const char *kb_kernel_name(const kb_kernel *k) { return k ? k->name : NULL; }
const char *kb_kernel_where(const kb_kernel *k) { return k->where; }
bool kb_kernel_data(const kb_kernel *k) { return k->data; }
uint64_t kb_kernel_scratch_size(const kb_kernel *k) { return k->scratch_size; }

/* ---- scratch: a ring of results ---- */

bool kb_kernel_alloc(kb_kernel *k, const char *call, kb_dtype dt, int ndim, const int64_t *shape, kb_tview *v,
                     uint64_t *stamp, char **err)
{
    uint64_t n;
    if (!kb_shape_nbytes(ndim, shape, kb_dtype_size(dt), &n)) {
        char s[8 * 24 + 8];
        *err = kb_asprintf("%s: a result of shape %s %s is larger than any memory (more than 2^46 bytes) on %s",
                           call, kb_shape_str(ndim, shape, s, sizeof s), kb_dtype_name(dt), k->where);
        return false;
    }
    kb_tview_init(v, k->tcm, 0, dt, ndim, shape);
    n = (n + 15) & ~(uint64_t)15;
    if (n == 0)
        n = 16;
    if (n > k->scratch_size) {
        *err = kb_asprintf("%s: scratch overflow on %s: the result needs %llu bytes, the kernel's scratch is %llu "
                           "bytes (pe_cpu.attrs.scratch_kb)",
                           call, k->where, (unsigned long long)n, (unsigned long long)k->scratch_size);
        return false;
    }
    uint64_t phys = k->vcur % k->scratch_size;
    if (phys + n > k->scratch_size) /* no straddling: skip to the start */
        k->vcur += k->scratch_size - phys;
    *stamp = k->vcur;
    v->offset = k->scratch_base + k->vcur % k->scratch_size;
    k->vcur += n;
    return true;
}

bool kb_kernel_live(const kb_kernel *k, uint64_t stamp) { return k->vcur - stamp <= k->scratch_size; }

void kb_kernel_fill(kb_kernel *k, const kb_tview *v, double first, double step)
{
    if (!k->data || !k->pe)
        return;
    int64_t n = kb_tview_numel(v);
    double *x = kb_xmalloc((size_t)(n ? n : 1) * sizeof *x);
    for (int64_t i = 0; i < n; i++)
        x[i] = step == 0 ? first : first + (double)i * step; /* a constant keeps its sign of zero */
    kb_tview_write(kb_fabric_memstore(k->pe->fab), v, x);
    free(x);
}

/* ---- the blocking command ---- */

static void deliver(kb_kernel *k)
{
    k->cmd_ref = false;
    if (k->wake)
        k->wake(k, k->wake_arg);
    end_if_abandoned(k);
    kb_kernel_unref(k);
}

static void deliver_event(kb_sim *sim, void *arg)
{
    (void)sim;
    deliver(arg);
}

/* From an event callback the body resumes at once (as any woken process
 * would); from within the submitting call it is woken by an event now, so
 * that kb_kernel_submit never calls back into its caller. */
static void op_done(kb_pe_op *op)
{
    kb_kernel *k = op->arg;
    k->busy = false;
    k->dma_ps += op->dma_ps;
    k->compute_ps += op->compute_ps;
    if (op->submitting) {
        kb_sim *sim = kb_fabric_sim(op->pe->fab);
        kb_sim_at(sim, kb_sim_now(sim), KB_PRIO_NORMAL, deliver_event, k);
        return;
    }
    deliver(k);
}

kb_pe_op *kb_kernel_command(kb_kernel *k, const char *call, char **err)
{
    if (!k->pe) {
        *err = kb_asprintf("%s: kernel '%s' on %s: its simulation is closed", call, k->name, k->where);
        return NULL;
    }
    if (k->busy) {
        *err = kb_pe_error(k->pe, call, k->name, kb_xstrdup("the kernel already has a command in flight"));
        return NULL;
    }
    free(k->op.error);
    memset(&k->op, 0, sizeof k->op);
    k->op.what = call;
    k->op.pe = k->pe; /* the rules that depend on the PE read it (kb_pe_op_cycles) */
    return &k->op;
}

void kb_kernel_submit(kb_kernel *k)
{
    kb_pe_op *op = &k->op;
    op->pe = k->pe;
    op->data = k->data;
    op->pa_fallback = k->pa_fallback;
    op->kernel = k->name;
    op->done = op_done;
    op->arg = k;
    k->calls++;
    k->busy = true;
    k->cmd_ref = true;
    k->refs++;
    kb_pe_submit(op);
}

char *kb_kernel_take_error(kb_kernel *k)
{
    char *e = k->op.error;
    k->op.error = NULL;
    return e;
}

/* ---- composites ---- */

static void composite_done(kb_composite *c)
{
    kb_kernel *k = c->arg;
    k->composites--;
    k->dma_ps += c->stage_ps[KB_ST_DMA_READ] + c->stage_ps[KB_ST_DMA_WRITE];
    k->compute_ps += c->stage_ps[KB_ST_GEMM] + c->stage_ps[KB_ST_MATH];
    if (c->error && !k->composite_error)
        k->composite_error = kb_xstrdup(c->error);
    end_if_abandoned(k);
    if (!k->waiting || (k->wait_for != c && !(k->wait_all && k->composites == 0)))
        return;
    k->waiting = k->wait_all = false;
    k->wait_for = NULL;
    if (k->wake) /* from the completing event: the body resumes at once */
        k->wake(k, k->wake_arg);
}

/* Composite c, issued by c->kernel, is being freed. */
static void release_composite(kb_composite *c)
{
    kb_kernel *k = c->kernel;
    c->kernel = NULL;
    c->kernel_name = NULL;
    c->release = NULL;
    if (!c->finished) { /* dropped with its pipeline */
        k->composites--;
        if (k->wait_for == c)
            k->waiting = false, k->wait_for = NULL;
        end_if_abandoned(k);
    }
    kb_kernel_unref(k);
}

bool kb_kernel_composite(kb_kernel *k, kb_composite *c, char **err)
{
    kb_pe *p = k->pe;
    if (!p) {
        *err = kb_asprintf("tl.composite: kernel '%s' on %s: its simulation is closed", k->name, k->where);
        return false;
    }
    c->data = k->data;
    c->pa_fallback = k->pa_fallback;
    c->ready_at = kb_pe_dispatched_at(p, kb_sim_now(kb_fabric_sim(p->fab)));
    c->done = composite_done;
    c->arg = k;
    c->kernel = k;
    c->kernel_name = k->name; /* named in its errors */
    c->release = release_composite;
    if (!kb_composite_submit(p, c, err)) {
        c->kernel = NULL;
        c->kernel_name = NULL;
        c->release = NULL;
        return false;
    }
    k->refs++;
    k->composites++;
    return true;
}

bool kb_kernel_done(const kb_kernel *k, const kb_composite *c)
{
    return c ? c->finished : k->composites == 0;
}

bool kb_kernel_wait(kb_kernel *k, kb_composite *c)
{
    if (kb_kernel_done(k, c))
        return true;
    k->waiting = true;
    k->wait_for = c;
    k->wait_all = c == NULL;
    return false;
}

char *kb_kernel_take_composite_error(kb_kernel *k)
{
    char *e = k->composite_error;
    k->composite_error = NULL;
    return e;
}

void kb_kernel_stats_of(const kb_kernel *k, kb_kernel_stats *out)
{
    out->dma_ps = k->dma_ps;
    out->compute_ps = k->compute_ps;
    out->calls = k->calls;
    out->scratch_bytes = k->vcur < k->scratch_size ? k->vcur : k->scratch_size;
    out->composites = k->composites;
}
