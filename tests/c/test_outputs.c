/* Output files written beside their target and renamed when complete
 * (src/trace/outfile.c), and the op log streamed through spill files
 * (src/trace/opstream.c): the same bytes as sorting every record in
 * memory, nothing left behind, I/O errors reported. */
#include "trace/oplog.h"
#include "trace/outfile.h"

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];

static int make_dir(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/kb_test_outputs_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

/* Entries of the test directory, "." and ".." aside. */
static int entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    buf[n] = '\0';
    fclose(in);
    return buf;
}

static void test_the_target_appears_only_on_commit(void **state)
{
    (void)state;
    char path[128], *err = NULL;
    snprintf(path, sizeof path, "%s/out.json", dir);
    kb_outfile *o = kb_outfile_open(path, "--stats-json", &err);
    assert_non_null(o);
    char temp[128];
    snprintf(temp, sizeof temp, "%s/.out.json.partial.%ld", dir, (long)getpid());
    assert_string_equal(kb_outfile_temp(o), temp);
    fputs("{}\n", kb_outfile_stream(o));
    fflush(kb_outfile_stream(o));
    assert_null(slurp(path)); /* not yet */
    assert_string_equal(slurp(temp), "{}\n");
    assert_true(kb_outfile_commit(o, &err));
    assert_string_equal(slurp(path), "{}\n");
    assert_null(slurp(temp));
    assert_int_equal(entries(), 1);
    remove(path);
}

static void test_abort_leaves_the_previous_file(void **state)
{
    (void)state;
    char path[128], *err = NULL;
    snprintf(path, sizeof path, "%s/keep.csv", dir);
    FILE *f = fopen(path, "w");
    fputs("previous\n", f);
    fclose(f);
    kb_outfile *o = kb_outfile_open(path, "kb.open_output:", &err);
    assert_non_null(o);
    fputs("half a row", kb_outfile_stream(o));
    kb_outfile_abort(o);
    assert_string_equal(slurp(path), "previous\n");
    assert_int_equal(entries(), 1);
    remove(path);
}

static void test_bad_paths_are_refused_with_a_reason(void **state)
{
    (void)state;
    char path[128], *err = NULL;
    snprintf(path, sizeof path, "%s/none/x.json", dir);
    assert_null(kb_outfile_open(path, "--trace", &err));
    assert_non_null(strstr(err, "--trace "));
    assert_non_null(strstr(err, "/none does not exist"));
    free(err);
    assert_null(kb_outfile_open(dir, "--op-log", &err));
    assert_non_null(strstr(err, "is a directory"));
    free(err);
    assert_null(kb_outfile_open("", "--op-log", &err));
    assert_non_null(strstr(err, "empty file name"));
    free(err);
    assert_int_equal(entries(), 0);
}

static void test_two_names_of_one_file_are_the_same(void **state)
{
    (void)state;
    char a[128], b[128], *err = NULL;
    snprintf(a, sizeof a, "%s/same.json", dir);
    snprintf(b, sizeof b, "%s/./same.json", dir);
    kb_outfile *x = kb_outfile_open(a, "--trace", &err), *y = kb_outfile_open(b, "--op-log", &err);
    snprintf(b, sizeof b, "%s/other.json", dir);
    kb_outfile *z = kb_outfile_open(b, "--op-log", &err);
    assert_true(kb_outfile_same(x, y));
    assert_false(kb_outfile_same(x, z));
    kb_outfile_abort(x);
    kb_outfile_abort(y);
    kb_outfile_abort(z);
    assert_int_equal(entries(), 0);
}

static void test_a_full_device_is_a_write_error(void **state)
{
    (void)state;
    char *err = NULL;
    kb_outfile *o = kb_outfile_open("/dev/full", "--trace", &err);
    assert_non_null(o);
    assert_string_equal(kb_outfile_temp(o), "/dev/full"); /* written directly */
    assert_null(kb_outfile_dir(o));
    for (int i = 0; i < 10000; i++)
        fputs("0123456789", kb_outfile_stream(o));
    assert_false(kb_outfile_commit(o, &err));
    assert_string_equal(err, "--trace /dev/full: write failed: No space left on device");
    free(err);
}

