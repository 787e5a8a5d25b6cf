/* IPCQ install plans (ipcq.h): made by the runtime, checked here against
 * the topology before they are sent, applied by each PE_IPCQ (ipcq.c). */
#include "comp/pe/ipcq.h"

#include "comp/entry.h"
#include "core/util.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[] = {"tcm", "sram", "hbm"};

const char *kb_ipcq_kind_name(kb_ipcq_kind k) { return kind_names[k]; }

bool kb_ipcq_kind_find(const char *name, kb_ipcq_kind *out)
{
    for (int i = 0; i < 3; i++)
        if (strcmp(name, kind_names[i]) == 0) {
            *out = (kb_ipcq_kind)i;
            return true;
        }
    return false;
}

kb_ipcq_plan *kb_ipcq_plan_new(uint32_t npes)
{
    kb_ipcq_plan *p = kb_xcalloc(1, sizeof *p);
    p->refs = 1;
    p->npes = npes;
    p->pes = kb_xcalloc(npes ? npes : 1, sizeof *p->pes);
    return p;
}

void kb_ipcq_plan_unref(kb_ipcq_plan *p)
{
    if (!p || --p->refs > 0)
        return;
    free(p->pes);
    free(p);
}

/* One receive ring, for the disjointness check. */
typedef struct ring {
    uint64_t lo, hi; /* [lo, hi) physical addresses */
    uint32_t rank;
    int dir;
} ring;

static int cmp_ring(const void *a, const void *b)
{
    const ring *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return (x->hi > y->hi) - (x->hi < y->hi);
}

typedef struct coord {
    int sip, cube, pe;
    uint32_t rank;
} coord;

static int cmp_coord(const void *a, const void *b)
{
    const coord *x = a, *y = b;
    if (x->sip != y->sip)
        return x->sip < y->sip ? -1 : 1;
    if (x->cube != y->cube)
        return x->cube < y->cube ? -1 : 1;
    return (x->pe > y->pe) - (x->pe < y->pe);
}

/* Whether ring [pa, pa + bytes) of a buffer of kind k lies where rank's PE
 * keeps such rings: its IPCQ window (tcm), its cube's SRAM, its HBM slice. */
static bool ring_place(const kb_topo *t, const kb_ipcq_plan *p, const kb_ipcq_pe_cfg *pe, const char *dir,
                       uint64_t pa, uint64_t bytes, char **err)
{
    kb_target tg;
    char *why = NULL;
    const char *want = p->kind == KB_IPCQ_TCM    ? "the PE's IPCQ window (PE_LOCAL sub-unit IPCQ)"
                       : p->kind == KB_IPCQ_SRAM ? "the PE's cube SRAM"
                                                 : "the PE's HBM slice";
    if (!kb_resolve_pa(t, pa, &tg, &why)) {
        *err = kb_asprintf("sip%d.cube%d.pe%d direction %s: ring at 0x%llx: %s", pe->sip, pe->cube, pe->pe, dir,
                           (unsigned long long)pa, why);
        free(why);
        return false;
    }
    const kb_node *n = kb_topo_node(t, tg.node);
    bool ok = (int)tg.f.sip == pe->sip && (int)tg.f.die == pe->cube;
    uint64_t end = 0;
    switch (p->kind) {
    case KB_IPCQ_TCM:
        ok = ok && tg.f.kind == KB_PA_PE_LOCAL && tg.f.sub_unit == KB_PE_SU_IPCQ && (int)tg.f.pe == pe->pe;
        end = kb_pe_ipcq_window(t, pe->sip, pe->cube, pe->pe);
        break;
    case KB_IPCQ_SRAM:
        ok = ok && tg.f.kind == KB_PA_CUBE_SRAM;
        end = KB_PA_CUBE_SRAM_BYTES;
        break;
    case KB_IPCQ_HBM:
        ok = ok && tg.f.kind == KB_PA_HBM && n->pe == pe->pe;
        end = tg.offset + (tg.pa_hi - pa); /* the slice's end, as an offset */
        break;
    }
    if (!ok) {
        *err = kb_asprintf("sip%d.cube%d.pe%d direction %s: a %s ring must lie in %s; 0x%llx is %s",
                           pe->sip, pe->cube, pe->pe, dir, kb_ipcq_kind_name(p->kind), want,
                           (unsigned long long)pa, n->id);
        return false;
    }
    if (tg.offset + bytes > end) {
        *err = kb_asprintf("sip%d.cube%d.pe%d direction %s: the %s ring of %llu bytes (n_slots x slot_size) at "
                           "0x%llx runs past the end of %s",
                           pe->sip, pe->cube, pe->pe, dir, kb_ipcq_kind_name(p->kind), (unsigned long long)bytes,
                           (unsigned long long)pa, want);
        return false;
    }
    return true;
}

