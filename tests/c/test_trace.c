/* The trace writer (src/trace/trace.c) and value trees (val.c): exact time
 * stamps, lanes for overlapping slices, windows, filters, counter windows,
 * error instants and a well-formed document. */
#include "trace/oplog.h"
#include "trace/trace.h"
#include "trace/val.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include <cmocka.h>

static char path[64];

static kb_trace_file *open_trace(kb_trace_opts o)
{
    snprintf(path, sizeof path, "/tmp/kb_test_trace_%d.json", (int)getpid());
    if (!o.win_end)
        o.win_end = KB_TIME_MAX;
    char *err = NULL;
    kb_outfile *out = kb_outfile_open(path, "--trace", &err);
    assert_non_null(out);
    return kb_trace_open(out, &o);
}

/* Closes the trace and returns its text. */
static char *close_and_read(kb_trace_file *f)
{
    char *err = NULL;
    assert_true(kb_trace_close(f, &err));
    FILE *in = fopen(path, "r");
    assert_non_null(in);
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, in);
    buf[n] = '\0';
    fclose(in);
    remove(path);
    return buf;
}

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void test_span_times_are_exact_microseconds(void **state)
{
    (void)state;
    kb_trace_file *f = open_trace((kb_trace_opts){0});
    kb_tracer *t = kb_tracer_new(f, 1);
    kb_track *k = kb_tracer_track(t, kb_tracer_process(t, "sip0"), "sip0.cube0.r0c0");
    kb_targ args[2] = {{"bytes", NULL, 256}, {"src", "a\"b", 0}};
    kb_trace_span(t, k, "MemoryWrite", 1234567, 2000001, args, 2, 0, KB_FLOW_NONE);
    kb_tracer_free(t);
    char *text = close_and_read(f);
    assert_non_null(strstr(text, "\"ts\":1.234567,\"dur\":0.765434,\"name\":\"MemoryWrite\","
                                 "\"args\":{\"bytes\":256,\"src\":\"a\\\"b\"}"));
    assert_non_null(strstr(text, "{\"name\":\"sip0\"}"));
    assert_non_null(strstr(text, "{\"name\":\"sip0.cube0.r0c0\"}"));
    assert_int_equal(strncmp(text, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", 40), 0);
    assert_non_null(strstr(text, "}\n]}\n"));
}

static void test_overlapping_slices_go_to_extra_lanes(void **state)
{
    (void)state;
    kb_trace_file *f = open_trace((kb_trace_opts){0});
    kb_tracer *t = kb_tracer_new(f, 1);
    kb_track *k = kb_tracer_track(t, kb_tracer_process(t, "sip0"), "r");
    kb_trace_span(t, k, "a", 0, 100, NULL, 0, 0, KB_FLOW_NONE);
    kb_trace_span(t, k, "b", 50, 150, NULL, 0, 0, KB_FLOW_NONE);  /* overlaps a */
    kb_trace_span(t, k, "c", 100, 200, NULL, 0, 0, KB_FLOW_NONE); /* fits after a */
    kb_tracer_free(t);
    char *text = close_and_read(f);
    assert_int_equal(count(text, "\"thread_name\""), 2);
    assert_non_null(strstr(text, "{\"name\":\"r (2)\"}"));
    assert_non_null(strstr(text, "\"tid\":1,\"ts\":0.000100,\"dur\":0.000100,\"name\":\"c\""));
    assert_non_null(strstr(text, "\"tid\":2,\"ts\":0.000050,\"dur\":0.000100,\"name\":\"b\""));
}

static void test_window_and_filter_drop_events(void **state)
{
    (void)state;
    const char *globs[] = {"sip0.cube1.*"};
    kb_trace_file *f = open_trace((kb_trace_opts){.filters = globs, .nfilters = 1,
                                                  .win_start = 1000, .win_end = 2000});
    kb_tracer *t = kb_tracer_new(f, 2);
    int pid = kb_tracer_process(t, "sip0");
    assert_int_equal(pid, 2001);
    assert_null(kb_tracer_track(t, pid, "sip0.cube0.r0c0"));
    kb_track *k = kb_tracer_track(t, pid, "sip0.cube1.r0c0");
    assert_non_null(k);
    kb_trace_span(t, NULL, "filtered", 1000, 1500, NULL, 0, 0, KB_FLOW_NONE);
    kb_trace_span(t, k, "before", 0, 999, NULL, 0, 0, KB_FLOW_NONE);
    kb_trace_span(t, k, "across", 500, 1000, NULL, 0, 0, KB_FLOW_NONE);
    kb_trace_span(t, k, "after", 2001, 3000, NULL, 0, 0, KB_FLOW_NONE);
    kb_trace_instant(t, k, "inside", 1500, NULL, 0);
    kb_trace_instant(t, k, "outside", 2500, NULL, 0);
    kb_tracer_free(t);
    char *text = close_and_read(f);
    assert_null(strstr(text, "\"before\""));
    assert_null(strstr(text, "\"after\""));
    assert_null(strstr(text, "\"outside\""));
    assert_non_null(strstr(text, "\"across\""));
    assert_non_null(strstr(text, "\"inside\""));
    assert_non_null(strstr(text, "{\"name\":\"sim 2: sip0\"}"));
}

static void test_counter_samples_are_busy_fractions_per_window(void **state)
{
    (void)state;
    kb_trace_file *f = open_trace((kb_trace_opts){.counters = true, .counter_window_ps = 10000});
    kb_tracer *t = kb_tracer_new(f, 1);
    kb_tcounter *c = kb_tracer_counter(t, kb_tracer_process(t, "sip0"), "link");
    kb_trace_busy(t, c, 0, 15000);      /* window 0 full, window 1 half */
    kb_trace_busy(t, c, 17500, 20000);  /* window 1: another quarter */
    kb_trace_busy(t, c, 42500, 45000);  /* a gap, then window 4: a quarter */
    kb_tracer_free(t);
    char *text = close_and_read(f);
    assert_non_null(strstr(text, "\"ts\":0.000000,\"name\":\"link\",\"args\":{\"util\":1.0}"));
    assert_non_null(strstr(text, "\"ts\":0.010000,\"name\":\"link\",\"args\":{\"util\":0.75}"));
    assert_non_null(strstr(text, "\"ts\":0.020000,\"name\":\"link\",\"args\":{\"util\":0.0}"));
    assert_non_null(strstr(text, "\"ts\":0.040000,\"name\":\"link\",\"args\":{\"util\":0.25}"));
    assert_non_null(strstr(text, "\"ts\":0.050000,\"name\":\"link\",\"args\":{\"util\":0.0}"));
    assert_int_equal(count(text, "\"ph\":\"C\""), 5);
}

static void test_counters_off_and_flows(void **state)
{
    (void)state;
    kb_trace_file *f = open_trace((kb_trace_opts){.flows = true});
    kb_tracer *t = kb_tracer_new(f, 1);
    assert_null(kb_tracer_counter(t, 1, "x"));
    kb_track *k = kb_tracer_track(t, kb_tracer_process(t, "p"), "n");
    kb_trace_span(t, k, "a", 0, 100, NULL, 0, 7, KB_FLOW_START);
    kb_trace_span(t, k, "b", 200, 300, NULL, 0, 7, KB_FLOW_END);
    kb_tracer_free(t);
    char *text = close_and_read(f);
    assert_non_null(strstr(text, "{\"ph\":\"s\",\"pid\":1001,\"tid\":1,\"ts\":0.000050,\"id\":7,"));
    assert_non_null(strstr(text, "{\"ph\":\"f\",\"pid\":1001,\"tid\":1,\"ts\":0.000250,\"id\":7,"));
    assert_non_null(strstr(text, "\"bp\":\"e\""));
}

static void test_error_instant_at_latest_time(void **state)
{
    (void)state;
    kb_trace_file *f = open_trace((kb_trace_opts){0});
    kb_tracer *t = kb_tracer_new(f, 1);
    kb_track *k = kb_tracer_track(t, kb_tracer_process(t, "p"), "n");
    kb_trace_span(t, k, "a", 0, 3000000, NULL, 0, 0, KB_FLOW_NONE);
    kb_trace_error(f, "boom\nline 2");
    kb_tracer_free(t);
    char *text = close_and_read(f);
    assert_non_null(strstr(text, "\"name\":\"error\",\"ts\":3.000000,\"args\":{\"message\":\"boom\\nline 2\"}"));
}

static void test_json_numbers_and_values(void **state)
{
    (void)state;
    kb_val *v = kb_val_obj();
    kb_obj_num(v, "a", 0.1);
    kb_obj_num(v, "b", 256.0);
    kb_obj_num(v, "c", 1.0 / 3.0);
    kb_obj_int(v, "d", -5);
    kb_val *arr = kb_obj_put(v, "e", kb_val_arr());
    kb_obj_str(kb_arr_push(arr, kb_val_obj()), "s", "x\ty");
    kb_obj_bool(v, "f", true);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kb_val_write_json(v, out);
    fclose(out);
    assert_string_equal(buf, "{\"a\":0.1,\"b\":256.0,\"c\":0.3333333333333333,\"d\":-5,"
                             "\"e\":[{\"s\":\"x\\ty\"}],\"f\":true}");
    assert_int_equal(kb_obj_get(v, "d")->u.i, -5);
    assert_null(kb_obj_get(v, "zz"));
    free(buf);
    kb_val_free(v);
}

static void test_op_log_counts_without_keeping_records(void **state)
{
    (void)state;
    kb_oplog log = {0};
    kb_oplog_add(&log, 0, 1, "x", "memory", "dma_read", kb_val_obj());
    kb_oplog_add(&log, 0, 1, "x", "memory", "dma_read", NULL);
    kb_oplog_add(&log, 0, 1, "x", "gemm", "gemm_f16", NULL);
    size_t n;
    kb_oplog_records(&log, &n);
    assert_int_equal(n, 0);
    const kb_opcount *c = kb_oplog_counts(&log, &n);
    assert_int_equal(n, 2);
    assert_string_equal(c[0].name, "dma_read");
    assert_int_equal(c[0].n, 2);
    assert_string_equal(c[1].name, "gemm_f16");
    assert_int_equal(c[1].n, 1);
    kb_oplog_free(&log);
}

static void test_op_log_is_sorted_by_start_with_stable_ties(void **state)
{
    (void)state;
    kb_oplog log = {0};
    kb_oplog_keep(&log, true);
    kb_oplog_add(&log, 50, 60, "x", "memory", "second", NULL);
    kb_oplog_add(&log, 10, 90, "y", "memory", "first", NULL);
    kb_oplog_add(&log, 50, 55, "z", "memory", "third", NULL);
    size_t n;
    const kb_oprec *r = kb_oplog_records(&log, &n);
    assert_int_equal(n, 3);
    assert_string_equal(r[0].name, "first");
    assert_string_equal(r[1].name, "second");
    assert_string_equal(r[2].name, "third");
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    kb_oplog_write_jsonl(&log, out, 3);
    fclose(out);
    assert_non_null(strstr(buf, "{\"sim\":3,\"t_start_ns\":0.010,\"t_end_ns\":0.090,\"component\":\"y\","
                                "\"op_kind\":\"memory\",\"op_name\":\"first\",\"params\":{}}\n"));
    free(buf);
    kb_oplog_free(&log);
}

static void test_truncated_trace_says_so(void **state)
{
    (void)state;
    kb_trace_file *f = open_trace((kb_trace_opts){0});
    kb_tracer *t = kb_tracer_new(f, 1);
    kb_track *k = kb_tracer_track(t, kb_tracer_process(t, "sip0"), "r");
    kb_trace_span(t, k, "a", 0, 2500000, NULL, 0, 0, KB_FLOW_NONE);
    kb_tracer_free(t);
    kb_trace_truncated(f, "sigint", "interrupted (SIGINT)");
    char *text = close_and_read(f);
    assert_non_null(strstr(text, "{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"name\":\"truncated\","
                                 "\"ts\":2.500000,\"args\":{\"stopped_by\":\"sigint\","
                                 "\"message\":\"interrupted (SIGINT)\"}}\n"));
    assert_non_null(strstr(text, "\n],\"otherData\":{\"truncated\":\"true\",\"stopped_by\":\"sigint\"}}\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_span_times_are_exact_microseconds),
        cmocka_unit_test(test_overlapping_slices_go_to_extra_lanes),
        cmocka_unit_test(test_window_and_filter_drop_events),
        cmocka_unit_test(test_counter_samples_are_busy_fractions_per_window),
        cmocka_unit_test(test_counters_off_and_flows),
        cmocka_unit_test(test_error_instant_at_latest_time),
        cmocka_unit_test(test_json_numbers_and_values),
        cmocka_unit_test(test_op_log_is_sorted_by_start_with_stable_ties),
        cmocka_unit_test(test_op_log_counts_without_keeping_records),
        cmocka_unit_test(test_truncated_trace_says_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