/* ---- the streamed op log ---- */

/* n records with scrambled start times (many ties), as a run adds them. */
static void add_records(kb_oplog *log, int n)
{
    uint32_t x = 12345;
    for (int i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        kb_time start = (kb_time)(x >> 8) % 5000;
        kb_val *p = kb_val_obj();
        kb_obj_int(p, "i", i);
        kb_obj_str(p, "pad", i % 7 ? "x" : "a longer parameter, to vary the record sizes");
        kb_oplog_add(log, start, start + i % 100, "sip0.cube0.pe0.pe_dma", "memory", "dma_read", p);
    }
}

static char *stream_text(size_t chunk, const char *spill_dir, bool *ok, char **err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kb_oplog log = {0};
    kb_oplog_stream(&log, out, spill_dir, 2, chunk);
    add_records(&log, 5000);
    *ok = kb_oplog_finish(&log, err);
    kb_oplog_free(&log);
    fclose(out);
    return buf;
}

static void test_a_streamed_log_is_the_sorted_log(void **state)
{
    (void)state;
    char *held = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&held, &len);
    kb_oplog log = {0};
    kb_oplog_keep(&log, true);
    add_records(&log, 5000);
    kb_oplog_write_jsonl(&log, out, 2);
    kb_oplog_free(&log);
    fclose(out);
    /* chunks of 1 KiB: hundreds of runs, so runs are also merged into one
     * (after 64) before the final merge; and one chunk holding everything */
    size_t chunks[] = {1024, 64 * 1024, 0};
    for (size_t i = 0; i < 3; i++) {
        bool ok;
        char *err = NULL;
        char *streamed = stream_text(chunks[i], dir, &ok, &err);
        assert_true(ok);
        assert_string_equal(streamed, held);
        free(streamed);
        assert_int_equal(entries(), 0); /* spill files are unlinked at once */
    }
    free(held);
}

static void test_a_spill_error_is_reported(void **state)
{
    (void)state;
    bool ok;
    char *err = NULL;
    free(stream_text(1024, "/nonexistent/spill", &ok, &err));
    assert_false(ok);
    assert_non_null(strstr(err, "op log spill file in /nonexistent/spill: cannot create"));
    free(err);
}

static void test_a_streamed_log_counts_and_wants_records(void **state)
{
    (void)state;
    FILE *out = fopen("/dev/null", "w");
    kb_oplog log = {0};
    assert_false(kb_oplog_keeps(&log));
    kb_oplog_stream(&log, out, dir, 1, 0);
    assert_true(kb_oplog_keeps(&log)); /* components build the params */
    add_records(&log, 10);
    size_t n;
    kb_oplog_records(&log, &n);
    assert_int_equal(n, 0); /* streamed, not held */
    const kb_opcount *c = kb_oplog_counts(&log, &n);
    assert_int_equal(n, 1);
    assert_int_equal(c[0].n, 10);
    kb_oplog_free(&log); /* unfinished: dropped */
    fclose(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_target_appears_only_on_commit),
        cmocka_unit_test(test_abort_leaves_the_previous_file),
        cmocka_unit_test(test_bad_paths_are_refused_with_a_reason),
        cmocka_unit_test(test_two_names_of_one_file_are_the_same),
        cmocka_unit_test(test_a_full_device_is_a_write_error),
        cmocka_unit_test(test_a_streamed_log_is_the_sorted_log),
        cmocka_unit_test(test_a_spill_error_is_reported),
        cmocka_unit_test(test_a_streamed_log_counts_and_wants_records),
    };
    return cmocka_run_group_tests(tests, make_dir, remove_dir);
}
