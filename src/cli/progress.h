/* The progress line (docs/cli.md "Progress"): while a simulation runs, one
 * self-rewriting line on stderr ("\r" text "\033[K", no newline) with the
 * simulated time, the events processed, events/s and the bench's point
 * (kb.progress) with an estimate of the time left.
 *
 * Shown when stderr is a terminal (and TERM is not "dumb") and the command
 * has run for at least a second, redrawn at most 5 times a second, never
 * with --quiet; KERNBENCH_PROGRESS=1 forces it (no delay, every report
 * draws, any stderr), =0 turns it off. The line exists only while a run is
 * under way: the run's last report clears it, and so does every write of
 * Lua code to stdout or stderr (print, io.write, io.stdout:write,
 * io.stderr:write are wrapped while it is enabled) and of the session
 * (kb_session_clear_line). Nothing it does reaches a simulation. */
#ifndef KB_CLI_PROGRESS_H
#define KB_CLI_PROGRESS_H

#include "luasim/session.h"

#include <lua.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define KB_PROGRESS_DELAY_S 1.0    /* nothing before the command has run this long */
#define KB_PROGRESS_INTERVAL_S 0.2 /* at most 5 redraws a second */

typedef struct kb_progress {
    kb_session *session;
    FILE *out;          /* stderr */
    bool on;            /* enabled (between start and end) */
    bool forced;        /* KERNBENCH_PROGRESS=1 */
    bool shown;         /* the line is on the terminal now */
    bool partial;       /* the last write to the terminal left a line unfinished */
    bool stdout_tty;    /* stdout is a terminal too (its writes move the cursor) */
    double start_s;     /* kb_wall_seconds() at start */
    double last_draw_s;
} kb_progress;

typedef enum kb_progress_mode { KB_PROGRESS_AUTO, KB_PROGRESS_FORCED, KB_PROGRESS_OFF } kb_progress_mode;

/* KERNBENCH_PROGRESS's value (NULL: unset): "" auto, "1" forced, "0" off;
 * anything else is *bad (set to true) and means auto. */
kb_progress_mode kb_progress_mode_of(const char *env, bool *bad);

/* Enables the line if the mode, --quiet and stderr allow it: hooks the
 * session's control and clear_line and wraps L's output functions.
 * `p` must outlive L. A bad KERNBENCH_PROGRESS is reported on stderr. */
void kb_progress_start(kb_progress *p, kb_session *session, lua_State *L, bool quiet);
/* Clears the line and unhooks the session; the wrappers left in L pass
 * their calls through. Safe to call twice. */
void kb_progress_end(kb_progress *p);
/* Clears the line if it is shown. */
void kb_progress_clear(kb_progress *p);
/* Whether a report at `now` (kb_wall_seconds) may draw the line: no line
 * of the script's output is unfinished, and the mode is forced or the
 * command has run KB_PROGRESS_DELAY_S and the last draw is
 * KB_PROGRESS_INTERVAL_S old. */
bool kb_progress_due(const kb_progress *p, double now);

/* ---- the text (pure; for tests) ---- */

/* Seconds left before the last of pt's points ends, from the wall time of
 * the points done since pt->first_k: the mean of those times for each
 * point not started yet, plus what remains of the mean for the current
 * one (never < 0). -1 when unknown (no point done yet). */
double kb_progress_eta(const kb_session_point *pt, double now);
/* The line for report r (and pt, if pt->n > 0) at time `now`, cut to
 * `columns` - 1 characters (0: no limit), in buf (size n >= 1): e.g.
 * "sim #1  t=1.234 ms  5242880 events  8.12 M events/s  point 3/24 (M=512) ~ 12 s left";
 * a report of simulation 0 (points run by kernbench.procpool's children,
 * no simulation here) has the point alone: "point 3/24 (M=512) ~ 12 s left".
 * Returns the length. */
size_t kb_progress_format(char *buf, size_t n, const kb_sim_progress *r, const kb_session_point *pt,
                          double now, int columns);
/* A duration in ps as kb.format_ns writes its value in ns: "1.234 ms". */
void kb_progress_format_time(char *buf, size_t n, kb_time ps);

#endif
