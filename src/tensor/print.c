/* Printing of host tensors (kb_tensor_format): torch's repr with its
 * default print options, into a growing string buffer.
 * Elements are formatted as torch's _Formatter does: floats whose nonzero
 * finite values are all integral print as "1." (int mode); scientific
 * "%.4e" when max/min of the nonzero finite magnitudes exceeds 1000, the
 * maximum exceeds 1e8 or (outside int mode) the minimum is below 1e-4;
 * else "%.4f"; every element right-aligned to the widest. Above 1000
 * elements each dimension longer than 6 shows its first and last 3 entries
 * around "...", and the width is taken over the shown elements only. */
#include "tensor/tensor_internal.h"

#include "core/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* torch's default print options. */
#define PRINT_THRESHOLD 1000
#define PRINT_EDGE 3
#define PRINT_LINEWIDTH 80

typedef struct pfmt {
    const kb_tensor *t;
    int64_t st[MAXD];
    bool floating, int_mode, sci, summarize;
    int width;
    /* statistics over the shown nonzero finite values */
    int64_t count;
    double minabs, maxabs;
} pfmt;

static int fmt_plain(const pfmt *f, double v, char *buf, size_t cap)
{
    if (!f->floating) {
        if (f->t->dtype == KB_BOOL)
            return snprintf(buf, cap, "%s", v != 0 ? "True" : "False");
        return snprintf(buf, cap, "%lld", (long long)v);
    }
    if (isnan(v))
        return snprintf(buf, cap, "nan");
    if (isinf(v))
        return snprintf(buf, cap, "%s", v > 0 ? "inf" : "-inf");
    if (f->sci)
        return snprintf(buf, cap, "%.4e", v);
    if (f->int_mode)
        return snprintf(buf, cap, "%.0f.", v);
    return snprintf(buf, cap, "%.4f", v);
}

/* Pass 0 gathers the statistics of the shown elements, pass 1 their width. */
static void visit(pfmt *f, int dim, int64_t off, int pass)
{
    const kb_tensor *t = f->t;
    if (dim == t->ndim) {
        double v = kb_tensor_get(t, off);
        char buf[64];
        if (!f->floating) {
            int n = fmt_plain(f, v, buf, sizeof buf);
            if (n > f->width)
                f->width = n;
        } else if (isfinite(v) && v != 0) {
            if (pass == 0) {
                double a = fabs(v);
                f->count++;
                f->minabs = a < f->minabs ? a : f->minabs;
                f->maxabs = a > f->maxabs ? a : f->maxabs;
                if (v != ceil(v))
                    f->int_mode = false;
            } else {
                int n = fmt_plain(f, v, buf, sizeof buf);
                if (n > f->width)
                    f->width = n;
            }
        }
        return;
    }
    int64_t n = t->shape[dim];
    for (int64_t i = 0; i < n; i++) {
        if (f->summarize && n > 2 * PRINT_EDGE && i == PRINT_EDGE)
            i = n - PRINT_EDGE;
        visit(f, dim + 1, off + i * f->st[dim], pass);
    }
}

static void add_spaces(kb_buf *b, int n)
{
    if (n > 0)
        kb_buf_printf(b, "%*s", n, "");
}

static void add_elem(kb_buf *b, const pfmt *f, double v)
{
    char buf[64];
    int n = fmt_plain(f, v, buf, sizeof buf);
    add_spaces(b, f->width - n);
    kb_buf_printf(b, "%s", buf);
}

