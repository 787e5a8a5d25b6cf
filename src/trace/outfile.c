/* Output files written beside their target and renamed on success (outfile.h). */
#define _GNU_SOURCE /* fopencookie: the stream keeps the first write error's errno */
#include "trace/outfile.h"

#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct kb_outfile {
    FILE *f;
    int fd;
    int write_errno; /* the first failed write's errno (stdio forgets it) */
    char *path;   /* as given, for messages */
    char *target; /* what the rename replaces (symbolic links resolved) */
    char *temp;   /* the file being written; == target when written directly */
    char *dir;    /* the target's directory (atomic outputs only) */
    char *what;
    bool direct;
    bool existed;     /* the target existed when opened: identity by inode */
    dev_t dev;
    ino_t ino;
    char *canonical;  /* a new target: canonical directory + "/" + name */
};

static void *fail(char **err, const char *what, const char *path, const char *why)
{
    *err = kb_asprintf("%s %s: %s", what, path, why);
    return NULL;
}

/* The directory part of p ("." when p has none) and the name part. */
static void split(const char *p, char **dir, char **base)
{
    const char *slash = strrchr(p, '/');
    if (!slash) {
        *dir = kb_xstrdup(".");
        *base = kb_xstrdup(p);
    } else {
        *dir = slash == p ? kb_xstrdup("/") : kb_asprintf("%.*s", (int)(slash - p), p);
        *base = kb_xstrdup(slash + 1);
    }
}

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
    kb_outfile *o = c;
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(o->fd, buf + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (!o->write_errno)
                o->write_errno = k < 0 ? errno : EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)k;
    }
    return (ssize_t)done;
}

static int cookie_close(void *c)
{
    kb_outfile *o = c;
    int r = close(o->fd);
    o->fd = -1;
    return r;
}

/* A fully buffered stream on o->fd; false (fd closed) if none. */
static bool open_stream(kb_outfile *o)
{
    cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
    o->f = fopencookie(o, "w", io);
    if (!o->f) {
        close(o->fd);
        o->fd = -1;
        return false;
    }
    setvbuf(o->f, NULL, _IOFBF, 1 << 16);
    return true;
}

static void free_outfile(kb_outfile *o)
{
    free(o->path);
    free(o->target);
    if (o->temp != o->target)
        free(o->temp);
    free(o->dir);
    free(o->what);
    free(o->canonical);
    free(o);
}

/* Creates the temporary file beside the target: ".NAME.partial.PID", with
 * a counter after it if that name is taken (an earlier file of this
 * process, or a killed run's that had the same process id). */
static int create_temp(kb_outfile *o, const char *base, mode_t mode)
{
    for (int k = 1; k < 1000; k++) {
        char *t = k == 1 ? kb_asprintf("%s/.%s.partial.%ld", o->dir, base, (long)getpid())
                         : kb_asprintf("%s/.%s.partial.%ld.%d", o->dir, base, (long)getpid(), k);
        int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0) {
            o->temp = t;
            return fd;
        }
        int e = errno;
        free(t);
        if (e != EEXIST) {
            errno = e;
            return -1;
        }
    }
    errno = EEXIST;
    return -1;
}

/* The target of an existing symbolic link, or NULL with *err. */
static char *resolve_link(const char *what, const char *path, char **err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        char *why = kb_asprintf("a symbolic link to a missing file (%s)", strerror(errno));
        fail(err, what, path, why);
        free(why);
        return NULL;
    }
    char buf[PATH_MAX];
    if (!realpath(path, buf)) {
        fail(err, what, path, strerror(errno));
        return NULL;
    }
    return kb_xstrdup(buf);
}

