/* The session a Lua state serves (session.h). */
#include "luasim/session.h"

#include "core/util.h"
#include "luasim/lbind.h"
#include "trace/val.h"

#include <inttypes.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* The registry key under which the state's session lives. */
static const char SESSION_KEY = 's';

void kb_session_attach(lua_State *L, kb_session *session)
{
    lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
    session->main = lua_tothread(L, -1);
    lua_pop(L, 1);
    lua_pushlightuserdata(L, session);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &SESSION_KEY);
}

kb_session *kb_session_of(lua_State *L)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &SESSION_KEY);
    kb_session *session = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return session;
}

void kb_session_watch(kb_session *session, kb_sim *sim, int serial)
{
    if (session)
        kb_sim_set_control(sim, &session->ctl, serial);
}

int kb_session_next_serial(lua_State *L)
{
    kb_session *session = kb_session_of(L);
    return session ? ++session->sims_created : 0;
}

void kb_session_sim_closed(lua_State *L, int serial, const kb_sim_stats *st, uint64_t resumes)
{
    kb_session *session = kb_session_of(L);
    if (!session || !session->print_stats)
        return;
    char now[KB_TIME_STRLEN];
    kb_session_clear_line(session); /* a simulation collected during another's run */
    fprintf(session->stats_out ? session->stats_out : stderr,
            "[stats] sim #%d: events=%" PRIu64 " sim_time=%s wall_s=%.6f events_per_s=%.0f "
            "resumes=%" PRIu64 "\n",
            serial, st->events, kb_time_format(st->now, now), st->wall_s, st->events_per_s, resumes);
}

void kb_session_dump_config(kb_session *session, const char *yaml)
{
    for (size_t i = 0; i < session->nconfigs; i++)
        if (strcmp(session->configs_written[i], yaml) == 0)
            return;
    session->configs_written = kb_xrealloc(session->configs_written, (session->nconfigs + 1) * sizeof(char *));
    session->configs_written[session->nconfigs++] = kb_xstrdup(yaml);
    fprintf(session->config_out, "%s%s", session->nconfigs > 1 ? "---\n" : "", yaml);
}

void kb_session_add_run(lua_State *L, struct kb_val *stats)
{
    kb_session *session = kb_session_of(L);
    if (!session) {
        kb_val_free(stats);
        return;
    }
    if (!session->runs)
        session->runs = kb_val_arr();
    kb_arr_push(session->runs, stats);
}

void kb_session_oplog_error(kb_session *session, char *err)
{
    if (!session->oplog_error)
        session->oplog_error = err;
    else
        free(err);
}

void kb_session_clear_line(kb_session *session)
{
    if (session && session->clear_line)
        session->clear_line(session->clear_ctx);
}

/* ---- kb.progress ---- */

static int64_t check_count(lua_State *L, int arg, const char *name)
{
    int isint = 0;
    lua_Integer v = lua_type(L, arg) == LUA_TNUMBER ? lua_tointegerx(L, arg, &isint) : 0;
    if (!isint) {
        if (lua_type(L, arg) == LUA_TNUMBER)
            luaL_error(L, "kb.progress(k, n[, label]): %s must be an integer, got %s", name,
                       lua_tostring(L, arg));
        luaL_error(L, "kb.progress(k, n[, label]): %s must be an integer, got %s", name, luaL_typename(L, arg));
    }
    return (int64_t)v;
}

/* The label on one line of at most KB_SESSION_LABEL_MAX bytes: control
 * characters become spaces, a cut never splits a UTF-8 character. */
static void copy_label(char *dst, const char *src, size_t len)
{
    if (len > KB_SESSION_LABEL_MAX) {
        len = KB_SESSION_LABEL_MAX;
        while (len > 0 && ((unsigned char)src[len] & 0xC0) == 0x80)
            len--;
    }
    for (size_t i = 0; i < len; i++)
        dst[i] = (unsigned char)src[i] < 0x20 || src[i] == 0x7f ? ' ' : src[i];
    dst[len] = '\0';
}

/* kb.progress(k, n[, label]) */
static int l_progress(lua_State *L)
{
    int64_t k = check_count(L, 1, "k");
    int64_t n = check_count(L, 2, "n");
    if (n < 1)
        return luaL_error(L, "kb.progress(k, n[, label]): n (the number of points) must be >= 1, got %I",
                          (lua_Integer)n);
    if (k < 0 || k > n)
        return luaL_error(L, "kb.progress(k, n[, label]): k must be between 0 and n, got k = %I, n = %I",
                          (lua_Integer)k, (lua_Integer)n);
    size_t len = 0;
    const char *label = "";
    if (!lua_isnoneornil(L, 3)) {
        if (lua_type(L, 3) != LUA_TSTRING)
            return luaL_error(L, "kb.progress(k, n[, label]): label must be a string, got %s",
                              luaL_typename(L, 3));
        label = lbind_checkstr(L, 3, "kb.progress", "label");
        len = strlen(label);
    }
    kb_session *session = kb_session_of(L);
    if (!session)
        return 0;
    kb_session_point *pt = &session->point;
    double now = kb_wall_seconds();
    if (n != pt->n || k < pt->k) /* another sweep, or one started again: a new estimate */
        pt->first_k = 0;
    if (n != pt->n || k != pt->k)
        pt->since_s = now;
    pt->n = n;
    pt->k = k;
    if (k >= 1 && pt->first_k == 0) {
        pt->first_k = k;
        pt->first_s = now;
    }
    copy_label(pt->label, label, len);
    return 0;
}

/* progress_c.redraw(): redraws the progress line with the point alone (as
 * kernbench.procpool does while it waits), for a caller waiting on work
 * done elsewhere (the sweep's backends). Nothing unless the line is on. */
static int l_redraw(lua_State *L)
{
    kb_session *s = kb_session_of(L);
    if (!s || !s->ctl.on_progress || s->point.n <= 0)
        return 0;
    kb_sim_progress r;
    memset(&r, 0, sizeof r);
    r.id = 0;
    r.clock_s = kb_wall_seconds();
    s->ctl.on_progress(s->ctl.progress_ctx, &r);
    return 0;
}

/* progress_c.wall(): wall-clock seconds (monotonic), for estimates. */
static int l_wall(lua_State *L)
{
    lua_pushnumber(L, kb_wall_seconds());
    return 1;
}

int luaopen_kb_progress(lua_State *L)
{
    static const luaL_Reg fns[] = {{"progress", l_progress}, {"redraw", l_redraw}, {"wall", l_wall}, {NULL, NULL}};
    luaL_newlib(L, fns);
    return 1;
}
