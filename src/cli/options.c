/* Parsing the command line's options (options.h). */
#include "cli/options.h"

#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TIMEOUT_S 1e9 /* about 31 years */

int kb_cli_usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "kernbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: kernbench [options] [script.lua [args...]]\n"
                    "run 'kernbench --help' for the options\n");
    return KB_EXIT_USAGE;
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
static int parse_valued_option(int argc, char **argv, int *i, kb_cli_options *o, bool *taken)
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
        return kb_cli_usage_error("option '%s' needs an argument", names[which]);
    if (which != REPEATABLE) { /* a second value would silently replace the first */
        if (o->seen & (1u << which))
            return kb_cli_usage_error("option '%s' given twice", names[which]);
        o->seen |= 1u << which;
    }
    switch (which) {
    case 0: out->trace_path = v; break;
    case 1: out->stats_json = v; break;
    case 2: out->op_log = v; break;
    case 3: out->dump_config = v; break;
    case 4:
        if (!parse_window(v, &out->trace))
            return kb_cli_usage_error("--trace-window '%s': expected START_NS:END_NS with 0 <= START <= END", v);
        break;
    case 5: {
        char *end;
        double ns = strtod(v, &end);
        if (*end || !(ns > 0) || ns > 1e12)
            return kb_cli_usage_error("--trace-counter-ns '%s': expected a positive number of ns", v);
        out->trace.counter_window_ps = llround(ns * 1000.0) > 0 ? llround(ns * 1000.0) : 1;
        out->counter_window_set = true;
        break;
    }
    case 6:
        if (!parse_seconds(v, &o->timeout_s))
            return kb_cli_usage_error("--timeout '%s': expected a number of seconds > 0 and <= 1000000000 "
                               "(decimal, e.g. 30 or 0.5)", v);
        break;
    case 7:
        if (!parse_ns(v, &o->until_ps))
            return kb_cli_usage_error("--until '%s': expected a simulated time in ns > 0 and <= "
                               "9223372036854775.807, with at most 3 decimals (1 ps)", v);
        break;
    case 8:
        if (!parse_count(v, &o->max_events))
            return kb_cli_usage_error("--max-events '%s': expected a whole number of events >= 1 and <= "
                               "18446744073709551615", v);
        break;
    case 9: out->results_json = v; break;
    default: out->filters[out->trace.nfilters++] = v;
    }
    return -1;
}

/* Returns -1 to go on, or an exit status. */
static int parse(int argc, char **argv, kb_cli_options *o)
{
    o->code = calloc((size_t)argc, sizeof *o->code);
    o->requires = calloc((size_t)argc, sizeof *o->requires);
    o->sets = calloc((size_t)argc, sizeof *o->sets);
    o->params = calloc((size_t)argc, sizeof *o->params);
    o->out.filters = calloc((size_t)argc, sizeof *o->out.filters);
    if (!o->code || !o->requires || !o->sets || !o->params || !o->out.filters)
        return KB_EXIT_ERROR;
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
            fputs(kb_cli_usage, stdout);
            return KB_EXIT_OK;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
            printf("kernbench %s (%s)\n", KB_VERSION, LUA_RELEASE);
            return KB_EXIT_OK;
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
                return kb_cli_usage_error("option '%s' needs a module name", "--require");
            o->requires[o->nrequires++] = dv;
            continue;
        }
        if (take_opt(argc, argv, &i, "--param", &dv)) {
            if (!dv || !strchr(dv, '=') || *dv == '=')
                return kb_cli_usage_error("option '%s' needs KEY=VALUE", "--param");
            o->params[o->nparams++] = dv;
            continue;
        }
        if (take_opt(argc, argv, &i, "--ccl", &dv)) {
            if (!dv || !*dv)
                return kb_cli_usage_error("option '%s' needs a ccl.yaml file", "--ccl");
            if (o->ccl)
                return kb_cli_usage_error("option '%s' given twice", "--ccl");
            o->ccl = dv;
            continue;
        }
        if (take_opt(argc, argv, &i, "--device", &dv)) {
            if (!dv || !*dv)
                return kb_cli_usage_error("option '%s' needs all or sip:N", "--device");
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
                return kb_cli_usage_error("option '%s' needs a topology file or name", a);
            o->topology = argv[++i];
        } else if (strncmp(a, "--topology=", 11) == 0)
            o->topology = a + 11;
        else if (strcmp(a, "--profile") == 0 || strncmp(a, "--profile=", 10) == 0) {
            const char *v = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v || strchr(v, '='))
                return kb_cli_usage_error("option '%s' needs a profile name (default, original) or file", "--profile");
            o->profile = v;
        } else if (strcmp(a, "--set") == 0 || strncmp(a, "--set=", 6) == 0) {
            const char *kv = a[5] == '=' ? a + 6 : (i + 1 < argc ? argv[++i] : NULL);
            if (!kv || !strchr(kv, '='))
                return kb_cli_usage_error("option '%s' needs KEY.PATH=VALUE", "--set");
            o->sets[o->nsets++] = kv;
        }
        else if (strncmp(a, "-j", 2) == 0 || strcmp(a, "--jobs") == 0 || strncmp(a, "--jobs=", 7) == 0) {
            const char *n = a[1] == 'j' ? (a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL))
                                        : (a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL));
            char *end = NULL;
            long v = n ? strtol(n, &end, 10) : 0;
            if (!n || !*n || *end || v < 1 || v > 1024 || !(*n >= '0' && *n <= '9'))
                return kb_cli_usage_error("option -j/--jobs needs a number of processes from 1 to 1024, got '%s'",
                                   n ? n : "");
            if (o->jobs)
                return kb_cli_usage_error("option '%s' given twice", "-j/--jobs");
            o->jobs = (int)v;
        } else if (strncmp(a, "-e", 2) == 0) {
            const char *code = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : NULL);
            if (!code)
                return kb_cli_usage_error("option '%s' needs an argument", "-e");
            o->code[o->ncode++] = code;
        } else
            return kb_cli_usage_error("unknown option '%s'", a);
    }
    return -1;
}

int kb_cli_parse(int argc, char **argv, kb_cli_options *o)
{
    int code = parse(argc, argv, o);
    const kb_trace_opts *to = &o->out.trace;
    if (code < 0 && !o->out.trace_path &&
        (to->flows || to->counters || to->nfilters || to->win_start > 0 || to->win_end != KB_TIME_MAX))
        code = kb_cli_usage_error("%s", "--trace-flows, --trace-counters, --trace-filter and "
                                        "--trace-window need --trace FILE");
    if (code < 0 && o->out.counter_window_set && !to->counters)
        code = kb_cli_usage_error("%s", "--trace-counter-ns needs --trace-counters");
    return code;
}

void kb_cli_options_free(kb_cli_options *o)
{
    free(o->code);
    free(o->requires);
    free(o->sets);
    free(o->params);
    free(o->out.filters);
}
