#include "cli/repl.h"

#include "cli/exec.h"
#include "cli/outputs.h"
#include "core/util.h"

#include <editline/readline.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HISTORY_LINES 1000

typedef struct repl {
    lua_State *L;
    kb_session *session;
    bool tty;
    char *history; /* file, or NULL */
} repl;

/* One line without its newline, or NULL at end of input. */
static char *read_line(repl *r, const char *prompt)
{
    if (r->tty)
        return readline(prompt);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        free(line);
        return NULL;
    }
    if (n > 0 && line[n - 1] == '\n')
        line[n - 1] = '\0';
    return line;
}

/* A chunk is incomplete when the parser stops at its end. */
static bool incomplete(lua_State *L, int status)
{
    if (status != LUA_ERRSYNTAX)
        return false;
    size_t len;
    const char *msg = lua_tolstring(L, -1, &len);
    const char mark[] = "<eof>";
    return len >= sizeof mark - 1 && strcmp(msg + len - (sizeof mark - 1), mark) == 0;
}

/* Compiles the input on the stack's top, first as `return <input>` (so
 * expressions print their values), then as statements, reading more lines
 * while the statements are incomplete. Leaves [input, function] or
 * [input, error message] on the stack; input grows with the extra lines. */
static int compile(repl *r, int *eof)
{
    lua_State *L = r->L;
    const char *code = lua_pushfstring(L, "return %s;", lua_tostring(L, -1));
    int status = luaL_loadbuffer(L, code, strlen(code), "=stdin");
    lua_remove(L, -2);
    if (status == LUA_OK)
        return status;
    lua_pop(L, 1);
    for (;;) {
        size_t len;
        const char *src = lua_tolstring(L, -1, &len);
        status = luaL_loadbuffer(L, src, len, "=stdin");
        if (!incomplete(L, status))
            return status;
        char *more = read_line(r, ">> ");
        if (!more) { /* input ended inside a statement: report why */
            *eof = 1;
            return status;
        }
        lua_pop(L, 1);
        lua_pushliteral(L, "\n");
        lua_pushstring(L, more);
        free(more);
        lua_concat(L, 3);
    }
}

static void remember(repl *r, const char *entry)
{
    if (!r->tty || !entry[0])
        return;
    add_history(entry);
    if (r->history)
        write_history(r->history);
}

/* Prints the values left on the stack above base with the global print. */
static void print_results(repl *r, int base)
{
    lua_State *L = r->L;
    int n = lua_gettop(L) - base;
    if (n <= 0)
        return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    lua_getglobal(L, "print");
    lua_insert(L, base + 1);
    if (lua_pcall(L, n, 0, 0) != LUA_OK)
        kb_exec_report(L, LUA_ERRRUN);
}

static char *history_file(void)
{
    const char *env = getenv("KERNBENCH_HISTORY");
    if (env)
        return *env ? kb_xstrdup(env) : NULL; /* empty: no history file */
    const char *home = getenv("HOME");
    return home && *home ? kb_asprintf("%s/.kernbench_history", home) : NULL;
}

void kb_repl(lua_State *L, kb_session *session)
{
    repl r = {.L = L, .session = session, .tty = isatty(STDIN_FILENO)};
    if (r.tty) {
        printf("kernbench %s (%s) - globals: sim, kb; Ctrl-D exits\n", KB_VERSION, LUA_RELEASE);
        fflush(stdout);
        rl_readline_name = "kernbench";
        using_history();
        stifle_history(HISTORY_LINES);
        r.history = history_file();
        if (r.history)
            read_history(r.history);
    }
    int eof = 0;
    while (!eof) {
        int base = lua_gettop(L);
        kb_exec_sigint(false); /* Ctrl-C at the prompt ends the session, as in lua */
        char *line = read_line(&r, "> ");
        kb_exec_sigint(true);
        if (!line)
            break;
        lua_pushstring(L, line);
        free(line);
        int status = compile(&r, &eof);
        remember(&r, lua_tostring(L, base + 1));
        if (status == LUA_OK) {
            status = kb_exec_call(L, session, 0, LUA_MULTRET);
            if (status == LUA_OK)
                print_results(&r, base + 1);
        }
        if (status != LUA_OK)
            kb_exec_report(L, status);
        lua_settop(L, base);
        if (session->ctl.stop != KB_STOP_SIGINT && session->ctl.stop)
            break; /* SIGTERM, --timeout, a limit: the session ends (main reports it) */
        if (session->ctl.stop) { /* Ctrl-C ended the line only */
            char *why = kb_stop_text(session, session->ctl.stop);
            fprintf(stderr, "kernbench: %s\n", why);
            free(why);
        }
        session->ctl.stop = KB_STOP_NONE;
        session->ctl.reached.seen = false;
        session->stopped_where[0] = '\0';
    }
    if (r.tty)
        putchar('\n');
    fflush(stdout);
    free(r.history);
}
