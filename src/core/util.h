/* Small helpers used across layers: checked allocation and string building. */
#ifndef KB_CORE_UTIL_H
#define KB_CORE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Allocation that never returns NULL: out of memory aborts with a message. */
void *kb_xmalloc(size_t n);
void *kb_xcalloc(size_t count, size_t size);
void *kb_xrealloc(void *p, size_t n);
char *kb_xstrdup(const char *s); /* NULL in, NULL out */

/* printf into a newly allocated string; the caller frees it. */
char *kb_vasprintf(const char *fmt, va_list ap);
char *kb_asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable string: append with kb_buf_printf, take with kb_buf_take. */
typedef struct kb_buf {
    char *data;
    size_t len, cap;
} kb_buf;

void kb_buf_printf(kb_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *kb_buf_take(kb_buf *b); /* returns the string ("" if empty); b is reset */

/* Formats picoseconds exactly as nanoseconds, e.g. 1500 -> "1.500 ns".
 * buf must hold KB_TIME_STRLEN bytes; returns buf. */
#define KB_TIME_STRLEN 32
char *kb_time_format(int64_t ps, char *buf);

/* Monotonic wall clock in seconds, for statistics only (never for model time). */
double kb_wall_seconds(void);

/* Overflow-checked integer arithmetic, for sizes that come from users
 * (shapes, strides, byte counts): true with *out the exact result, false
 * (*out unspecified) when it does not fit the type. */
static inline bool kb_mul_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool kb_add_u64(uint64_t a, uint64_t b, uint64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool kb_mul_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool kb_add_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool kb_sub_i64(int64_t a, int64_t b, int64_t *out) { return !__builtin_sub_overflow(a, b, out); }

#endif
