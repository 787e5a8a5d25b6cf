/* Streaming the op log (oplog.h): an external merge sort.
 *
 * Records arrive when their operation ends but are written in t_start
 * order, and an operation may end long after later ones started, so no
 * record can be written before the simulation closes. Each record is
 * formatted at once into an in-memory chunk; a full chunk is sorted by
 * (t_start, seq) and appended to an unlinked spill file as a run; at the
 * end the runs and the last chunk are merged into the output. (t_start,
 * seq) is a total order, so the output is the same bytes as sorting every
 * record in memory. At most MAX_RUNS runs are kept: the next one first
 * merges them into a single run in a new spill file, so open files and
 * merge buffers stay bounded however long the run. */
#include "trace/oplog.h"

#include "core/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_RUNS = 64, IO_BUF = 1 << 16, HDR = 20 /* t_start, seq, length */ };
#define DEFAULT_CHUNK ((size_t)4 << 20)

typedef struct ix {
    kb_time t;
    uint64_t seq;
    size_t off;
    uint32_t len;
} ix;

typedef struct run {
    off_t off;
    uint64_t n;
} run;

struct kb_opstream {
    FILE *out;
    char *dir;
    int sim;
    size_t budget;
    FILE *mem; /* the chunk's text (open_memstream) */
    char *membuf;
    size_t memlen;
    ix *ix;
    size_t nix, capix;
    int fd; /* spill file, -1 until the first run */
    off_t end;
    run runs[MAX_RUNS];
    size_t nruns;
    char *error; /* the first I/O error; records are dropped after it */
};

static void set_error(kb_opstream *s, const char *what, int e)
{
    if (!s->error)
        s->error = kb_asprintf("op log spill file in %s: %s: %s", s->dir, what, strerror(e));
}

kb_opstream *kb_opstream_new(FILE *out, const char *spill_dir, int sim, size_t chunk_bytes)
{
    kb_opstream *s = kb_xcalloc(1, sizeof *s);
    s->out = out;
    s->dir = kb_xstrdup(spill_dir && *spill_dir ? spill_dir : ".");
    s->sim = sim;
    s->budget = chunk_bytes ? chunk_bytes : DEFAULT_CHUNK;
    s->fd = -1;
    return s;
}

static int by_key(const void *a, const void *b)
{
    const ix *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- spill files ---- */

/* A new spill file, unlinked at once: nothing is left behind, even by a
 * killed run. -1 with the error recorded. */
static int new_spill(kb_opstream *s)
{
    char *name = kb_asprintf("%s/.kernbench-oplog-spill.XXXXXX", s->dir);
    int fd = mkstemp(name);
    if (fd < 0)
        set_error(s, "cannot create", errno);
    else
        unlink(name);
    free(name);
    return fd;
}

/* Buffered appends to a file descriptor. */
typedef struct writer {
    int fd;
    off_t pos;
    char buf[IO_BUF];
    size_t n;
    kb_opstream *s;
} writer;

static void w_flush(writer *w)
{
    size_t done = 0;
    while (done < w->n && !w->s->error) {
        ssize_t k = pwrite(w->fd, w->buf + done, w->n - done, w->pos);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            set_error(w->s, "write failed", k < 0 ? errno : EIO);
            break;
        }
        done += (size_t)k;
        w->pos += k;
    }
    w->n = 0;
}

static void w_put(writer *w, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        if (w->n == IO_BUF)
            w_flush(w);
        size_t k = IO_BUF - w->n < n ? IO_BUF - w->n : n;
        memcpy(w->buf + w->n, c, k);
        w->n += k;
        c += k;
        n -= k;
    }
}

static void w_record(writer *w, kb_time t, uint64_t seq, const char *text, uint32_t len)
{
    char h[HDR];
    int64_t ti = t;
    memcpy(h, &ti, 8);
    memcpy(h + 8, &seq, 8);
    memcpy(h + 16, &len, 4);
    w_put(w, h, HDR);
    w_put(w, text, len);
}

/* ---- merge sources: a run in a spill file, or the sorted chunk ---- */

typedef struct source {
    kb_time t;
    uint64_t seq;
    uint32_t len;
    const char *text;
    /* a run */
    int fd;
    off_t pos;
    uint64_t left;
    char *buf;
    size_t cap, lo, hi;
    /* the chunk */
    const ix *ix;
    size_t i, n;
    const char *mem;
} source;

/* Makes `need` bytes available at buf[lo]; false at a read error. */
static bool fill(kb_opstream *s, source *r, size_t need)
{
    if (r->hi - r->lo >= need)
        return true;
    memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
    r->hi -= r->lo;
    r->lo = 0;
    if (need > r->cap) {
        r->cap = need;
        r->buf = kb_xrealloc(r->buf, r->cap);
    }
    while (r->hi < need) {
        ssize_t k = pread(r->fd, r->buf + r->hi, r->cap - r->hi, r->pos);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            set_error(s, "read failed", k < 0 ? errno : EIO);
            return false;
        }
        r->hi += (size_t)k;
        r->pos += k;
    }
    return true;
}

