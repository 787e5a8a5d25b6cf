/* kernbench: the command line. Runs a Lua script or code against the
 * simulator, or starts the REPL. Reference: docs/cli.md. */
#include "cli/exec.h"
#include "cli/outputs.h"
#include "cli/paths.h"
#include "cli/progress.h"
#include "cli/repl.h"
#include "cli/web.h"
#include "core/util.h"
#include "lua/state.h"

#include <errno.h>
#include <lauxlib.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Exit statuses (docs/cli.md): a run stopped early has its own. */
enum {
    EXIT_OK = 0,
    EXIT_ERROR = 1,
    EXIT_USAGE = 2,
    EXIT_UNTIL = 3,
    EXIT_MAX_EVENTS = 4,
    EXIT_TIMEOUT = 124, /* as GNU timeout */
    EXIT_SIGINT = 130,  /* 128 + the signal, as a shell reports it */
    EXIT_SIGTERM = 143
};

#define MAX_TIMEOUT_S 1e9 /* about 31 years */

static const char USAGE[] =
    "usage: kernbench [options] [script.lua [args...]]\n"
    "       kernbench [options] run BENCH      (a name or index from 'kernbench list', or a file)\n"
    "       kernbench [options] BENCH.lua      (a file returning {name, description, run})\n"
    "       kernbench [options] probe [--case NAME] [--json] [--topology T] [--set K=V]\n"
    "       kernbench list [--verbose] [DIR]\n"
    "       kernbench help BENCH\n"
    "       kernbench [-t T] [--set K=V] web [--port N] [--no-open] [--stats FILE]\n"
    "       kernbench [-t T] [--set K=V] draw [--view system|sip|cube|pe] [--sip N] [--cube N] [--pe N]\n"
    "                 [--format svg|png|dot] [--stats FILE] [--route SRC DST] [-o FILE]\n"
    "       kernbench [-j N] sweep FILE [--out DIR] [--resume] [--retry-failed] [--dry-run]\n"
    "                 [--backend local|parallel|slurm]\n"
    "\n"
    "Runs a Lua script against the kernbench simulator, or starts an interactive\n"
    "Lua REPL when no script or -e is given. The globals `sim` (event core) and\n"
    "`kb` (kernbench library) are preloaded; the script's arguments are in `arg`\n"
    "and `...`, as with the lua interpreter.\n"
    "\n"
    "subcommands:\n"
    "  probe          fabric traffic-pattern checks on a topology (see\n"
    "                 'kernbench probe --help')\n"
    "  run BENCH      run a bench: its name or index from 'kernbench list', its\n"
    "                 file name (deploy_roundtrip) or a path (BENCH.lua)\n"
    "  list [--verbose] [DIR]  list the benches under DIR (default: the shipped\n"
    "                 benches); --verbose adds their files and parameters\n"
    "  help BENCH     a bench's description, file and parameters\n"
    "  web            serve the topology as an interactive page on 127.0.0.1\n"
    "                 (see 'kernbench web --help')\n"
    "  draw           the topology as a Graphviz diagram (SVG, PNG or DOT) at\n"
    "                 the system, sip, cube or pe level (see 'kernbench draw --help')\n"
    "  sweep FILE     run a parameter sweep (sweeps/*.lua): each point a kernbench\n"
    "                 process, journaled, resumable; results.csv, results.json,\n"
    "                 plots (see 'kernbench sweep --help', docs/sweeps.md)\n"
    "\n"
    "options:\n"
    "  -t, --topology T  the topology kb.topology.load() loads by default: a\n"
    "                 file, or the name of a shipped one (default: default)\n"
    "  --set KEY=VALUE   override one topology field, e.g.\n"
    "                 --set cube.links.router_link_bw_gbs=128 (repeatable)\n"
    "  --profile NAME  lay a profile over the topology: 'original' (the\n"
    "                 original system's mechanisms and parameters) or\n"
    "                 'default'; the same as --set profile=NAME\n"
    "                 (docs/fidelity.md)\n"
    "  --ccl FILE     the collectives' configuration (ccl.yaml) to use instead of\n"
    "                 the one beside the bench, in the working directory or\n"
    "                 shipped (docs/ccl.md)\n"
    "  -e CODE        run the Lua code CODE (repeatable, before the script)\n"
    "  --require MODULE  require the Lua module MODULE first (repeatable), e.g.\n"
    "                 one that registers components with kb.components.register\n"
    "  -i             enter the REPL after running the script or -e code\n"
    "  --stats        print events, simulated time, wall time and events/s of\n"
    "                 every simulation when it is closed (on stderr)\n"
    "  --trace FILE   write a timeline of every simulation with a topology to\n"
    "                 FILE (Chrome trace JSON: open in ui.perfetto.dev)\n"
    "  --trace-flows  add flow arrows linking the hops of each transaction\n"
    "  --trace-counters  add link and HBM pseudo-channel utilisation counters\n"
    "  --trace-counter-ns N  width of one counter sample (default 10 ns)\n"
    "  --trace-filter GLOB   trace only components whose id matches GLOB, e.g.\n"
    "                 'sip0.cube0.*' (repeatable; default: all)\n"
    "  --trace-window START_NS:END_NS  trace only events overlapping the window\n"
    "                 (either end may be empty)\n"
    "  --stats-json FILE  write the statistics of every simulation to FILE\n"
    "  --op-log FILE  write one JSON line per operation (op log) to FILE\n"
    "  --dump-config FILE  write every topology parameter used, with its source,\n"
    "                 to FILE (YAML)\n"
    "                 (output files are written beside their target as\n"
    "                 .NAME.partial.PID and renamed when complete)\n"
    "  --timeout SECONDS  stop the run after SECONDS of wall clock (exit 124)\n"
    "  --until NS     stop each simulation when its clock would pass NS ns of\n"
    "                 simulated time (exit 3)\n"
    "  --max-events N stop each simulation after N events (exit 4)\n"
    "                 (a stopped run writes its outputs marked truncated)\n"
    "  -q, --quiet    no summary after a script or probe run\n"
    "  --ipcq-trace   print a line on stderr per PE-to-PE queue message sent\n"
    "                 and received: rank, time, direction, bytes (docs/ipcq.md)\n"
    "  -j, --jobs N   worker processes a bench may run at once (kb.jobs; default:\n"
    "                 the core count), e.g. milestone-ccl's points\n"
    "  --param KEY=VALUE  set a parameter of the bench (repeatable; before the\n"
    "                 bench; 'kernbench help BENCH' lists them)\n"
    "  --results-json FILE  write what the bench returned, its parameters,\n"
    "                 topology, simulated time, events and verification to\n"
    "                 FILE (JSON; schema in docs/cli.md)\n"
    "  --device D     for benches: all (default) or sip:N, the SIP that\n"
    "                 torch.ahbm.current_device() starts on\n"
    "  --data         data mode: kernels compute real values (tl.load data can\n"
    "                 be read, dot and math results are computed); timing is\n"
    "                 the same as without (may also follow a bench file)\n"
    "  --verify-data  data mode, and benches compare their outputs with a CPU\n"
    "                 reference: a mismatch fails the run (may follow a bench file)\n"
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
    "  KERNBENCH_PROGRESS 1: always show the progress line (also when stderr\n"
    "                     is not a terminal), 0: never (default: on a terminal,\n"
    "                     after 1 s, unless --quiet)\n"
    "  KERNBENCH_CCL_TRACE 1: as --ipcq-trace\n"
    "\n"
    "exit status: 0 success, 1 script, model or bench error (or an output not\n"
    "  written), 2 usage error (unknown option, bad value, a --set or topology\n"
    "  that cannot be loaded, unknown bench, subcommand or parameter, a missing\n"
    "  script, an output path that cannot be written), 3 --until\n"
    "  reached, 4 --max-events reached, 124 --timeout reached, 130 SIGINT\n"
    "  (Ctrl-C; a second one ends the process at once), 143 SIGTERM\n";

