/* The command machine (src/comp/pe/command.c) runs any kind of command it
 * is given: here a kind the wing has never seen, defined by the test as a
 * file of the wing would define one (docs/architecture.md, "Simple
 * commands: the descriptor contract"). Its stages run in order, each step
 * does what the contract says (next now, next at a time, parked until
 * continued, failed), the land hook runs in data mode only and never after
 * a failure, and done() comes exactly once.
 * Topology: small_1cube_1pe with its defaults (dispatch 1 ns). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "comp/pe/engines.h"
#include "core/util.h"
#include "fabric_fixture.h"

/* The test kind's own fields: what each stage saw, and what it should do. */
typedef struct probe_args {
    kb_time seen[4];  /* when each of its stages ran */
    int ran;          /* stages run */
    bool fail_third;  /* the third stage fails */
    int landed;       /* land calls */
} probe_args;
KB_PE_ARGS_FIT(probe_args);

typedef struct run {
    fixture fx;
    kb_pe *pe;
    int done;
    kb_time done_at;
} run;

static probe_args *args_of(kb_pe_op *op) { return KB_PE_ARGS(op, probe_args); }

static void note(kb_pe_op *op, kb_time now) { args_of(op)->seen[args_of(op)->ran++] = now; }

/* 5 ns of nothing. */
static kb_pe_step wait_5ns(kb_pe_op *op, kb_time now, kb_time *at)
{
    note(op, now);
    *at = now + 5000;
    return KB_PE_AT;
}

/* No time: the next stage runs in the same call. */
static kb_pe_step instant(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)at;
    note(op, now);
    return KB_PE_NEXT;
}

/* Parked: an event of its own continues the command 7 ns later. */
static void wake(kb_sim *sim, void *arg) { kb_pe_op_continue(arg, kb_sim_now(sim)); }

static kb_pe_step parked(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)at;
    note(op, now);
    if (args_of(op)->fail_third) {
        op->error = kb_xstrdup("the probe failed on purpose");
        return KB_PE_FAILED;
    }
    kb_sim_at(kb_fabric_sim(op->pe->fab), now + 7000, KB_PRIO_NORMAL, wake, op);
    return KB_PE_WAIT;
}

static kb_pe_step last(kb_pe_op *op, kb_time now, kb_time *at)
{
    (void)at;
    note(op, now);
    return KB_PE_NEXT;
}

static void land(kb_pe_op *op) { args_of(op)->landed++; }

static const kb_pe_cmd probe_cmd = {.name = "probe",
                                    .stages = {kb_pe_stage_dispatch, wait_5ns, instant, parked, last},
                                    .land = land};

static void on_done(kb_pe_op *op)
{
    run *r = op->arg;
    r->done++;
    r->done_at = kb_sim_now(r->fx.sim);
}

static void open_run(run *r)
{
    memset(r, 0, sizeof *r);
    fixture_open(&r->fx, NULL, "topologies/small_1cube_1pe.yaml", NULL, 0);
    char *err = NULL;
    r->pe = kb_pe_find(r->fx.fab, 0, 0, 0, &err);
    assert_non_null(r->pe);
}

static void submit(run *r, kb_pe_op *op, bool data, bool fail_third)
{
    memset(op, 0, sizeof *op);
    op->pe = r->pe;
    op->cmd = &probe_cmd;
    op->what = "tl.probe";
    op->data = data;
    op->done = on_done;
    op->arg = r;
    args_of(op)->fail_third = fail_third;
    kb_pe_submit(op);
}

static void test_a_kind_the_wing_does_not_know_runs_its_stages_in_order(void **state)
{
    (void)state;
    run r;
    open_run(&r);
    kb_pe_op op;
    submit(&r, &op, true, false);
    assert_int_equal(r.done, 0); /* the dispatch takes time: nothing ends inside submit */
    assert_true(r.pe->active == &op);
    kb_sim_run(r.fx.sim, KB_TIME_MAX);
    probe_args *a = args_of(&op);
    assert_int_equal(a->ran, 4);
    assert_int_equal(a->seen[0], 1000);  /* after the dispatch (1 cycle at 1 GHz) */
    assert_int_equal(a->seen[1], 6000);  /* KB_PE_AT: 5 ns later */
    assert_int_equal(a->seen[2], 6000);  /* KB_PE_NEXT: at once */
    assert_int_equal(a->seen[3], 13000); /* KB_PE_WAIT: when its event continued it */
    assert_int_equal(r.done, 1);
    assert_int_equal(r.done_at, 13000);
    assert_int_equal(a->landed, 1);      /* data mode */
    assert_null(op.error);
    assert_null(r.pe->active);
    assert_int_equal(op.t_issue, 0);
    fixture_close(&r.fx);
}

static void test_land_is_for_data_mode_and_a_failed_stage_ends_the_command_there(void **state)
{
    (void)state;
    run r;
    open_run(&r);
    kb_pe_op op;
    submit(&r, &op, false, false); /* timing only: nothing lands */
    kb_sim_run(r.fx.sim, KB_TIME_MAX);
    assert_int_equal(args_of(&op)->landed, 0);
    assert_int_equal(r.done, 1);
    submit(&r, &op, true, true);
    kb_time from = kb_sim_now(r.fx.sim);
    kb_sim_run(r.fx.sim, KB_TIME_MAX);
    assert_int_equal(r.done, 2);
    assert_int_equal(args_of(&op)->ran, 3); /* the last stage never ran */
    assert_int_equal(args_of(&op)->landed, 0);
    assert_int_equal(r.done_at, from + 6000); /* at the failing stage */
    assert_string_equal(op.error, "the probe failed on purpose");
    free(op.error);
    fixture_close(&r.fx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_kind_the_wing_does_not_know_runs_its_stages_in_order),
        cmocka_unit_test(test_land_is_for_data_mode_and_a_failed_stage_ends_the_command_there),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
