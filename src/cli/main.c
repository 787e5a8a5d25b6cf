/* kernbench: the command line. Runs a Lua script or code against the
 * simulator, or starts the REPL. Reference: docs/cli.md. */
#include "cli/exec.h"
#include "cli/paths.h"
#include "cli/repl.h"
#include "lua/host.h"

#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2 };

static const char USAGE[] =
    "usage: kernbench [options] [script.lua [args...]]\n"
    "\n"
    "Runs a Lua script against the kernbench simulator, or starts an interactive\n"
    "Lua REPL when no script or -e is given. The globals `sim` (event core) and\n"
    "`kb` (kernbench library) are preloaded; the script's arguments are in `arg`\n"
    "and `...`, as with the lua interpreter.\n"
    "\n"
    "options:\n"
    "  -e CODE        run the Lua code CODE (repeatable, before the script)\n"
    "  -i             enter the REPL after running the script or -e code\n"
    "  --stats        print events, simulated time, wall time and events/s of\n"
    "                 every simulation when it is closed (on stderr)\n"
    "  -h, --help     print this help and exit\n"
    "  -v, --version  print the version and exit\n"
    "  --             stop handling options\n"
    "  -              run the script read from standard input\n"
    "\n"
    "environment:\n"
    "  KERNBENCH_PATH     directory of the kernbench Lua library\n"
    "                     (default: <bin>/../share/kernbench/lua)\n"
    "  KERNBENCH_HISTORY  REPL history file (default: ~/.kernbench_history;\n"
    "                     empty: no history)\n"
    "\n"
    "exit status: 0 success, 1 script or model error, 2 usage error\n";

typedef struct options {
    const char **code; /* -e chunks, in order */
    int ncode;
    bool interactive;
    bool stats;
    int script; /* index in argv of the script, 0 if none */
} options;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kernbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n");
    return EXIT_USAGE;
}

/* Returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, options *o)
{
    o->code = calloc((size_t)argc, sizeof *o->code);
    if (!o->code)
        return EXIT_ERROR;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            o->script = i;
            return -1;
        }
        if (strcmp(a, "--") == 0) {
            if (i + 1 < argc)
                o->script = i + 1;
            return -1;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(USAGE, stdout);
            return EXIT_OK;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
            printf("kernbench %s (%s)\n", KB_VERSION, LUA_RELEASE);
            return EXIT_OK;
        }
        if (strcmp(a, "-i") == 0)
            o->interactive = true;
        else if (strcmp(a, "--stats") == 0)
            o->stats = true;
        else if (strncmp(a, "-e", 2) == 0) {
            const char *code = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!code)
                return usage_error("option '%s' needs an argument", "-e");
            o->code[o->ncode++] = code;
        } else
            return usage_error("unknown option '%s'", a);
    }
    return -1;
}

/* The global `arg`: arg[0] is the script, negative indices the
 * interpreter and its options, positive ones the script's arguments. */
static void make_arg_table(lua_State *L, int argc, char **argv, int script)
{
    lua_createtable(L, argc - script, script + 1);
    for (int i = 0; i < argc; i++) {
        lua_pushstring(L, argv[i]);
        lua_rawseti(L, -2, i - script);
    }
    lua_setglobal(L, "arg");
}

static int run_code(lua_State *L, kb_host *host, const char *code)
{
    int status = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
    if (status == LUA_OK)
        status = kb_exec_call(L, host, 0, 0);
    return kb_exec_report(L, status);
}

static int run_script(lua_State *L, kb_host *host, int argc, char **argv, int script)
{
    const char *name = argv[script];
    if (strcmp(name, "-") == 0 && strcmp(argv[script - 1], "--") != 0)
        name = NULL; /* stdin */
    int status = luaL_loadfile(L, name);
    if (status == LUA_OK) {
        int nargs = argc - script - 1;
        luaL_checkstack(L, nargs, "too many script arguments");
        for (int i = script + 1; i < argc; i++)
            lua_pushstring(L, argv[i]);
        status = kb_exec_call(L, host, nargs, 0);
    }
    return kb_exec_report(L, status);
}

int main(int argc, char **argv)
{
    options o = {0};
    int code = parse(argc, argv, &o);
    if (code >= 0) {
        free(o.code);
        return code;
    }

    char err[1024];
    char *lua_dir = kb_find_lua_dir(argv[0], err, sizeof err);
    if (!lua_dir) {
        fprintf(stderr, "kernbench: %s\n", err);
        free(o.code);
        return EXIT_ERROR;
    }
    kb_host host = {.print_stats = o.stats};
    lua_State *L = kb_host_open(&host, lua_dir, err, sizeof err);
    free(lua_dir);
    if (!L) {
        fprintf(stderr, "kernbench: %s\n", err);
        free(o.code);
        return EXIT_ERROR;
    }

    make_arg_table(L, argc, argv, o.script);
    int status = LUA_OK;
    for (int i = 0; i < o.ncode && status == LUA_OK; i++)
        status = run_code(L, &host, o.code[i]);
    if (status == LUA_OK && o.script)
        status = run_script(L, &host, argc, argv, o.script);
    if (status == LUA_OK && (o.interactive || (!o.script && o.ncode == 0)))
        kb_repl(L, &host);

    fflush(stdout);
    kb_host_close(L); /* closes the simulations still open (and reports them) */
    free(o.code);
    return status == LUA_OK ? EXIT_OK : EXIT_ERROR;
}
