/* kernbench.output_c: result files written by scripts and benches as the
 * command line writes its own (src/trace/outfile.h): to a temporary file
 * beside the target, renamed when closed without an error. The Lua face
 * is kb.open_output and kb.write_file (lua/kernbench/init.lua,
 * docs/benches.md). */
#include "luasim/loutput.h"

#include "core/util.h"
#include "luasim/lbind.h"
#include "luasim/session.h"
#include "trace/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTPUT_MT "kernbench.output"

typedef struct loutput {
    kb_outfile *f; /* NULL once closed or aborted */
    char *path;
} loutput;

static loutput *check(lua_State *L)
{
    return luaL_checkudata(L, 1, OUTPUT_MT);
}

static loutput *check_open(lua_State *L, const char *call)
{
    loutput *o = check(L);
    if (!o->f)
        luaL_error(L, "%s: output %s is already closed", call, o->path);
    return o;
}

/* kb.open_output(path) */
static int l_open(lua_State *L)
{
    const char *path = lbind_tostr(L, 1, "kb.open_output", "argument 1 (path)");
    loutput *o = lua_newuserdatauv(L, sizeof *o, 0);
    memset(o, 0, sizeof *o);
    luaL_setmetatable(L, OUTPUT_MT);
    char *err = NULL;
    o->f = kb_outfile_open(path, "kb.open_output:", &err);
    if (!o->f) {
        lua_pushstring(L, err);
        free(err);
        return lua_error(L);
    }
    o->path = kb_xstrdup(path);
    return 1;
}

static void drop(loutput *o)
{
    kb_outfile_abort(o->f);
    o->f = NULL;
}

/* out:write(...): strings and numbers, as file:write; returns out. */
static int l_write(lua_State *L)
{
    loutput *o = check_open(L, "out:write");
    FILE *f = kb_outfile_stream(o->f);
    int n = lua_gettop(L);
    for (int i = 2; i <= n; i++) {
        size_t len;
        const char *s = luaL_checklstring(L, i, &len);
        if (fwrite(s, 1, len, f) != len) {
            int e = errno;
            drop(o);
            return luaL_error(L, "out:write: %s: write failed: %s (the output is not created)", o->path,
                              strerror(e));
        }
    }
    lua_settop(L, 1);
    return 1;
}

/* out:close(): flush, sync, rename over the target. Raises on failure
 * (the temporary file is then removed). A run that is being stopped
 * (Ctrl-C, a limit) writes no result that would look complete. */
static int l_close(lua_State *L)
{
    loutput *o = check_open(L, "out:close");
    kb_session *s = kb_session_of(L);
    if (s && s->ctl.stop && s->in_call) {
        drop(o);
        return luaL_error(L, "out:close: %s not written: %s", o->path, kb_stop_message(s->ctl.stop));
    }
    char *err = NULL;
    kb_outfile *f = o->f;
    o->f = NULL;
    if (!kb_outfile_commit(f, &err)) {
        lua_pushstring(L, err);
        free(err);
        return lua_error(L);
    }
    return 0;
}

/* out:abort(): removes the temporary file; the target is left alone. */
static int l_abort(lua_State *L)
{
    drop(check(L));
    return 0;
}

/* out:temp(): the file being written, for another program to fill (e.g.
 * gnuplot's `set output`); out:close() then renames it. */
static int l_temp(lua_State *L)
{
    lua_pushstring(L, kb_outfile_temp(check_open(L, "out:temp")->f));
    return 1;
}

static int l_path(lua_State *L)
{
    lua_pushstring(L, check(L)->path);
    return 1;
}

/* Collected unclosed (an error, an interrupt): nothing is created. */
static int l_gc(lua_State *L)
{
    loutput *o = check(L);
    drop(o);
    free(o->path);
    o->path = NULL;
    return 0;
}

/* `local out <close> = kb.open_output(p)`: committed on a normal exit,
 * dropped when the scope is left by an error. */
static int l_tbc(lua_State *L)
{
    loutput *o = check(L);
    if (!o->f)
        return 0;
    if (!lua_isnil(L, 2)) {
        drop(o);
        return 0;
    }
    lua_settop(L, 1);
    return l_close(L);
}

static int l_tostring(lua_State *L)
{
    loutput *o = check(L);
    lua_pushfstring(L, "output %s (%s)", o->path ? o->path : "?", o->f ? "open" : "closed");
    return 1;
}

/* output_c.append_line(path, line): appends line (and a newline if it has
 * none) to path with one write(2) on an O_APPEND descriptor, then fsync,
 * then close: a record of the sweep journal (lua/kernbench/sweep/journal.lua)
 * is on disk, whole, when this returns true. Returns true, or nil and why. */
static int l_append_line(lua_State *L)
{
    const char *path = lbind_tostr(L, 1, "output_c.append_line", "argument 1 (path)");
    size_t len;
    const char *line = luaL_checklstring(L, 2, &len);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, line, len);
    if (len == 0 || line[len - 1] != '\n')
        luaL_addchar(&b, '\n');
    luaL_pushresult(&b);
    size_t n;
    const char *text = lua_tolstring(L, -1, &n);
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: cannot open for appending: %s", path, strerror(errno));
        return 2;
    }
    size_t off = 0;
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            lua_pushnil(L);
            lua_pushfstring(L, "%s: write failed: %s", path, strerror(e));
            return 2;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0) {
        int e = errno;
        close(fd);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: fsync failed: %s", path, strerror(e));
        return 2;
    }
    if (close(fd) != 0) {
        lua_pushnil(L);
        lua_pushfstring(L, "%s: close failed: %s", path, strerror(errno));
        return 2;
    }
    lua_pushboolean(L, 1);
    return 1;
}

/* output_c.truncate(path, size): cuts path to size bytes (the sweep
 * journal's torn last line), then fsync. Returns true, or nil and why. */
static int l_truncate(lua_State *L)
{
    const char *path = lbind_tostr(L, 1, "output_c.truncate", "argument 1 (path)");
    lua_Integer size = luaL_checkinteger(L, 2);
    if (size < 0)
        return luaL_error(L, "output_c.truncate: size must be >= 0, got %I", size);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0 || fsync(fd) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        lua_pushnil(L);
        lua_pushfstring(L, "%s: cannot truncate to %I bytes: %s", path, size, strerror(e));
        return 2;
    }
    close(fd);
    lua_pushboolean(L, 1);
    return 1;
}

static const luaL_Reg methods[] = {{"write", l_write}, {"close", l_close}, {"abort", l_abort},
                                   {"temp", l_temp},   {"path", l_path},   {NULL, NULL}};
static const luaL_Reg meta[] = {{"__gc", l_gc}, {"__close", l_tbc}, {"__tostring", l_tostring}, {NULL, NULL}};
static const luaL_Reg lib[] = {
    {"open", l_open}, {"append_line", l_append_line}, {"truncate", l_truncate}, {NULL, NULL}};

int luaopen_kb_output(lua_State *L)
{
    luaL_newmetatable(L, OUTPUT_MT);
    luaL_setfuncs(L, meta, 0);
    luaL_newlib(L, methods);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 1);
    luaL_newlib(L, lib);
    return 1;
}