typedef struct options {
    const char **code; /* -e chunks, in order */
    int ncode;
    const char **requires; /* --require modules, in order */
    int nrequires;
    const char *topology;
    const char **sets; /* --set assignments, in order */
    const char *profile; /* --profile NAME */
    int nsets;
    const char **params; /* --param assignments, in order */
    int nparams;
    const char *device; /* --device all|sip:N */
    const char *data;   /* --data: "data", --verify-data: "verify" */
    const char *ccl;    /* --ccl FILE */
    int jobs;           /* -j, --jobs: 1 .. 1024; 0: not given */
    bool interactive;
    bool stats;
    bool ipcq_trace;
    int script; /* index in argv of the script, 0 if none */
    kb_outputs out;
    double timeout_s;   /* --timeout, 0: none */
    kb_time until_ps;   /* --until, 0: none */
    uint64_t max_events; /* --max-events, 0: none */
    unsigned seen;      /* single-valued options given so far (bits) */
} options;

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kernbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n");
    return EXIT_USAGE;
}

/* "START:END" in ns, either side may be empty. */
static bool parse_window(const char *s, kb_trace_opts *t)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return false;
    char *end;
    if (colon != s) {
        double a = strtod(s, &end);
        if (end != colon || !(a >= 0))
            return false;
        t->win_start = llround(a * 1000.0);
    }
    if (colon[1]) {
        double b = strtod(colon + 1, &end);
        if (*end || !(b >= 0))
            return false;
        t->win_end = llround(b * 1000.0);
    }
    return t->win_end >= t->win_start;
}

