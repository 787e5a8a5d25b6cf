/* Progress reports of the event core (kb_sim_control.on_progress) and the
 * command line's progress line: when it may draw, its text, the estimate
 * of the time left (src/cli/progress.c). */
#include "cli/progress.h"
#include "core/sim.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"

/* ---- the core's reports ---- */

#define MAX_REPORTS 16

typedef struct reports {
    int n;
    kb_sim_progress r[MAX_REPORTS];
} reports;

static void record(void *ctx, const kb_sim_progress *p)
{
    reports *rs = ctx;
    if (rs->n < MAX_REPORTS)
        rs->r[rs->n] = *p;
    rs->n++;
}

/* An event every 10 ps, forever. */
static void tick(kb_sim *sim, void *arg) { kb_sim_after(sim, 10, KB_PRIO_NORMAL, tick, arg); }

static kb_sim *ticking_sim(kb_sim_control *c, int id)
{
    kb_sim *sim = kb_sim_new();
    kb_sim_set_control(sim, c, id);
    kb_sim_after(sim, 0, KB_PRIO_NORMAL, tick, NULL);
    return sim;
}

static void test_a_run_reports_every_65536_events_and_as_it_returns(void **state)
{
    (void)state;
    reports rs = {0};
    kb_sim_control c = {.on_progress = record, .progress_ctx = &rs};
    kb_sim *sim = ticking_sim(&c, 7);
    /* 200 000 events: the tick at 0 and every 10 ps up to 1 999 990 ps. */
    assert_int_equal(kb_sim_run(sim, 2000000), KB_RUN_UNTIL);
    assert_int_equal(rs.n, 4); /* 65536, 131072, 196608, then the end */
    for (int i = 0; i < 3; i++) {
        assert_int_equal(rs.r[i].events, (uint64_t)(i + 1) * KB_SIM_PROGRESS_EVERY);
        assert_int_equal(rs.r[i].now, ((int64_t)(i + 1) * 65536 - 1) * 10); /* the event just processed */
        assert_int_equal(rs.r[i].id, 7);
        assert_false(rs.r[i].ended);
        assert_true(rs.r[i].wall_s >= 0);
    }
    assert_true(rs.r[3].ended);
    assert_int_equal(rs.r[3].now, 2000000);
    kb_sim_free(sim);
}

static void test_short_runs_report_when_they_pass_a_multiple(void **state)
{
    (void)state;
    reports rs = {0};
    kb_sim_control c = {.on_progress = record, .progress_ctx = &rs};
    kb_sim *sim = ticking_sim(&c, 1);
    uint64_t done = 0;
    assert_int_equal(kb_sim_step(sim, 60000, &done), KB_RUN_UNTIL);
    assert_int_equal(done, 60000);
    assert_int_equal(rs.n, 1); /* only the end */
    assert_true(rs.r[0].ended);
    assert_int_equal(kb_sim_step(sim, 10000, &done), KB_RUN_UNTIL);
    assert_int_equal(done, 10000); /* the step count is kept */
    assert_int_equal(rs.n, 3);
    assert_int_equal(rs.r[1].events, 65536);
    assert_false(rs.r[1].ended);
    assert_true(rs.r[2].ended);
    assert_int_equal(rs.r[2].events, 70000);
    kb_sim_free(sim);
}

static void test_the_event_limit_holds_with_reports(void **state)
{
    (void)state;
    reports rs = {0};
    kb_sim_control c = {.max_events = 70000, .on_progress = record, .progress_ctx = &rs};
    kb_sim *sim = ticking_sim(&c, 1);
    assert_int_equal(kb_sim_run(sim, KB_TIME_MAX), KB_RUN_INTERRUPTED);
    assert_int_equal(c.stop, KB_STOP_EVENTS);
    assert_int_equal(c.reached.events, 70000);
    assert_int_equal(rs.n, 2);
    assert_int_equal(rs.r[0].events, 65536);
    assert_true(rs.r[1].ended);
    kb_sim_free(sim);
}

