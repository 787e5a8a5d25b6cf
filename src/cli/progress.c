/* The progress line (progress.h). */
#include "cli/progress.h"

#include "core/util.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

kb_progress_mode kb_progress_mode_of(const char *env, bool *bad)
{
    *bad = false;
    if (!env || !*env)
        return KB_PROGRESS_AUTO;
    if (strcmp(env, "1") == 0)
        return KB_PROGRESS_FORCED;
    if (strcmp(env, "0") == 0)
        return KB_PROGRESS_OFF;
    *bad = true;
    return KB_PROGRESS_AUTO;
}

/* ---- the text ---- */

double kb_progress_eta(const kb_session_point *pt, double now)
{
    if (pt->n <= 0 || pt->first_k < 1 || pt->k <= pt->first_k)
        return -1;
    double per = (pt->since_s - pt->first_s) / (double)(pt->k - pt->first_k);
    double rest = per - (now - pt->since_s);
    return per * (double)(pt->n - pt->k) + (rest > 0 ? rest : 0);
}

void kb_progress_format_time(char *buf, size_t n, kb_time ps)
{
    static const struct { double ns; const char *unit; } units[] = {
        {1e9, "s"}, {1e6, "ms"}, {1e3, "us"}, {1, "ns"}};
    double ns = (double)ps / 1000.0, mag = fabs(ns);
    if (mag != 0 && mag < 1) {
        snprintf(buf, n, "%.4g ps", ns * 1e3);
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof *units; i++)
        if (mag >= units[i].ns || units[i].ns == 1) {
            snprintf(buf, n, "%.4g %s", ns / units[i].ns, units[i].unit);
            return;
        }
}

static void format_rate(char *buf, size_t n, double per_s)
{
    if (per_s >= 1e9)
        snprintf(buf, n, "%.3g G", per_s / 1e9);
    else if (per_s >= 1e6)
        snprintf(buf, n, "%.3g M", per_s / 1e6);
    else if (per_s >= 1e3)
        snprintf(buf, n, "%.3g k", per_s / 1e3);
    else
        snprintf(buf, n, "%.0f", per_s);
}

static void format_left(char *buf, size_t n, double s)
{
    if (s < 99.5)
        snprintf(buf, n, "%.0f s", s);
    else if (s < 99.5 * 60)
        snprintf(buf, n, "%.0f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
}

/* Appends to buf (size n, used *len) as snprintf would, never past n - 1. */
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t n, size_t *len, const char *fmt, ...)
{
    if (*len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *len, n - *len, fmt, ap);
    va_end(ap);
    if (w > 0)
        *len = *len + (size_t)w < n ? *len + (size_t)w : n - 1;
}

size_t kb_progress_format(char *buf, size_t n, const kb_sim_progress *r, const kb_session_point *pt,
                          double now, int columns)
{
    char t[32], rate[32];
    size_t len = 0;
    buf[0] = '\0';
    if (r->id > 0) { /* id 0: no simulation runs here, only the bench's points (kernbench.procpool) */
        kb_progress_format_time(t, sizeof t, r->now);
        append(buf, n, &len, "sim #%d  t=%s  %" PRIu64 " events", r->id, t, r->events);
        if (r->wall_s > 0) {
            format_rate(rate, sizeof rate, (double)r->events / r->wall_s);
            append(buf, n, &len, "  %s events/s", rate);
        }
    }
    if (pt && pt->n > 0) {
        append(buf, n, &len, "%spoint %" PRId64 "/%" PRId64, len > 0 ? "  " : "", pt->k, pt->n);
        if (pt->label[0])
            append(buf, n, &len, " (%s)", pt->label);
        double left = kb_progress_eta(pt, now);
        if (left >= 0) {
            char l[32];
            format_left(l, sizeof l, left);
            append(buf, n, &len, " ~ %s left", l);
        }
    }
    /* One terminal row: a line that wraps could not be rewritten. */
    if (columns > 1 && len > (size_t)columns - 1) {
        len = (size_t)columns - 1;
        while (len > 0 && ((unsigned char)buf[len] & 0xC0) == 0x80) /* not inside a UTF-8 character */
            len--;
        buf[len] = '\0';
    }
    return len;
}

/* ---- drawing ---- */

void kb_progress_clear(kb_progress *p)
{
    if (!p->shown)
        return;
    fputs("\r\033[K", p->out);
    fflush(p->out);
    p->shown = false;
}

static void clear_cb(void *ctx) { kb_progress_clear(ctx); }

bool kb_progress_due(const kb_progress *p, double now)
{
    if (p->partial) /* a line of the script's output is unfinished: drawing would erase it */
        return false;
    return p->forced ||
           (now - p->start_s >= KB_PROGRESS_DELAY_S && now - p->last_draw_s >= KB_PROGRESS_INTERVAL_S);
}

static int terminal_columns(FILE *f)
{
    struct winsize ws;
    if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 0;
}

/* kb_sim_control.on_progress: every KB_SIM_PROGRESS_EVERY events of a run,
 * and as it returns. */
static void on_report(void *ctx, const kb_sim_progress *r)
{
    kb_progress *p = ctx;
    if (r->ended) {
        kb_progress_clear(p);
        return;
    }
    double now = r->clock_s;
    if (!kb_progress_due(p, now))
        return;
    char line[256];
    kb_progress_format(line, sizeof line, r, &p->session->point, now, terminal_columns(p->out));
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
    p->shown = true;
    p->last_draw_s = now;
}