/* Whether argv[*i] is option `name` (`--opt VALUE` or `--opt=VALUE`); its
 * value goes to *v (NULL if missing). */
static bool take_opt(int argc, char **argv, int *i, const char *name, const char **v)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return false;
    *v = a[n] == '=' ? a + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    return true;
}

/* A decimal number without sign or exponent: digits, at most one '.'
 * and `max_frac` digits after it. */
static bool plain_decimal(const char *s, int max_frac)
{
    const char *dot = strchr(s, '.');
    size_t n = strlen(s);
    if (n == 0 || strspn(s, "0123456789.") != n || (dot && strchr(dot + 1, '.')))
        return false;
    if (dot && ((int)strlen(dot + 1) > max_frac || (dot == s && !dot[1])))
        return false;
    return true;
}

/* --timeout: seconds of wall clock, > 0 and at most MAX_TIMEOUT_S. */
static bool parse_seconds(const char *s, double *out)
{
    if (!plain_decimal(s, 6))
        return false;
    double v = strtod(s, NULL);
    if (!(v > 0) || v > MAX_TIMEOUT_S)
        return false;
    *out = v;
    return true;
}

/* --until: ns with at most 3 decimals (1 ps), > 0, in range, exactly. */
static bool parse_ns(const char *s, kb_time *out)
{
    if (!plain_decimal(s, 3))
        return false;
    kb_time ps = 0;
    const char *p = s;
    for (; *p && *p != '.'; p++) {
        if (ps > (KB_TIME_MAX - (*p - '0')) / 10)
            return false;
        ps = ps * 10 + (*p - '0');
    }
    if (ps > KB_TIME_MAX / KB_PS_PER_NS)
        return false;
    ps *= KB_PS_PER_NS;
    kb_time frac = 0, scale = 100;
    for (p = *p ? p + 1 : p; *p; p++, scale /= 10)
        frac += (*p - '0') * scale;
    if (frac > KB_TIME_MAX - ps || ps + frac == 0)
        return false;
    *out = ps + frac;
    return true;
}

/* --max-events: a whole number >= 1 that fits 64 bits. */
static bool parse_count(const char *s, uint64_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || strspn(s, "0123456789") != n)
        return false;
    uint64_t v = 0;
    for (; *s; s++) {
        if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    if (v == 0)
        return false;
    *out = v;
    return true;
}

