/* The command line's options: what `kernbench [options] ...` asked for,
 * parsed like the lua interpreter's (options, then the script and its
 * arguments), and the exit statuses. Reference: docs/cli.md. */
#ifndef KB_CLI_OPTIONS_H
#define KB_CLI_OPTIONS_H

#include "cli/outputs.h"
#include "core/types.h"

#include <stdbool.h>
#include <stdint.h>

/* Exit statuses (docs/cli.md): a run stopped early has its own. */
enum {
    KB_EXIT_OK = 0,
    KB_EXIT_ERROR = 1,
    KB_EXIT_USAGE = 2,
    KB_EXIT_UNTIL = 3,
    KB_EXIT_MAX_EVENTS = 4,
    KB_EXIT_TIMEOUT = 124, /* as GNU timeout */
    KB_EXIT_SIGINT = 130,  /* 128 + the signal, as a shell reports it */
    KB_EXIT_SIGTERM = 143
};

typedef struct kb_cli_options {
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
} kb_cli_options;

/* Parses the options before the script (o zeroed by the caller), with the
 * checks between them (trace options without --trace ...). Returns -1 to
 * go on, or an exit status: --help and --version print and give
 * KB_EXIT_OK, a mistake is reported as kb_cli_usage_error does. */
int kb_cli_parse(int argc, char **argv, kb_cli_options *o);
/* Frees what kb_cli_parse allocated (the strings are argv's). */
void kb_cli_options_free(kb_cli_options *o);

/* Prints "kernbench: " fmt (with arg) and the usage hint on stderr;
 * returns KB_EXIT_USAGE. */
int kb_cli_usage_error(const char *fmt, const char *arg);

/* The text of --help. */
extern const char kb_cli_usage[];

#endif