bool kb_ipcq_plan_check(const kb_topo *t, const kb_ipcq_plan *p, char **err)
{
    if (p->npes == 0) {
        *err = kb_xstrdup("the plan has no PEs");
        return false;
    }
    if (p->n_slots == 0 || p->n_slots > KB_IPCQ_MAX_SLOTS || p->slot_size == 0 || p->slot_size % 16 != 0) {
        *err = kb_asprintf("n_slots (%u) must be 1 to %d and slot_size (%llu) a positive multiple of 16 bytes",
                           p->n_slots, KB_IPCQ_MAX_SLOTS, (unsigned long long)p->slot_size);
        return false;
    }
    uint64_t bytes = (uint64_t)p->n_slots * p->slot_size;
    coord *co = kb_xmalloc(p->npes * sizeof *co);
    size_t nrings = 0;
    for (uint32_t r = 0; r < p->npes; r++) {
        const kb_ipcq_pe_cfg *pe = &p->pes[r];
        co[r] = (coord){pe->sip, pe->cube, pe->pe, r};
        nrings += (size_t)pe->ndirs;
    }
    qsort(co, p->npes, sizeof *co, cmp_coord);
    bool ok = true;
    for (uint32_t i = 0; ok && i < p->npes; i++) {
        const kb_ipcq_pe_cfg *pe = &p->pes[co[i].rank];
        if (kb_topo_pe_node(t, pe->sip, pe->cube, pe->pe, "pe_ipcq") < 0) {
            *err = kb_asprintf("rank %u: no PE sip%d.cube%d.pe%d in topology %s", co[i].rank, pe->sip, pe->cube,
                               pe->pe, kb_topo_name(t));
            ok = false;
        } else if (i > 0 && cmp_coord(&co[i - 1], &co[i]) == 0) {
            *err = kb_asprintf("ranks %u and %u are both sip%d.cube%d.pe%d", co[i - 1].rank, co[i].rank, pe->sip,
                               pe->cube, pe->pe);
            ok = false;
        }
    }
    free(co);
    ring *rings = kb_xmalloc((nrings ? nrings : 1) * sizeof *rings);
    size_t k = 0;
    for (uint32_t r = 0; ok && r < p->npes; r++) {
        const kb_ipcq_pe_cfg *pe = &p->pes[r];
        if (pe->ndirs < 0 || pe->ndirs > KB_IPCQ_MAX_DIRS) {
            *err = kb_asprintf("rank %u has %d directions (at most %d)", r, pe->ndirs, KB_IPCQ_MAX_DIRS);
            ok = false;
            break;
        }
        for (int d = 0; ok && d < pe->ndirs; d++) {
            const kb_ipcq_dir_cfg *dc = &pe->dir[d];
            for (int e = 0; e < d && ok; e++) {
                if (strcmp(pe->dir[e].name, dc->name) == 0) {
                    *err = kb_asprintf("rank %u: direction %s is listed twice", r, dc->name);
                    ok = false;
                } else if (pe->dir[e].peer == dc->peer && pe->dir[e].peer_dir == dc->peer_dir) {
                    *err = kb_asprintf("rank %u: directions %s and %s both pair with rank %u's direction %u "
                                       "(each direction needs its own slot at the peer, invariant I3)",
                                       r, pe->dir[e].name, dc->name, dc->peer, dc->peer_dir);
                    ok = false;
                }
            }
            if (!ok)
                break;
            if (dc->name[0] == 0 || dc->peer >= p->npes || dc->peer == r ||
                (int)dc->peer_dir >= p->pes[dc->peer].ndirs) {
                *err = kb_asprintf("rank %u direction '%s': peer rank %u direction %u does not exist (world %u)", r,
                                   dc->name, dc->peer, dc->peer_dir, p->npes);
                ok = false;
                break;
            }
            const kb_ipcq_dir_cfg *back = &p->pes[dc->peer].dir[dc->peer_dir];
            if (back->peer != r || back->peer_dir != (uint32_t)d) {
                *err = kb_asprintf("rank %u direction %s pairs with rank %u direction %s, which pairs with rank %u "
                                   "direction %u instead: a pairing must be mutual",
                                   r, dc->name, dc->peer, back->name, back->peer, back->peer_dir);
                ok = false;
                break;
            }
            if (!ring_place(t, p, pe, dc->name, dc->rx_pa, bytes, err)) {
                ok = false;
                break;
            }
            rings[k++] = (ring){dc->rx_pa, dc->rx_pa + bytes, r, d};
        }
    }
    if (ok) {
        qsort(rings, k, sizeof *rings, cmp_ring);
        for (size_t i = 1; i < k; i++)
            if (rings[i].lo < rings[i - 1].hi) {
                const ring *a = &rings[i - 1], *b = &rings[i];
                *err = kb_asprintf("the receive rings of rank %u direction %s [0x%llx, 0x%llx) and rank %u "
                                   "direction %s [0x%llx, 0x%llx) overlap (invariant I3.1)",
                                   a->rank, p->pes[a->rank].dir[a->dir].name, (unsigned long long)a->lo,
                                   (unsigned long long)a->hi, b->rank, p->pes[b->rank].dir[b->dir].name,
                                   (unsigned long long)b->lo, (unsigned long long)b->hi);
                ok = false;
                break;
            }
    }
    free(rings);
    return ok;
}
