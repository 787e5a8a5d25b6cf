/* A standalone main for a fuzz harness: runs LLVMFuzzerTestOneInput once per
 * input file, so the seed corpus and every regression input stay a test
 * without clang or libFuzzer (ctest fuzz.<harness>; under KB_SANITIZE the
 * sanitizers see them too).
 *
 *   fuzz_replay_NAME PATH...   each PATH a file or a directory of files
 *                              (read in name order; names starting with '.'
 *                              are skipped). A missing PATH is an error.
 *
 * Each input is copied into a buffer of exactly its size, as libFuzzer
 * does, so a read past the end is caught by AddressSanitizer. */
#define _DEFAULT_SOURCE /* scandir, alphasort */

#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap)
            buf = realloc(buf, cap *= 2);
    }
    int bad = ferror(f) || !buf;
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return -1;
    }
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, n);
    free(buf);
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(exact, n);
    free(exact);
    return 0;
}

static int skip_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

/* Returns the number of inputs replayed, -1 on an unreadable path. */
static long replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path) == 0 ? 1 : -1;
    struct dirent **names;
    int n = scandir(path, &names, skip_hidden, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: cannot list %s: %s\n", path, strerror(errno));
        return -1;
    }
    long count = 0;
    for (int i = 0; i < n; i++) {
        char *full = malloc(strlen(path) + strlen(names[i]->d_name) + 2);
        sprintf(full, "%s/%s", path, names[i]->d_name);
        long r = count >= 0 ? replay_path(full) : 0;
        count = r < 0 ? -1 : count + r;
        free(full);
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIR...\n", argv[0]);
        return 2;
    }
    long total = 0;
    for (int i = 1; i < argc; i++) {
        long r = replay_path(argv[i]);
        if (r < 0)
            return 1;
        total += r;
    }
    printf("replayed %ld input(s) without a finding\n", total);
    return 0;
}