/* Options that name a file or take a value; -1 to go on, else an exit status. */
static int parse_valued_option(int argc, char **argv, int *i, options *o, bool *taken)
{
    static const char *const names[] = {"--trace", "--stats-json", "--op-log", "--dump-config",
                                        "--trace-window", "--trace-counter-ns", "--timeout", "--until",
                                        "--max-events", "--results-json", "--trace-filter"};
    enum { NNAMES = sizeof names / sizeof *names, REPEATABLE = NNAMES - 1 };
    kb_outputs *out = &o->out;
    const char *v = NULL;
    int which = -1;
    for (int k = 0; k < NNAMES && which < 0; k++)
        if (take_opt(argc, argv, i, names[k], &v))
            which = k;
    *taken = which >= 0;
    if (which < 0)
        return -1;
    if (!v || !*v)
        return usage_error("option '%s' needs an argument", names[which]);
    if (which != REPEATABLE) { /* a second value would silently replace the first */
        if (o->seen & (1u << which))
            return usage_error("option '%s' given twice", names[which]);
        o->seen |= 1u << which;
    }
    switch (which) {
    case 0: out->trace_path = v; break;
    case 1: out->stats_json = v; break;
    case 2: out->op_log = v; break;
    case 3: out->dump_config = v; break;
    case 4:
        if (!parse_window(v, &out->trace))
            return usage_error("--trace-window '%s': expected START_NS:END_NS with 0 <= START <= END", v);
        break;
    case 5: {
        char *end;
        double ns = strtod(v, &end);
        if (*end || !(ns > 0) || ns > 1e12)
            return usage_error("--trace-counter-ns '%s': expected a positive number of ns", v);
        out->trace.counter_window_ps = llround(ns * 1000.0) > 0 ? llround(ns * 1000.0) : 1;
        out->counter_window_set = true;
        break;
    }
    case 6:
        if (!parse_seconds(v, &o->timeout_s))
            return usage_error("--timeout '%s': expected a number of seconds > 0 and <= 1000000000 "
                               "(decimal, e.g. 30 or 0.5)", v);
        break;
    case 7:
        if (!parse_ns(v, &o->until_ps))
            return usage_error("--until '%s': expected a simulated time in ns > 0 and <= "
                               "9223372036854775.807, with at most 3 decimals (1 ps)", v);
        break;
    case 8:
        if (!parse_count(v, &o->max_events))
            return usage_error("--max-events '%s': expected a whole number of events >= 1 and <= "
                               "18446744073709551615", v);
        break;
    case 9: out->results_json = v; break;
    default: out->filters[out->trace.nfilters++] = v;
    }
    return -1;
}

/* Returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, options *o)
{
    o->code = calloc((size_t)argc, sizeof *o->code);
    o->requires = calloc((size_t)argc, sizeof *o->requires);
    o->sets = calloc((size_t)argc, sizeof *o->sets);
    o->params = calloc((size_t)argc, sizeof *o->params);
    o->out.filters = calloc((size_t)argc, sizeof *o->out.filters);
    if (!o->code || !o->requires || !o->sets || !o->params || !o->out.filters)
        return EXIT_ERROR;
    o->out.trace.filters = o->out.filters;
    o->out.trace.win_end = KB_TIME_MAX;
    o->out.trace.counter_window_ps = 10000;
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
        bool taken;
        int st = parse_valued_option(argc, argv, &i, o, &taken);
        if (st >= 0)
            return st;
        if (taken)
            continue;
        const char *dv = NULL;
        if (take_opt(argc, argv, &i, "--require", &dv)) {
            if (!dv || !*dv)
                return usage_error("option '%s' needs a module name", "--require");
            o->requires[o->nrequires++] = dv;
            continue;
        }
        if (take_opt(argc, argv, &i, "--param", &dv)) {
            if (!dv || !strchr(dv, '=') || *dv == '=')
                return usage_error("option '%s' needs KEY=VALUE", "--param");
            o->params[o->nparams++] = dv;
            continue;
        }
        if (take_opt(argc, argv, &i, "--ccl", &dv)) {
            if (!dv || !*dv)
                return usage_error("option '%s' needs a ccl.yaml file", "--ccl");
            if (o->ccl)
                return usage_error("option '%s' given twice", "--ccl");
            o->ccl = dv;
            continue;
        }
        if (take_opt(argc, argv, &i, "--device", &dv)) {
            if (!dv || !*dv)
                return usage_error("option '%s' needs all or sip:N", "--device");
            o->device = dv;
            continue;
        }
        if (strcmp(a, "--trace-flows") == 0)
            o->out.trace.flows = true;
        else if (strcmp(a, "--trace-counters") == 0)
            o->out.trace.counters = true;
        else if (strcmp(a, "--data") == 0)
            o->data = o->data ? o->data : "data";
        else if (strcmp(a, "--verify-data") == 0)
            o->data = "verify";
        else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
            o->out.quiet = true;
        else if (strcmp(a, "-i") == 0)
            o->interactive = true;
        else if (strcmp(a, "--stats") == 0)
            o->stats = true;
        else if (strcmp(a, "--ipcq-trace") == 0)
            o->ipcq_trace = true;
        else if (strcmp(a, "-t") == 0 || strcmp(a, "--topology") == 0) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs a topology file or name", a);
            o->topology = argv[++i];
        } else if (strncmp(a, "--topology=", 11) == 0)
            o->topology = a + 11;
        else if (strcmp(a, "--profile") == 0 || strncmp(a, "--profile=", 10) == 0) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v || strchr(v, '='))
                return usage_error("option '%s' needs a profile name (default, original) or file", "--profile");
            o->profile = v;
        } else if (strcmp(a, "--set") == 0 || strncmp(a, "--set=", 6) == 0) {
            const char *kv = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!kv || !strchr(kv, '='))
                return usage_error("option '%s' needs KEY.PATH=VALUE", "--set");
            o->sets[o->nsets++] = kv;
        }
        else if (strncmp(a, "-j", 2) == 0 || strcmp(a, "--jobs") == 0 || strncmp(a, "--jobs=", 7) == 0) {
            const char *n = a[1] == 'j' ? (a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL))
                                        : (a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL));
            char *end = NULL;
            long v = n ? strtol(n, &end, 10) : 0;
            if (!n || !*n || *end || v < 1 || v > 1024 || !(*n >= '0' && *n <= '9'))
                return usage_error("option -j/--jobs needs a number of processes from 1 to 1024, got '%s'",
                                   n ? n : "");
            if (o->jobs)
                return usage_error("option '%s' given twice", "-j/--jobs");
            o->jobs = (int)v;
        } else if (strncmp(a, "-e", 2) == 0) {
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

/* require(name), as --require does before anything else runs. */
static int run_require(lua_State *L, kb_session *session, const char *name)
{
    lua_getglobal(L, "require");
    lua_pushstring(L, name);
    return kb_exec_report(L, kb_exec_call(L, session, 1, 0));
}

static int run_code(lua_State *L, kb_session *session, const char *code)
{
    int status = luaL_loadbuffer(L, code, strlen(code), "=(command line)");
    if (status == LUA_OK)
        status = kb_exec_call(L, session, 0, 0);
    return kb_exec_report(L, status);
}

/* A --topology that names nothing is a usage error before anything runs,
 * whether or not the script loads a topology. */
static bool topology_exists(lua_State *L, const char *topology)
{
    static const char code[] = "local name = ... return kb.topology.find(name)";
    if (!topology || luaL_loadbuffer(L, code, sizeof code - 1, "=(topology)") != LUA_OK) {
        lua_pop(L, topology ? 1 : 0);
        return true;
    }
    lua_pushstring(L, topology);
    if (lua_pcall(L, 1, 0, 0) == LUA_OK)
        return true;
    const char *msg = lua_tostring(L, -1);
    fprintf(stderr, "kernbench: --topology %s: %s\nusage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n",
            topology, msg ? msg : "not found");
    lua_pop(L, 1);
    return false;
}

