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
    int show;      /* registry ref of kernbench.pretty.show, or LUA_NOREF: print */
    int complete;  /* registry ref of kernbench.help.complete, or LUA_NOREF */
    /* The candidates of the word being completed (from kernbench.help.complete,
     * a Lua function that reads tables and metatables raw and calls nothing),
     * and the next one libedit asks for. */
    char **cand;
    size_t ncand, next;
} repl;

/* libedit's completion callback has no user data: the REPL it serves, set
 * while the REPL runs (with exec.c's signal session, the command line's
 * only process-wide state). */
static repl *completing;

/* Characters that end a word for completion: not '.' or ':', so that
 * "kb.topology.lo" and "t:su" are completed as a whole. */
static const char word_breaks[] = " \t\n\"\\'`@$><=;|&{(,)[]+-*/%^~#";

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

/* Prints the values left on the stack above base: as one line of
 * kernbench.pretty.show (strings and numbers as print shows them, tables and
 * userdata as literals and summaries), or with the global print when the
 * library has no pretty printer. */
static void print_results(repl *r, int base)
{
    lua_State *L = r->L;
    int n = lua_gettop(L) - base;
    if (n <= 0)
        return;
    luaL_checkstack(L, LUA_MINSTACK, "too many results to print");
    if (r->show == LUA_NOREF) {
        lua_getglobal(L, "print");
        lua_insert(L, base + 1);
        if (lua_pcall(L, n, 0, 0) != LUA_OK)
            kb_exec_report(L, LUA_ERRRUN);
        return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->show);
    lua_insert(L, base + 1);
    if (lua_pcall(L, n, 1, 0) != LUA_OK) {
        kb_exec_report(L, LUA_ERRRUN);
        return;
    }
    size_t len;
    const char *text = lua_tolstring(L, -1, &len);
    if (text) {
        fwrite(text, 1, len, stdout);
        putchar('\n');
    }
}

/* Loads the pretty printer and the help (the global `help`, unless a
 * script defined one), each optional: a library without them (an old or
 * custom KERNBENCH_PATH) leaves print and no completion. The global
 * `torch` (unless a script defined one) is a runtime on the default
 * topology, made when first used (help() lists it among the globals). */
static void load_helpers(repl *r)
{
    static const char code[] =
        "local okp, pretty = pcall(require, 'kernbench.pretty')\n"
        "local okh, help = pcall(require, 'kernbench.help')\n"
        "if okh and rawget(_G, 'help') == nil then _G.help = help.help end\n"
        "if rawget(_G, 'torch') == nil and getmetatable(_G) == nil and type(kb) == 'table' and kb.torch then\n"
        "  setmetatable(_G, {__index = function(g, k)\n"
        "    if k ~= 'torch' then return nil end\n"
        "    local rt = kb.torch{topology = kb.topology.load()}\n"
        "    rawset(g, 'torch', rt)\n"
        "    return rt\n"
        "  end})\n"
        "end\n"
        "return okp and pretty.show or nil, okh and help.complete or nil";
    lua_State *L = r->L;
    r->show = r->complete = LUA_NOREF;
    if (luaL_loadbuffer(L, code, sizeof code - 1, "=repl") != LUA_OK || lua_pcall(L, 0, 2, 0) != LUA_OK) {
        lua_pop(L, 1);
        return;
    }
    r->complete = lua_isfunction(L, -1) ? luaL_ref(L, LUA_REGISTRYINDEX) : (lua_pop(L, 1), LUA_NOREF);
    r->show = lua_isfunction(L, -1) ? luaL_ref(L, LUA_REGISTRYINDEX) : (lua_pop(L, 1), LUA_NOREF);
}

static void drop_candidates(repl *r)
{
    for (size_t i = 0; i < r->ncand; i++)
        free(r->cand[i]);
    free(r->cand);
    r->cand = NULL;
    r->ncand = 0;
}

static char *next_candidate(const char *text, int state)
{
    repl *r = completing;
    (void)text;
    if (state == 0)
        r->next = 0;
    return r->next < r->ncand ? kb_xstrdup(r->cand[r->next++]) : NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)start;
    (void)end;
    rl_attempted_completion_over = 1; /* never file names */
    repl *r = completing;
    if (!r || r->complete == LUA_NOREF)
        return NULL;
    lua_State *L = r->L;
    int top = lua_gettop(L);
    drop_candidates(r);
    lua_rawgeti(L, LUA_REGISTRYINDEX, r->complete);
    lua_pushstring(L, text);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_istable(L, -1)) {
        size_t n = (size_t)luaL_len(L, -1);
        r->cand = kb_xmalloc((n + 1) * sizeof *r->cand);
        for (size_t i = 1; i <= n; i++) {
            lua_rawgeti(L, -1, (lua_Integer)i);
            const char *c = lua_tostring(L, -1);
            if (c)
                r->cand[r->ncand++] = kb_xstrdup(c);
            lua_pop(L, 1);
        }
    }
    lua_settop(L, top);
    if (r->ncand == 0)
        return NULL;
    return rl_completion_matches(text, next_candidate);
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
    load_helpers(&r);
    if (r.tty) {
        printf("kernbench %s (%s) - globals: sim, kb%s; %sCtrl-D exits\n", KB_VERSION, LUA_RELEASE,
               r.complete != LUA_NOREF ? ", help" : "",
               r.complete != LUA_NOREF ? "help() lists what they hold, Tab completes names; " : "");
        fflush(stdout);
        rl_readline_name = "kernbench";
        completing = &r;
        rl_attempted_completion_function = complete;
        rl_basic_word_break_characters = word_breaks;
        rl_completion_append_character = '\0';
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
    drop_candidates(&r);
    completing = NULL;
    luaL_unref(L, LUA_REGISTRYINDEX, r.show);
    luaL_unref(L, LUA_REGISTRYINDEX, r.complete);
}