/* Loads the source's next record; false when it has none left. */
static bool next(kb_opstream *s, source *r)
{
    if (r->ix) {
        if (r->i == r->n)
            return false;
        const ix *x = &r->ix[r->i++];
        r->t = x->t;
        r->seq = x->seq;
        r->len = x->len;
        r->text = r->mem + x->off;
        return true;
    }
    if (r->left == 0 || !fill(s, r, HDR))
        return false;
    int64_t t;
    memcpy(&t, r->buf + r->lo, 8);
    memcpy(&r->seq, r->buf + r->lo + 8, 8);
    memcpy(&r->len, r->buf + r->lo + 16, 4);
    r->t = t;
    r->lo += HDR;
    if (!fill(s, r, r->len))
        return false;
    r->text = r->buf + r->lo;
    r->lo += r->len;
    r->left--;
    return true;
}

static bool before(const source *a, const source *b)
{
    return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void sift_down(source **h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && before(h[l], h[m]))
            m = l;
        if (l + 1 < n && before(h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        source *tmp = h[i];
        h[i] = h[m];
        h[m] = tmp;
        i = m;
    }
}

/* Merges the runs (and the sorted chunk, if `chunk`) into `to` (a new
 * run) or, when to is NULL, into the output as text. */
static uint64_t merge(kb_opstream *s, bool chunk, writer *to)
{
    size_t nsrc = s->nruns + (chunk ? 1 : 0);
    source *src = kb_xcalloc(nsrc ? nsrc : 1, sizeof *src);
    source **heap = kb_xcalloc(nsrc ? nsrc : 1, sizeof *heap);
    size_t n = 0;
    for (size_t i = 0; i < s->nruns; i++) {
        src[i] = (source){.fd = s->fd, .pos = s->runs[i].off, .left = s->runs[i].n, .cap = IO_BUF};
        src[i].buf = kb_xmalloc(IO_BUF);
    }
    if (chunk)
        src[s->nruns] = (source){.ix = s->ix, .n = s->nix, .mem = s->membuf};
    for (size_t i = 0; i < nsrc; i++)
        if (next(s, &src[i]))
            heap[n++] = &src[i];
    for (size_t i = n; i-- > 0;)
        sift_down(heap, n, i);
    uint64_t written = 0;
    while (n > 0 && !s->error) {
        source *r = heap[0];
        if (to)
            w_record(to, r->t, r->seq, r->text, r->len);
        else
            fwrite(r->text, 1, r->len, s->out);
        written++;
        if (!next(s, r))
            heap[0] = heap[--n];
        sift_down(heap, n, 0);
    }
    for (size_t i = 0; i < nsrc; i++)
        free(src[i].buf);
    free(src);
    free(heap);
    return written;
}

/* MAX_RUNS runs: merge them into one run in a new spill file. */
static void compact(kb_opstream *s)
{
    int fd = new_spill(s);
    if (fd < 0)
        return;
    writer *w = kb_xmalloc(sizeof *w);
    *w = (writer){.fd = fd, .s = s};
    uint64_t n = merge(s, false, w);
    w_flush(w);
    close(s->fd);
    s->fd = fd;
    s->end = w->pos;
    s->runs[0] = (run){0, n};
    s->nruns = 1;
    free(w);
}

static void drop_chunk(kb_opstream *s)
{
    if (s->mem)
        fclose(s->mem);
    free(s->membuf);
    s->mem = NULL;
    s->membuf = NULL;
    s->memlen = 0;
    s->nix = 0;
}

/* Writes the full chunk as a sorted run. */
static void spill(kb_opstream *s)
{
    fflush(s->mem);
    qsort(s->ix, s->nix, sizeof *s->ix, by_key);
    if (s->nruns == MAX_RUNS)
        compact(s);
    if (s->fd < 0 && !s->error)
        s->fd = new_spill(s);
    if (!s->error) {
        writer *w = kb_xmalloc(sizeof *w);
        *w = (writer){.fd = s->fd, .pos = s->end, .s = s};
        for (size_t i = 0; i < s->nix; i++)
            w_record(w, s->ix[i].t, s->ix[i].seq, s->membuf + s->ix[i].off, s->ix[i].len);
        w_flush(w);
        s->runs[s->nruns++] = (run){s->end, s->nix};
        s->end = w->pos;
        free(w);
    }
    drop_chunk(s);
}

void kb_opstream_add(kb_opstream *s, const kb_oprec *r)
{
    if (s->error)
        return;
    if (!s->mem && !(s->mem = open_memstream(&s->membuf, &s->memlen))) {
        set_error(s, "out of memory", errno);
        return;
    }
    off_t off = ftello(s->mem);
    kb_oplog_write_record(s->mem, s->sim, r);
    off_t end = ftello(s->mem);
    if (s->nix == s->capix) {
        s->capix = s->capix ? 2 * s->capix : 1024;
        s->ix = kb_xrealloc(s->ix, s->capix * sizeof *s->ix);
    }
    s->ix[s->nix++] = (ix){r->t_start, r->seq, (size_t)off, (uint32_t)(end - off)};
    if ((size_t)end >= s->budget)
        spill(s);
}

void kb_opstream_free(kb_opstream *s)
{
    if (!s)
        return;
    drop_chunk(s);
    if (s->fd >= 0)
        close(s->fd);
    free(s->ix);
    free(s->dir);
    free(s->error);
    free(s);
}

bool kb_opstream_finish(kb_opstream *s, char **err)
{
    if (s->mem) {
        fflush(s->mem);
        qsort(s->ix, s->nix, sizeof *s->ix, by_key);
    }
    if (!s->error)
        merge(s, s->mem != NULL, NULL);
    bool ok = !s->error;
    if (!ok)
        *err = kb_xstrdup(s->error);
    kb_opstream_free(s);
    return ok;
}
