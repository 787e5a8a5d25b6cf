/* Reading a topology file: a regular file of at most KB_YDOC_MAX_FILE_BYTES,
 * refused without reading when it is anything else (docs/reliability.md,
 * "Topology files and --set"). */
#include "topo/ydoc_internal.h"

#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_kind(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO (named pipe)";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* Opened without blocking (a FIFO would wait for a writer) and checked
 * before any read (a device such as /dev/zero never ends). */
char *kb_ydoc_read_file(const char *path, size_t *len, char **err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *err = kb_asprintf("%s: cannot open topology file: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *err = kb_asprintf("%s: cannot open topology file: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        *err = kb_asprintf("%s: cannot read topology file: it is %s, not a regular file", path,
                           file_kind(st.st_mode));
        close(fd);
        return NULL;
    }
    if (st.st_size > (off_t)KB_YDOC_MAX_FILE_BYTES) {
        *err = kb_asprintf("%s: topology file of %lld bytes; at most %u (32 MiB) are allowed", path,
                           (long long)st.st_size, KB_YDOC_MAX_FILE_BYTES);
        close(fd);
        return NULL;
    }
    /* The file may grow while it is read: never past the limit. */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *text = kb_xmalloc(cap + 1);
    for (;;) {
        if (n == cap) {
            if (cap > KB_YDOC_MAX_FILE_BYTES)
                break;
            cap = cap * 2 > KB_YDOC_MAX_FILE_BYTES + 1 ? KB_YDOC_MAX_FILE_BYTES + 1 : cap * 2;
            text = kb_xrealloc(text, cap + 1);
        }
        ssize_t got = read(fd, text + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            *err = kb_asprintf("%s: read error: %s", path, strerror(errno));
            free(text);
            close(fd);
            return NULL;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    if (n > KB_YDOC_MAX_FILE_BYTES) {
        *err = kb_asprintf("%s: topology file of more than %u bytes (32 MiB), the most allowed", path,
                           KB_YDOC_MAX_FILE_BYTES);
        free(text);
        return NULL;
    }
    text[n] = '\0';
    *len = n;
    return text;
}