/* A --ccl that names no file is a usage error before anything runs, as a
 * --topology is; what is wrong inside the file is said when it is read. */
static bool ccl_exists(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) == 0)
        return true;
    fprintf(stderr, "kernbench: --ccl %s: %s (expected a ccl.yaml file: docs/ccl.md)\n"
                    "usage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n",
            path, strerror(errno));
    return false;
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
static char *resolve_bench(lua_State *L, kb_session *session, const char *name, int *status)
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
static char *take_kb_string(lua_State *L, const char *field)
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
static int run_script(lua_State *L, kb_session *session, int argc, char **argv, int script,
                      bool require_bench, int *exit_status)
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

/* Hands --topology and --set to kb.topology's defaults. */
static int set_topology_defaults(lua_State *L, const options *o)
{
    lua_getglobal(L, "kb");
    if (!lua_istable(L, -1)) {
        lua_pop(L, 1);
        return LUA_OK;
    }
    lua_getfield(L, -1, "topology");
    if (!lua_istable(L, -1)) {
        /* A replaced Lua library without kb.topology: fine unless the user asked for one. */
        lua_pop(L, 2);
        if (o->topology || o->nsets > 0 || o->profile) {
            fprintf(stderr, "kernbench: --topology/--set/--profile given but this Lua library has no "
                            "kb.topology module\n");
            return LUA_ERRRUN;
        }
        return LUA_OK;
    }
    if (o->topology) {
        lua_pushstring(L, o->topology);
        lua_setfield(L, -2, "default_path");
    }
    lua_createtable(L, o->nsets + 1, 0);
    int k = 0;
    if (o->profile) { /* an override like any (src/topo/topo.c applies it before the others) */
        lua_pushfstring(L, "profile=%s", o->profile);
        lua_rawseti(L, -2, ++k);
    }
    for (int i = 0; i < o->nsets; i++) {
        lua_pushstring(L, o->sets[i]);
        lua_rawseti(L, -2, ++k);
    }
    lua_setfield(L, -2, "default_overrides");
    lua_pop(L, 1);
    if (o->device) { /* for benches: kernbench.bench reads kb.device */
        lua_pushstring(L, o->device);
        lua_setfield(L, -2, "device");
    }
    if (o->data) { /* for runtimes: kernbench.torch reads kb.data_mode */
        lua_pushstring(L, o->data);
        lua_setfield(L, -2, "data_mode");
    }
    if (o->jobs > 0) { /* for benches that run worker processes (kernbench.procpool) */
        lua_pushinteger(L, o->jobs);
        lua_setfield(L, -2, "jobs");
    }
    if (o->ccl) { /* for collectives: kernbench.ccl.config reads kb.ccl_path */
        lua_pushstring(L, o->ccl);
        lua_setfield(L, -2, "ccl_path");
    }
    lua_createtable(L, o->nparams, 0); /* for benches: kernbench.bench reads kb.params */
    for (int i = 0; i < o->nparams; i++) {
        lua_pushstring(L, o->params[i]);
        lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -2, "params");
    lua_pushboolean(L, o->out.results_json != NULL);
    lua_setfield(L, -2, "results_requested");
    lua_pop(L, 1);
    return LUA_OK;
}

/* `kernbench probe|list|help ...`: the Lua function module.fn(args) returns the exit status. */
static int run_subcommand(lua_State *L, kb_session *session, const char *module, const char *fn, int argc,
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
            *exit_status = lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : EXIT_OK;
            lua_pop(L, 1);
        }
    }
    return kb_exec_report(L, status);
}

/* KERNBENCH_CCL_TRACE=1 is --ipcq-trace (the original's variable). */
static bool ccl_trace_env(void)
{
    const char *v = getenv("KERNBENCH_CCL_TRACE");
    if (!v || !*v || strcmp(v, "0") == 0)
        return false;
    if (strcmp(v, "1") != 0)
        fprintf(stderr, "kernbench: KERNBENCH_CCL_TRACE='%s': expected 1 (on) or 0 (off); taken as on\n", v);
    return true;
}

