/* The named allocators of memory-addressing.md §4.3-4.4 over the one
 * first-fit mechanism: an HBM slice, a TCM minus its scheduler-reserved
 * region, and the page-granular VA space. They only choose the range and
 * the granule; parameters come from the caller (the topology). */
#include "mem/alloc.h"

#include "core/util.h"

#include <inttypes.h>
#include <stdlib.h>

/* kb_alloc_check_range's message, prefixed with the allocator's name. */
static bool init_checked(kb_alloc *a, const char *what, uint64_t base, uint64_t size, uint64_t granule,
                         char **err)
{
    char *why = NULL;
    if (!kb_alloc_check_range(base, size, granule, &why)) {
        *err = kb_asprintf("%s allocator: %s", what, why);
        free(why);
        return false;
    }
    kb_alloc_init(a, base, size, granule);
    return true;
}

static bool check_align(const char *what, const char *name, uint64_t v, char **err)
{
    if (v == 0 || (v & (v - 1))) {
        *err = kb_asprintf("%s allocator: %s %" PRIu64 " is not a power of two", what, name, v);
        return false;
    }
    return true;
}

bool kb_alloc_init_hbm_slice(kb_alloc *a, const kb_hbm_slice_params *p, char **err)
{
    if (!check_align("HBM slice", "align", p->align, err))
        return false;
    return init_checked(a, "HBM slice", 0, p->slice_bytes, p->align, err);
}

void kb_tcm_reserved_region(const kb_tcm_params *p, uint64_t *start, uint64_t *size)
{
    uint64_t r = p->reserved_bytes <= p->tcm_bytes ? p->reserved_bytes : p->tcm_bytes;
    *start = p->reserved_at == KB_TCM_RESERVED_AT_START ? 0 : p->tcm_bytes - r;
    *size = r;
}

bool kb_alloc_init_tcm(kb_alloc *a, const kb_tcm_params *p, char **err)
{
    if (!check_align("TCM", "align", p->align, err))
        return false;
    if (p->reserved_at != KB_TCM_RESERVED_AT_START && p->reserved_at != KB_TCM_RESERVED_AT_END) {
        *err = kb_asprintf("TCM allocator: reserved_at %d is neither start nor end", (int)p->reserved_at);
        return false;
    }
    if (p->reserved_bytes > p->tcm_bytes) {
        *err = kb_asprintf("TCM allocator: %" PRIu64 " bytes reserved for the scheduler but the TCM holds "
                           "only %" PRIu64, p->reserved_bytes, p->tcm_bytes);
        return false;
    }
    /* The allocatable part is the complement of the reserved region. */
    uint64_t base = p->reserved_at == KB_TCM_RESERVED_AT_START ? p->reserved_bytes : 0;
    return init_checked(a, "TCM", base, p->tcm_bytes - p->reserved_bytes, p->align, err);
}

bool kb_alloc_init_va(kb_alloc *a, const kb_va_params *p, char **err)
{
    if (!check_align("VA", "page_size", p->page_size, err))
        return false;
    return init_checked(a, "VA", p->base, p->size, p->page_size, err);
}