static void print_rec(kb_buf *b, const pfmt *f, int dim, int64_t off, int indent)
{
    const kb_tensor *t = f->t;
    int left = t->ndim - dim;
    if (left == 0) {
        add_elem(b, f, kb_tensor_get(t, off));
        return;
    }
    int64_t n = t->shape[dim];
    bool cut = f->summarize && n > 2 * PRINT_EDGE;
    kb_buf_printf(b, "[");
    if (left == 1) {
        int per_line = (PRINT_LINEWIDTH - indent) / (f->width + 2);
        if (per_line < 1)
            per_line = 1;
        int64_t item = 0;
        for (int64_t i = 0; i < n; i++, item++) {
            if (item > 0) {
                if (item % per_line == 0) {
                    kb_buf_printf(b, ",\n");
                    add_spaces(b, indent + 1);
                } else {
                    kb_buf_printf(b, ", ");
                }
            }
            if (cut && i == PRINT_EDGE) {
                kb_buf_printf(b, " ...");
                i = n - PRINT_EDGE - 1;
                continue;
            }
            add_elem(b, f, kb_tensor_get(t, off + i * f->st[dim]));
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            if (i > 0) {
                kb_buf_printf(b, ",%.*s", left - 1, "\n\n\n\n\n\n\n\n");
                add_spaces(b, indent + 1);
            }
            if (cut && i == PRINT_EDGE) {
                kb_buf_printf(b, "...");
                i = n - PRINT_EDGE - 1;
                continue;
            }
            print_rec(b, f, dim + 1, off + i * f->st[dim], indent + 1);
        }
    }
    kb_buf_printf(b, "]");
}

/* The length torch's _add_suffixes starts from: len(s) - s.rfind("\n") + 1. */
static size_t last_line_len(const kb_buf *b)
{
    size_t len = b->len, nl = len;
    while (nl > 0 && b->data[nl - 1] != '\n')
        nl--;
    return nl > 0 ? len - (nl - 1) + 1 : len + 2;
}

char *kb_tensor_format(const kb_tensor *t)
{
    char suffix[2][128];
    int nsuffix = 0;
    kb_buf b = {0};
    kb_buf_printf(&b, "tensor(");
    if (t->numel == 0) {
        kb_buf_printf(&b, "[]");
        if (t->ndim != 1) {
            size_t p = (size_t)snprintf(suffix[nsuffix], sizeof suffix[0], "size=(");
            for (int d = 0; d < t->ndim && p < sizeof suffix[0]; d++)
                p += (size_t)snprintf(suffix[nsuffix] + p, sizeof suffix[0] - p, d ? ", %" PRId64 : "%" PRId64,
                                      t->shape[d]);
            if (p < sizeof suffix[0])
                snprintf(suffix[nsuffix] + p, sizeof suffix[0] - p, ")");
            nsuffix++;
        }
        if (t->dtype != KB_F32)
            snprintf(suffix[nsuffix++], sizeof suffix[0], "dtype=torch.%s", kb_dtype_torch_name(t->dtype));
    } else {
        if (t->dtype != KB_F32 && t->dtype != KB_BOOL) /* torch omits its default dtypes */
            snprintf(suffix[nsuffix++], sizeof suffix[0], "dtype=torch.%s", kb_dtype_torch_name(t->dtype));
        pfmt f = {.t = t, .floating = kb_dtype_is_float(t->dtype), .int_mode = true, .width = 1,
                  .summarize = t->numel > PRINT_THRESHOLD, .minabs = INFINITY, .maxabs = 0};
        kb_tensor_strides(t, f.st);
        visit(&f, 0, 0, 0);
        if (f.floating && f.count > 0) {
            bool wide = f.maxabs / f.minabs > 1000.0 || f.maxabs > 1.0e8;
            f.sci = f.int_mode ? wide : wide || f.minabs < 1.0e-4;
            visit(&f, 0, 0, 1);
        }
        print_rec(&b, &f, 0, 0, 7);
    }
    size_t last = last_line_len(&b);
    for (int i = 0; i < nsuffix; i++) { /* ", suffix", or a new line when it would pass the width */
        size_t n = strlen(suffix[i]);
        if (last + n + 2 > PRINT_LINEWIDTH) {
            kb_buf_printf(&b, ",\n");
            add_spaces(&b, 7);
            last = 7 + n;
        } else {
            kb_buf_printf(&b, ", ");
            last += n + 2;
        }
        kb_buf_printf(&b, "%s", suffix[i]);
    }
    kb_buf_printf(&b, ")");
    return kb_buf_take(&b);
}
