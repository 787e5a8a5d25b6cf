/* The session a Lua state serves (session.h). */
#include "luasim/session.h"

#include "core/util.h"
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