static void test_reports_change_nothing_in_the_simulation(void **state)
{
    (void)state;
    reports rs = {0};
    kb_sim_control with = {.on_progress = record, .progress_ctx = &rs}, without = {0};
    kb_sim *a = ticking_sim(&with, 1), *b = ticking_sim(&without, 1);
    uint64_t da = 0, db = 0;
    kb_sim_run(a, 1500000);
    kb_sim_run(b, 1500000);
    kb_sim_step(a, 12345, &da);
    kb_sim_step(b, 12345, &db);
    kb_sim_stats sa, sb;
    kb_sim_get_stats(a, &sa);
    kb_sim_get_stats(b, &sb);
    assert_int_equal(sa.events, sb.events);
    assert_int_equal(sa.now, sb.now);
    assert_int_equal(sa.pending, sb.pending);
    assert_int_equal(da, db);
    assert_true(rs.n > 2);
    kb_sim_free(a);
    kb_sim_free(b);
}

/* ---- the line ---- */

static void test_the_environment_switch(void **state)
{
    (void)state;
    bool bad;
    assert_int_equal(kb_progress_mode_of(NULL, &bad), KB_PROGRESS_AUTO);
    assert_false(bad);
    assert_int_equal(kb_progress_mode_of("", &bad), KB_PROGRESS_AUTO);
    assert_int_equal(kb_progress_mode_of("1", &bad), KB_PROGRESS_FORCED);
    assert_int_equal(kb_progress_mode_of("0", &bad), KB_PROGRESS_OFF);
    assert_false(bad);
    assert_int_equal(kb_progress_mode_of("yes", &bad), KB_PROGRESS_AUTO);
    assert_true(bad);
}

static void test_the_line_waits_a_second_then_draws_five_times_a_second(void **state)
{
    (void)state;
    kb_progress p = {.start_s = 100.0, .last_draw_s = -INFINITY};
    assert_false(kb_progress_due(&p, 100.5));
    assert_true(kb_progress_due(&p, 101.0));
    p.last_draw_s = 101.0;
    assert_false(kb_progress_due(&p, 101.1));
    assert_true(kb_progress_due(&p, 101.2));
    p.partial = true; /* an unfinished line of the script's output */
    assert_false(kb_progress_due(&p, 105.0));
    p.partial = false;
    p.forced = true; /* KERNBENCH_PROGRESS=1: no delay, every report */
    assert_true(kb_progress_due(&p, 101.0001));
    p.last_draw_s = 100.0;
    assert_true(kb_progress_due(&p, 100.0));
}

static void test_times_are_written_as_kb_format_ns_does(void **state)
{
    (void)state;
    char b[32];
    kb_progress_format_time(b, sizeof b, 0);
    assert_string_equal(b, "0 ns");
    kb_progress_format_time(b, sizeof b, 250); /* kb.format_ns(0.25) */
    assert_string_equal(b, "250 ps");
    kb_progress_format_time(b, sizeof b, 1500000); /* kb.format_ns(1500) */
    assert_string_equal(b, "1.5 us");
    kb_progress_format_time(b, sizeof b, 1234000000);
    assert_string_equal(b, "1.234 ms");
    kb_progress_format_time(b, sizeof b, INT64_C(2500000000000));
    assert_string_equal(b, "2.5 s");
}

static void test_no_estimate_before_a_point_is_done(void **state)
{
    (void)state;
    kb_session_point pt = {.k = 1, .n = 10, .since_s = 5, .first_k = 1, .first_s = 5};
    assert_true(kb_progress_eta(&pt, 9) < 0);
    pt.k = 0;
    pt.first_k = 0;
    assert_true(kb_progress_eta(&pt, 9) < 0);
    pt.n = 0; /* the bench said nothing */
    assert_true(kb_progress_eta(&pt, 9) < 0);
}

