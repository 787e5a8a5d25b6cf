/* Running what the command line names (run.h). */
#include "cli/run.h"

#include "cli/exec.h"
#include "cli/options.h"
#include "core/util.h"

#include <errno.h>
#include <lauxlib.h>
#include <string.h>
#include <unistd.h>

/* The global `arg`: arg[0] is the script, negative indices the
 * interpreter and its options, positive ones the script's arguments. */
void kb_cli_arg_table(lua_State *L, int argc, char **argv, int script)
{
    lua_createtable(L, argc - script, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

/* require(name), as --require does before anything else runs. */
int kb_cli_run_require(lua_State *L, kb_session *session, const char *name)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, name);
    return kb_exec_report(L, kb_exec_call(L, session, 1, 0));
}

int kb_cli_run_code(lua_State *L, kb_session *session, const char *code)
{
    int status = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
    if (status == LUA_OK)
        status = kb_exec_call(L, session, 0, 0);
    return kb_exec_report(L, status);
}

/* The script's directory goes first in package.path: `require "kernels.X"`
 * finds kernels beside the bench (then in the library's tree, then in the
 * current directory). */
static void add_script_dir(lua_State *L, const char *script)
{
    static const char code[] = "local dir = ... package.path = dir .. '/?.lua;' .. dir .. '/?/init.lua;' .. "
                               "package.path";
    const char *slash = strrchr(script, '/');
    if (luaL_loadbuffer(L, code, sizeof code - 1, "=(path)") != LUA_OK) {
        lua_pop(L, 1);
        return;
    }
    if (slash)
        lua_pushlstring(L, script, slash == script ? 1 : (size_t)(slash - script));
    else
        lua_pushliteral(L, ".");
    if (lua_pcall(L, 1, 0, 0) != LUA_OK)
        lua_pop(L, 1);
}

/* `kernbench run NAME`: the bench's file (kernbench.bench_find.resolve), newly
 * allocated, or NULL with the status of the error reported (KB_EXEC_USAGE
 * for an unknown bench) in *status. */
char *kb_cli_resolve_bench(lua_State *L, kb_session *session, const char *name, int *status)
{
    static const char code[] = "local name = ... return require('kernbench.bench_find').resolve_for_run(name)";
    *status = luaL_loadbuffer(L, code, sizeof code - 1, "=(run)");
    if (*status == LUA_OK) {
        lua_pushstring(L, name);
        *status = kb_exec_call(L, session, 1, 1);
    }
    if (*status != LUA_OK) {
        *status = kb_exec_report(L, *status);
        return NULL;
    }
    char *path = lua_isstring(L, -1) ? kb_xstrdup(lua_tostring(L, -1)) : NULL;
    lua_pop(L, 1);
    if (!path)
        *status = LUA_ERRRUN;
    return path;
}

/* The string a bench left in kb.FIELD (results_document, summary_note), taken. */
char *kb_cli_take_kb_string(lua_State *L, const char *field)
{
    char *doc = NULL;
    lua_getglobal(L, "kb");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, field);
        if (lua_type(L, -1) == LUA_TSTRING)
            doc = kb_xstrdup(lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return doc;
}

/* Runs a script; a script that returns a bench table ({name, description,
 * run}) is then run as a bench (kernbench.bench.after_script), whose exit
 * status goes to *exit_status. `require_bench`: `kernbench run FILE`. */
int kb_cli_run_script(lua_State *L, kb_session *session, int argc, char **argv, int script, bool require_bench,
                      int *exit_status)
{
    const char *name = argv[script];
    if (strcmp(name, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
        name = NULL; /* stdin */
    if (name && access(name, F_OK) != 0 && errno == ENOENT) {
        /* a mistyped file, subcommand or bench: a usage error with a hint */
        static const char code[] = "local name = ... require('kernbench.usage').no_script(name)";
        int st = luaL_loadbuffer(L, code, sizeof code - 1, "=(script)");
        if (st == LUA_OK) {
            lua_pushstring(L, name);
            st = kb_exec_call(L, session, 1, 0);
        }
        return kb_exec_report(L, st);
    }
    if (name)
        add_script_dir(L, name);
    int status = luaL_loadfile(L, name);
    if (status == LUA_OK) {
        int nargs = argc - script - 1;
        luaL_checkstack(L, nargs, "too many script arguments");
        for (int i = script + 1; i < argc; i++)
            lua_pushstring(L, argv[i]);
        status = kb_exec_call(L, session, nargs, 1);
    }
    if (status == LUA_OK) {
        static const char code[] =
            "local v, path, strict = ... return require('kernbench.bench').after_script(v, path, strict)";
        status = luaL_loadbuffer(L, code, sizeof code - 1, "=(bench)");
        if (status == LUA_OK) {
            lua_insert(L, -2); /* the script's result is the first argument */
            lua_pushstring(L, name ? name : "stdin");
            lua_pushboolean(L, require_bench);
            status = kb_exec_call(L, session, 3, 1);
        }
        if (status == LUA_OK) {
            if (lua_isinteger(L, -1))
                *exit_status = (int)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
    }
    return kb_exec_report(L, status);
}

/* `kernbench probe|list|help ...`: the Lua function module.fn(args) returns the exit status. */
int kb_cli_run_subcommand(lua_State *L, kb_session *session, const char *module, const char *fn, int argc,
                          char **argv, int first, int *exit_status)
{
    static const char code[] = "local m, f, args = ... return require(m)[f](args)";
    int status = luaL_loadbuffer(L, code, sizeof code - 1, "=(subcommand)");
    if (status == LUA_OK) {
        lua_pushstring(L, module);
        lua_pushstring(L, fn);
        lua_createtable(L, argc - first, 0);
        for (int i = first; i < argc; i++) {
            lua_pushstring(L, argv[i]);
            lua_rawseti(L, -2, i - first + 1);
        }
        status = kb_exec_call(L, session, 3, 1);
        if (status == LUA_OK) {
            *exit_status = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : KB_EXIT_OK;
            lua_pop(L, 1);
        }
    }
    return kb_exec_report(L, status);
}
