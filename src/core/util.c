#include "core/util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void out_of_memory(size_t n)
{
    fprintf(stderr, "kernbench: out of memory (allocating %zu bytes)\n", n);
    abort();
}

void *kb_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        out_of_memory(n);
    return p;
}

void *kb_xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        out_of_memory(count * size);
    return p;
}

void *kb_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        out_of_memory(n);
    return q;
}

char *kb_xstrdup(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = kb_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

char *kb_vasprintf(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *s = kb_xmalloc((size_t)n + 1);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

char *kb_asprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = kb_vasprintf(fmt, ap);
    va_end(ap);
    return s;
}

void kb_buf_printf(kb_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n <= 0)
        return;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + (size_t)n + 1)
            cap *= 2;
        b->data = kb_xrealloc(b->data, cap);
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

char *kb_buf_take(kb_buf *b)
{
    char *s = b->data ? b->data : kb_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return s;
}

double kb_wall_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

char *kb_time_format(int64_t ps, char *buf)
{
    uint64_t mag = ps < 0 ? (uint64_t)0 - (uint64_t)ps : (uint64_t)ps;
    snprintf(buf, KB_TIME_STRLEN, "%s%" PRIu64 ".%03" PRIu64 " ns", ps < 0 ? "-" : "", mag / 1000,
             mag % 1000);
    return buf;
}