kb_outfile *kb_outfile_open(const char *path, const char *what, char **err)
{
    if (!path || !*path)
        return fail(err, what, "''", "empty file name");
    char *target = kb_xstrdup(path);
    struct stat st;
    bool exists = lstat(path, &st) == 0;
    if (!exists && errno != ENOENT && errno != ENOTDIR) { /* ENOTDIR: the directory check says which */
        free(target);
        return fail(err, what, path, strerror(errno));
    }
    if (exists && S_ISLNK(st.st_mode)) {
        free(target);
        if (!(target = resolve_link(what, path, err)))
            return NULL;
        stat(target, &st);
    }
    if (exists && S_ISDIR(st.st_mode)) {
        free(target);
        return fail(err, what, path, "is a directory (give a file name)");
    }
    kb_outfile *o = kb_xcalloc(1, sizeof *o);
    o->fd = -1;
    o->path = kb_xstrdup(path);
    o->what = kb_xstrdup(what);
    o->target = target;
    o->existed = exists;
    if (exists) {
        o->dev = st.st_dev;
        o->ino = st.st_ino;
    }
    if (exists && !S_ISREG(st.st_mode)) { /* a device or a FIFO: no rename over it */
        o->direct = true;
        o->temp = o->target;
        o->fd = open(o->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (o->fd < 0 || !open_stream(o)) {
            fail(err, what, path, strerror(errno));
            free_outfile(o);
            return NULL;
        }
        return o;
    }
    if (exists && access(o->target, W_OK) != 0) {
        char *why = kb_asprintf("cannot write the file: %s", strerror(errno));
        fail(err, what, path, why);
        free(why);
        free_outfile(o);
        return NULL;
    }
    char *base;
    split(o->target, &o->dir, &base);
    struct stat ds;
    if (stat(o->dir, &ds) != 0 || !S_ISDIR(ds.st_mode)) {
        int e = errno;
        char *why = stat(o->dir, &ds) == 0 ? kb_asprintf("%s is not a directory", o->dir)
                    : e == ENOENT          ? kb_asprintf("directory %s does not exist", o->dir)
                                           : kb_asprintf("directory %s: %s", o->dir, strerror(e));
        fail(err, what, path, why);
        free(why);
        free(base);
        free_outfile(o);
        return NULL;
    }
    int fd = create_temp(o, base, exists ? (st.st_mode & 07777) : 0666);
    if (fd < 0) {
        char *why = kb_asprintf("cannot create a file in %s: %s", o->dir, strerror(errno));
        fail(err, what, path, why);
        free(why);
        free(base);
        free_outfile(o);
        return NULL;
    }
    if (exists)
        fchmod(fd, st.st_mode & 07777); /* keep the target's mode whatever the umask */
    char canon[PATH_MAX];
    o->canonical = realpath(o->dir, canon) ? kb_asprintf("%s/%s", canon, base) : kb_xstrdup(o->target);
    free(base);
    o->fd = fd;
    if (!open_stream(o)) {
        fail(err, what, path, strerror(errno));
        kb_outfile_abort(o);
        return NULL;
    }
    return o;
}

FILE *kb_outfile_stream(const kb_outfile *o) { return o->f; }
const char *kb_outfile_path(const kb_outfile *o) { return o->path; }
const char *kb_outfile_temp(const kb_outfile *o) { return o->temp; }
const char *kb_outfile_dir(const kb_outfile *o) { return o->direct ? NULL : o->dir; }

bool kb_outfile_same(const kb_outfile *a, const kb_outfile *b)
{
    if (a->direct || b->direct || a->existed != b->existed)
        return false;
    if (a->existed)
        return a->dev == b->dev && a->ino == b->ino;
    return strcmp(a->canonical, b->canonical) == 0;
}

bool kb_outfile_commit(kb_outfile *o, char **err)
{
    fflush(o->f);
    int e = o->write_errno;
    bool failed = e != 0 || ferror(o->f);
    /* A device has nothing to sync (fsync fails with EINVAL on some). */
    if (!failed && !o->direct && fsync(o->fd) != 0) {
        e = errno;
        failed = true;
    }
    if (fclose(o->f) != 0 && !failed) {
        e = errno;
        failed = true;
    }
    o->f = NULL;
    if (!failed && !o->direct && rename(o->temp, o->target) != 0) {
        char *why = kb_asprintf("cannot rename %s to it: %s", o->temp, strerror(errno));
        fail(err, o->what, o->path, why);
        free(why);
        kb_outfile_abort(o);
        return false;
    }
    if (failed) {
        char *why = e ? kb_asprintf("write failed: %s", strerror(e))
                      : kb_xstrdup("write failed (a write returned an error)");
        fail(err, o->what, o->path, why);
        free(why);
        kb_outfile_abort(o);
        return false;
    }
    free_outfile(o);
    return true;
}

void kb_outfile_abort(kb_outfile *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (!o->direct && o->temp)
        unlink(o->temp);
    free_outfile(o);
}