static void free_options(options *o)
{
    free(o->code);
    free(o->requires);
    free(o->sets);
    free(o->params);
    free(o->out.filters);
}

int main(int argc, char **argv)
{
    /* A write past a file-size limit (ulimit -f) fails with EFBIG and takes
     * the write-error path (a message, exit status 1, no target file)
     * instead of killing the process with SIGXFSZ (docs/reliability.md). */
    signal(SIGXFSZ, SIG_IGN);
    options o = {0};
    int code = parse(argc, argv, &o);
    const kb_trace_opts *to = &o.out.trace;
    if (code < 0 && !o.out.trace_path &&
        (to->flows || to->counters || to->nfilters || to->win_start > 0 || to->win_end != KB_TIME_MAX))
        code = usage_error("%s", "--trace-flows, --trace-counters, --trace-filter and "
                                 "--trace-window need --trace FILE");
    if (code < 0 && o.out.counter_window_set && !to->counters)
        code = usage_error("%s", "--trace-counter-ns needs --trace-counters");
    if (code >= 0) {
        free_options(&o);
        return code;
    }

    char err[1024];
    char *lua_dir = kb_find_lua_dir(argv[0], err, sizeof err);
    if (!lua_dir) {
        fprintf(stderr, "kernbench: %s\n", err);
        free_options(&o);
        return EXIT_ERROR;
    }
    kb_session session = {.print_stats = o.stats, .keep_requests = o.out.stats_json != NULL,
                          .ipcq_trace = o.ipcq_trace || ccl_trace_env()};
    session.ctl.until = o.until_ps;
    session.ctl.max_events = o.max_events;
    kb_exec_signals(&session); /* from here a signal stops the run and keeps its outputs */
    /* Output paths first: a bad one is a usage error before anything runs. */
    if (!kb_outputs_open(&session, &o.out, err, sizeof err)) {
        free(lua_dir);
        free_options(&o);
        return usage_error("%s", err);
    }
    if (o.timeout_s > 0)
        kb_exec_timeout(o.timeout_s);
    lua_State *L = kb_lua_open(&session, lua_dir, err, sizeof err);
    free(lua_dir);
    if (!L) {
        fprintf(stderr, "kernbench: %s\n", err);
        kb_outputs_abort(&session, &o.out);
        free_options(&o);
        return EXIT_ERROR;
    }
    kb_session_track_coroutines(L);
    kb_web_preload(L); /* kernbench.httpd, for kernbench web */
    kb_progress progress; /* the progress line on a terminal (docs/cli.md "Progress") */
    kb_progress_start(&progress, &session, L, o.out.quiet);

    int status = set_topology_defaults(L, &o);
    int exit_status = EXIT_OK;
    const char *sub = o.script ? argv[o.script] : "";
    bool probe = strcmp(sub, "probe") == 0, list = strcmp(sub, "list") == 0;
    bool help = strcmp(sub, "help") == 0, run = strcmp(sub, "run") == 0;
    bool web = strcmp(sub, "web") == 0; /* docs/web.md */
    bool draw = strcmp(sub, "draw") == 0; /* docs/draw.md */
    bool sweep = strcmp(sub, "sweep") == 0; /* docs/sweeps.md */
    bool usage = status == LUA_OK && (!topology_exists(L, o.topology) || !ccl_exists(o.ccl));
    char *bench_path = NULL;
    if (!usage && (o.nparams > 0 || o.out.results_json) && (!o.script || probe || list || help || web || draw || sweep)) {
        usage_error("%s", "--param and --results-json need a bench: kernbench [options] run BENCH");
        usage = true;
    }
    if (!usage && run && o.script + 1 >= argc) {
        fprintf(stderr, "kernbench: run: which bench? (kernbench run NAME: 'kernbench list' shows the names)\n");
        usage = true;
    }
    if (!usage && run && status == LUA_OK) {
        bench_path = resolve_bench(L, &session, argv[o.script + 1], &status);
        if (bench_path)
            argv[o.script + 1] = bench_path; /* arg[0] is the bench's file */
        usage = status == KB_EXEC_USAGE;
    }
    if (usage) {
        kb_lua_close(L);
        kb_outputs_abort(&session, &o.out);
        free_options(&o);
        return EXIT_USAGE;
    }
    make_arg_table(L, argc, argv, run ? o.script + 1 : o.script);
#define GOING_ON (status == LUA_OK && !session.ctl.stop)
    for (int i = 0; i < o.nrequires && GOING_ON; i++)
        status = run_require(L, &session, o.requires[i]);
    for (int i = 0; i < o.ncode && GOING_ON; i++)
        status = run_code(L, &session, o.code[i]);
    if (GOING_ON && web)
        status = run_subcommand(L, &session, "kernbench.web", "main", argc, argv, o.script + 1, &exit_status);
    else if (GOING_ON && draw)
        status = run_subcommand(L, &session, "kernbench.draw", "main", argc, argv, o.script + 1, &exit_status);
    else if (GOING_ON && sweep)
        status = run_subcommand(L, &session, "kernbench.sweep", "main", argc, argv, o.script + 1, &exit_status);
    else if (GOING_ON && (probe || list || help))
        status = run_subcommand(L, &session, probe ? "kernbench.probe" : "kernbench.bench_find",
                                probe ? "main" : list ? "list_main" : "help_main", argc, argv, o.script + 1,
                                &exit_status);
    else if (GOING_ON && o.script)
        status = run_script(L, &session, argc, argv, run ? o.script + 1 : o.script, run, &exit_status);
    kb_progress_end(&progress); /* no line in the REPL, the summary or the messages at exit */
    if (GOING_ON && (o.interactive || (!o.script && o.ncode == 0)))
        kb_repl(L, &session);
#undef GOING_ON
    /* What the outputs say is decided here: a stop that comes later finds
     * the run complete (it still sets the exit status). */
    kb_exec_timeout(0);
    int stopped = session.ctl.stop;
    if (status == KB_EXEC_USAGE && !stopped) {
        /* a user's mistake found while running (a --set, a bench parameter):
         * reported by kb_exec_report; no output is written */
        kb_lua_close(L);
        free(bench_path);
        kb_outputs_abort(&session, &o.out);
        free_options(&o);
        return EXIT_USAGE;
    }

    fflush(stdout);
    o.out.results = take_kb_string(L, "results_document");
    o.out.summary_note = take_kb_string(L, "summary_note");
    kb_lua_close(L); /* closes the simulations still open (and reports them) */
    free(bench_path);
    /* A failed run has said why; no summary after it. */
    bool failed = status != LUA_OK || exit_status != EXIT_OK;
    bool written = kb_outputs_finish(&session, &o.out, o.script != 0 && !failed, stopped, failed);
    free(o.out.summary_note);
    bool marked = o.out.trace_path || o.out.stats_json || o.out.op_log;
    free_options(&o);
    if (stopped) {
        char *why = kb_stop_text(&session, stopped);
        fprintf(stderr, "kernbench: %s%s\n", why, marked ? "; the trace, statistics and op log written say so" : "");
        free(why);
    }
    if (!written)
        return EXIT_ERROR;
    switch (stopped ? stopped : session.ctl.stop) {
    case KB_STOP_SIGINT: return EXIT_SIGINT;
    case KB_STOP_SIGTERM: return EXIT_SIGTERM;
    case KB_STOP_TIMEOUT: return EXIT_TIMEOUT;
    case KB_STOP_UNTIL: return EXIT_UNTIL;
    case KB_STOP_EVENTS: return EXIT_MAX_EVENTS;
    default: break;
    }
    return status != LUA_OK ? EXIT_ERROR : exit_status;
}