/* ---- Lua output: cleared before, and whether it ends a line ---- */

static bool on_terminal(const kb_progress *p, FILE *f)
{
    return f == stderr || (f == stdout && p->stdout_tty);
}

/* After a write of the values first..last (strings and numbers) to f. */
static void note_write(kb_progress *p, lua_State *L, FILE *f, int first, int last)
{
    if (!on_terminal(p, f))
        return;
    for (int i = last; i >= first; i--) {
        size_t len = 0;
        const char *s = lua_type(L, i) == LUA_TSTRING ? lua_tolstring(L, i, &len) : NULL;
        if (s && len == 0)
            continue; /* an empty string changes nothing */
        p->partial = !s || s[len - 1] != '\n';
        return;
    }
}

static FILE *stream_of(lua_State *L, int idx)
{
    luaL_Stream *s = luaL_testudata(L, idx, LUA_FILEHANDLE);
    return s && s->closef ? s->f : NULL;
}

/* print(...): upvalues the progress and the original print. */
static int l_print(lua_State *L)
{
    kb_progress *p = lua_touserdata(L, lua_upvalueindex(1));
    kb_progress_clear(p);
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);
    lua_call(L, n, 0);
    if (p->stdout_tty)
        p->partial = false;
    return 0;
}

/* Clears the line before a write to the terminal's streams, notes what
 * arguments first..top write to f, then calls the original writer (upvalue
 * 2) with every argument. */
static int forward_write(lua_State *L, kb_progress *p, FILE *f, int first)
{
    int n = lua_gettop(L);
    if (f == stdout || f == stderr)
        kb_progress_clear(p);
    if (f)
        note_write(p, L, f, first, n); /* before the call: it consumes the arguments */
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_insert(L, 1);
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
}

/* io.write(...): upvalues the progress, the original io.write and io.output. */
static int l_io_write(lua_State *L)
{
    kb_progress *p = lua_touserdata(L, lua_upvalueindex(1));
    FILE *f = stdout;
    if (lua_type(L, lua_upvalueindex(3)) == LUA_TFUNCTION) {
        lua_pushvalue(L, lua_upvalueindex(3));
        lua_call(L, 0, 1); /* io.output(): the file io.write writes to */
        f = stream_of(L, -1);
        lua_pop(L, 1);
    }
    return forward_write(L, p, f, 1);
}

/* file:write(...): upvalues the progress and the original method. */
static int l_file_write(lua_State *L)
{
    kb_progress *p = lua_touserdata(L, lua_upvalueindex(1));
    return forward_write(L, p, stream_of(L, 1), 2);
}

/* Replaces table[name] (the table at idx) with a closure of fn whose
 * upvalues are p, the original value and `extra` more values on the top of
 * the stack (popped). Does nothing if the original is not a function. */
static void wrap(lua_State *L, int idx, const char *name, lua_CFunction fn, kb_progress *p, int extra)
{
    idx = lua_absindex(L, idx);
    if (lua_getfield(L, idx, name) != LUA_TFUNCTION) {
        lua_pop(L, 1 + extra);
        return;
    }
    lua_pushlightuserdata(L, p);
    lua_insert(L, -2 - extra);
    lua_insert(L, -1 - extra); /* p, original, extras */
    lua_pushcclosure(L, fn, 2 + extra);
    lua_setfield(L, idx, name);
}

static void wrap_output(lua_State *L, kb_progress *p)
{
    int top = lua_gettop(L);
    lua_pushglobaltable(L);
    wrap(L, -1, "print", l_print, p, 0);
    if (lua_getglobal(L, "io") == LUA_TTABLE) {
        lua_getfield(L, -1, "output");
        wrap(L, -2, "write", l_io_write, p, 1);
    }
    if (luaL_getmetatable(L, LUA_FILEHANDLE) == LUA_TTABLE && lua_getfield(L, -1, "__index") == LUA_TTABLE)
        wrap(L, -1, "write", l_file_write, p, 0);
    lua_settop(L, top);
}

void kb_progress_start(kb_progress *p, kb_session *session, lua_State *L, bool quiet)
{
    memset(p, 0, sizeof *p);
    p->session = session;
    p->out = stderr;
    bool bad;
    const char *env = getenv("KERNBENCH_PROGRESS");
    kb_progress_mode mode = kb_progress_mode_of(env, &bad);
    if (bad)
        fprintf(stderr, "kernbench: KERNBENCH_PROGRESS='%s': expected 1 (on) or 0 (off); ignored\n", env);
    if (quiet || mode == KB_PROGRESS_OFF)
        return;
    if (mode == KB_PROGRESS_AUTO) {
        const char *term = getenv("TERM");
        if (!isatty(STDERR_FILENO) || (term && strcmp(term, "dumb") == 0))
            return;
    }
    p->on = true;
    p->forced = mode == KB_PROGRESS_FORCED;
    p->stdout_tty = isatty(STDOUT_FILENO);
    p->start_s = kb_wall_seconds();
    p->last_draw_s = -INFINITY;
    session->ctl.on_progress = on_report;
    session->ctl.progress_ctx = p;
    session->clear_line = clear_cb;
    session->clear_ctx = p;
    wrap_output(L, p);
}

void kb_progress_end(kb_progress *p)
{
    if (!p->on)
        return;
    kb_progress_clear(p);
    p->on = false;
    p->session->ctl.on_progress = NULL;
    p->session->ctl.progress_ctx = NULL;
    p->session->clear_line = NULL;
    p->session->clear_ctx = NULL;
}