static void test_the_estimate_is_the_mean_point_time_for_each_point_left(void **state)
{
    (void)state;
    /* Points 1..3 took 30 s (10 s each); point 4 of 10 started 4 s ago:
     * 6 points after it (60 s) and 6 s of the current one. */
    kb_session_point pt = {.k = 4, .n = 10, .since_s = 130, .first_k = 1, .first_s = 100};
    assert_float_equal(kb_progress_eta(&pt, 134), 66.0, 1e-9);
    /* The current point already took longer than the mean: nothing of it is counted. */
    assert_float_equal(kb_progress_eta(&pt, 150), 60.0, 1e-9);
    /* The last point: only what remains of it. */
    pt.k = 10;
    pt.since_s = 190;
    assert_float_equal(kb_progress_eta(&pt, 191), 9.0, 1e-9);
}

static void test_the_line_text(void **state)
{
    (void)state;
    char b[256];
    kb_sim_progress r = {.id = 2, .now = 1234000000, .events = 5242880, .wall_s = 0.5};
    size_t len = kb_progress_format(b, sizeof b, &r, NULL, 0, 0);
    assert_string_equal(b, "sim #2  t=1.234 ms  5242880 events  10.5 M events/s");
    assert_int_equal(len, strlen(b));
    kb_session_point pt = {.k = 4, .n = 24, .label = "M=512", .since_s = 130, .first_k = 1, .first_s = 100};
    kb_progress_format(b, sizeof b, &r, &pt, 134, 0);
    assert_string_equal(b, "sim #2  t=1.234 ms  5242880 events  10.5 M events/s  point 4/24 (M=512) ~ 3 min left");
    pt.k = 1; /* no estimate yet, and no label */
    pt.label[0] = '\0';
    r.wall_s = 0; /* no rate yet */
    kb_progress_format(b, sizeof b, &r, &pt, 134, 0);
    assert_string_equal(b, "sim #2  t=1.234 ms  5242880 events  point 1/24");
    /* simulation 0: no simulation runs here (kernbench.procpool's workers do): the point alone */
    kb_sim_progress none = {.id = 0};
    pt.k = 4;
    memcpy(pt.label, "a-b", 4);
    kb_progress_format(b, sizeof b, &none, &pt, 134, 0);
    assert_string_equal(b, "point 4/24 (a-b) ~ 3 min left");
}

static void test_the_line_fits_one_terminal_row(void **state)
{
    (void)state;
    char b[256];
    kb_sim_progress r = {.id = 1, .now = 1000, .events = 1, .wall_s = 1};
    kb_session_point pt = {.k = 1, .n = 2, .label = "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"}; /* four e-acute */
    size_t full = kb_progress_format(b, sizeof b, &r, &pt, 0, 0);
    size_t cut = kb_progress_format(b, sizeof b, &r, &pt, 0, 20);
    assert_int_equal(cut, 19);
    assert_int_equal(strlen(b), 19);
    /* a cut inside a UTF-8 character keeps none of it */
    cut = kb_progress_format(b, sizeof b, &r, &pt, 0, (int)full - 3);
    assert_int_equal(cut, full - 5);
    assert_int_equal((unsigned char)b[cut - 1], 0xa9);
    /* a buffer too small is filled and terminated */
    char small[8];
    assert_int_equal(kb_progress_format(small, sizeof small, &r, &pt, 0, 0), 7);
    assert_string_equal(small, "sim #1 ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_run_reports_every_65536_events_and_as_it_returns),
        cmocka_unit_test(test_short_runs_report_when_they_pass_a_multiple),
        cmocka_unit_test(test_the_event_limit_holds_with_reports),
        cmocka_unit_test(test_reports_change_nothing_in_the_simulation),
        cmocka_unit_test(test_the_environment_switch),
        cmocka_unit_test(test_the_line_waits_a_second_then_draws_five_times_a_second),
        cmocka_unit_test(test_times_are_written_as_kb_format_ns_does),
        cmocka_unit_test(test_no_estimate_before_a_point_is_done),
        cmocka_unit_test(test_the_estimate_is_the_mean_point_time_for_each_point_left),
        cmocka_unit_test(test_the_line_text),
        cmocka_unit_test(test_the_line_fits_one_terminal_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
