/* Runs a command on a pseudo-terminal, as a person at a terminal would,
 * for the REPL tests (tests/cli/repl_cases.sh):
 *
 *   pty_drive SECONDS SCRIPT command [args...]
 *
 * SCRIPT is a file of steps, one a line:
 *   expect TEXT   wait until the output since the last expect contains TEXT
 *   send TEXT     write TEXT to the terminal once the program reads it in
 *                 raw mode (line editing: libedit prints its prompt before it
 *                 leaves canonical mode, which would turn a Ctrl-D typed then
 *                 into a lost end-of-file)
 * (both with the escapes \n \r \t \e \\ \xHH)
 *   pause         let the program settle (50 ms) before the next step
 * Everything the command writes to the terminal goes to stdout. The exit
 * status is the command's (128 + signal if killed); if a step or the
 * command's end takes longer than SECONDS in all, the command is killed and
 * the status is 124, with the step that timed out on stderr. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

static char *seen;   /* everything read so far */
static size_t nseen, capseen, mark;
static int master = -1;
static double deadline;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reads what is available within `ms`; returns 0 at end of output. */
static int pump(int ms)
{
    struct pollfd p = {.fd = master, .events = POLLIN};
    int r = poll(&p, 1, ms);
    if (r <= 0)
        return 1;
    char buf[4096];
    ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0)
        return 0; /* EIO once the child has closed the terminal */
    if (nseen + (size_t)n + 1 > capseen) {
        capseen = (nseen + (size_t)n + 1) * 2;
        seen = realloc(seen, capseen);
        if (!seen)
            exit(2);
    }
    memcpy(seen + nseen, buf, (size_t)n);
    nseen += (size_t)n;
    seen[nseen] = '\0';
    fwrite(buf, 1, (size_t)n, stdout);
    fflush(stdout);
    return 1;
}

static size_t unescape(const char *s, char *out)
{
    size_t n = 0;
    for (; *s; s++) {
        if (*s != '\\' || !s[1]) {
            out[n++] = *s;
            continue;
        }
        s++;
        switch (*s) {
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'e': out[n++] = 27; break;
        case 'x': {
            char hex[3] = {s[1], s[1] ? s[2] : 0, 0};
            out[n++] = (char)strtol(hex, NULL, 16);
            s += s[1] && s[2] ? 2 : (s[1] ? 1 : 0);
            break;
        }
        default: out[n++] = *s;
        }
    }
    return n;
}

/* Waits until the terminal is in non-canonical (raw) mode; 0 on timeout. */
static int wait_raw(void)
{
    struct termios t;
    while (tcgetattr(master, &t) == 0 && (t.c_lflag & ICANON)) {
        if (now_s() > deadline)
            return 0;
        pump(5);
    }
    return 1;
}

static int timed_out(const char *what)
{
    fprintf(stderr, "pty_drive: timed out %s\n", what);
    return 124;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: pty_drive SECONDS SCRIPT command [args...]\n");
        return 2;
    }
    deadline = now_s() + atof(argv[1]);
    FILE *script = fopen(argv[2], "r");
    if (!script) {
        perror(argv[2]);
        return 2;
    }
    struct winsize ws = {.ws_row = 24, .ws_col = 80};
    pid_t pid = forkpty(&master, NULL, NULL, &ws);
    if (pid < 0) {
        perror("forkpty");
        return 2;
    }
    if (pid == 0) {
        execvp(argv[3], argv + 3);
        perror(argv[3]);
        _exit(127);
    }
    int status = 0;
    char line[4096], bytes[4096];
    while (fgets(line, sizeof line, script)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "expect ", 7) == 0) {
            char want[4096];
            want[unescape(line + 7, want)] = '\0';
            char *hit;
            while (!(seen && (hit = strstr(seen + mark, want)))) {
                if (now_s() > deadline) {
                    kill(pid, SIGKILL);
                    waitpid(pid, NULL, 0);
                    fprintf(stderr, "pty_drive: timed out waiting for '%s'\n", want);
                    return 124;
                }
                if (!pump(50)) {
                    fprintf(stderr, "pty_drive: output ended before '%s'\n", want);
                    waitpid(pid, NULL, 0);
                    return 125;
                }
            }
            mark = (size_t)(hit - seen) + strlen(want);
        } else if (strncmp(line, "send ", 5) == 0) {
            size_t n = unescape(line + 5, bytes);
            if (!wait_raw()) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                return timed_out("waiting for the terminal's raw mode");
            }
            if (write(master, bytes, n) != (ssize_t)n) {
                perror("write");
                return 2;
            }
        } else if (strcmp(line, "pause") == 0) {
            for (int i = 0; i < 5; i++)
                pump(10);
        }
    }
    fclose(script);
    for (;;) { /* drain until the command closes the terminal */
        if (now_s() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return timed_out("waiting for the command to end");
        }
        if (!pump(50))
            break;
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    free(seen);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
