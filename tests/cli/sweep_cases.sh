#!/usr/bin/env bash
# kernbench sweep (docs/sweeps.md; sourced by tests/cli/cli_test.sh, uses its
# helpers): the same results whatever -j, kill -9 half-way then --resume
# (every id once, results equal an uninterrupted run, a torn journal line
# cut away, finished points adopted without running again), failed points
# recorded and retried only with --retry-failed, --dry-run, usage errors,
# and a 1,000-point sweep whose journal and results stay valid.

sweep_cases=(sweep_jobs_give_identical_results sweep_kill_and_resume sweep_adopts_unjournaled_points
             sweep_failed_points_and_retry sweep_dry_run sweep_usage_errors sweep_thousand_points_stay_valid)

# sweep_file PATH N: a probe sweep of N cheap points (one probe case each)
sweep_file() {
  cat >"$1" <<EOF
return {
  name = "t",
  probe = true,
  topology = "small_1cube_1pe",
  case = "h2d-1hop",
  axes = { set = { ["sip.io_chiplets.0.components.pcie_ep.attrs.overhead_ns"] = { from = 1, to = $2, step = 1 } } },
  metrics = { actual_ns = "cases.1.actual_ns", bw = "cases.1.eff_bw_gbs" },
  derived = { us = function(r) return r.actual_ns / 1000 end },
}
EOF
}

# journal_check DIR N: the journal has exactly N lines, one per id
journal_check() {
  local n ids
  n=$(wc -l <"$1/journal.jsonl")
  ids=$(grep -o '^{"id":"[0-9a-f]*"' "$1/journal.jsonl" | sort | uniq | wc -l)
  [ "$n" -eq "$2" ] || fail "journal has $n lines, expected $2"
  [ "$ids" -eq "$2" ] || fail "journal has $ids distinct ids, expected $2"
  [ -z "$(tail -c 1 "$1/journal.jsonl" | tr -d '\n')" ] || fail "journal does not end with a newline"
}

# results_check DIR N: results.json is valid, with N rows, all ok
results_check() {
  KB_RESULTS="$1/results.json" KB_N="$2" "$KB" -e '
    local f = assert(io.open(os.getenv("KB_RESULTS"))); local d = require("kernbench.json").decode(f:read("a"))
    assert(d.schema == "kernbench.sweep_results" and d.schema_version == 1, "schema")
    assert(#d.rows == tonumber(os.getenv("KB_N")), "rows: " .. #d.rows)
    assert(d.counts.ok == #d.rows, "not all ok")
    for _, r in ipairs(d.rows) do assert(r.status == "ok" and r.actual_ns > 0) end' ||
    fail "results.json of $1 is not valid"
  [ "$(wc -l <"$1/results.csv")" -eq $(($2 + 1)) ] || fail "results.csv has $(wc -l <"$1/results.csv") lines"
}

sweep_jobs_give_identical_results() {
  sweep_file "$tmp/s.lua" 12
  run -q -j 1 sweep "$tmp/s.lua" --out "$tmp/a"; expect_status 0
  expect_out "12 point(s): 12 ok, 0 failed, 0 missing"
  run -q sweep "$tmp/s.lua" --out "$tmp/b" -j 2; expect_status 0
  cmp "$tmp/a/results.csv" "$tmp/b/results.csv" || fail "results.csv differs between -j 1 and -j 2"
  cmp "$tmp/a/results.json" "$tmp/b/results.json" || fail "results.json differs between -j 1 and -j 2"
  journal_check "$tmp/a" 12
  results_check "$tmp/a" 12
  head -1 "$tmp/a/results.csv" | grep -qx 'id,status,exit_code,sip.io_chiplets.0.components.pcie_ep.attrs.overhead_ns,actual_ns,bw,us' ||
    fail "header: $(head -1 "$tmp/a/results.csv")"
  # rows follow the file: overhead 1, 2, ... 12
  [ "$(cut -d, -f4 "$tmp/a/results.csv" | tail -n +2 | tr '\n' ' ')" = "1 2 3 4 5 6 7 8 9 10 11 12 " ] ||
    fail "row order: $(cut -d, -f4 "$tmp/a/results.csv" | tr '\n' ' ')"
  # a point's files: its results, its exit code, its log
  local id; id=$(sed -n 2p "$tmp/a/results.csv" | cut -d, -f1)
  [ -s "$tmp/a/points/$id.json" ] && [ "$(cat "$tmp/a/points/$id.exit")" = 0 ] && [ -f "$tmp/a/logs/$id.log" ] ||
    fail "point files of $id: $(ls "$tmp/a/points" | head)"
  ! ls -A "$tmp/a" "$tmp/a/points" | grep -q -e partial -e '\.tmp$' || fail "temporary files left"
}

sweep_kill_and_resume() {
  sweep_file "$tmp/s.lua" 60
  "$KB" -q -j 2 sweep "$tmp/s.lua" --out "$tmp/full" >/dev/null 2>&1 || fail "uninterrupted run failed"
  "$KB" -q -j 1 sweep "$tmp/s.lua" --out "$tmp/k" >"$tmp/k.out" 2>&1 &
  local pid=$! waited=0
  until [ -f "$tmp/k/journal.jsonl" ] && [ "$(wc -l <"$tmp/k/journal.jsonl")" -ge 20 ]; do
    sleep 0.05; waited=$((waited + 1))
    [ $waited -lt 1200 ] || { kill -9 $pid; fail "the sweep journaled fewer than 20 points in 60 s"; }
  done
  kill -9 $pid; wait $pid 2>/dev/null
  local before; before=$(wc -l <"$tmp/k/journal.jsonl")
  [ "$before" -lt 60 ] || fail "the sweep had finished before the kill"
  # a write cut short by the kill: a torn last line
  printf '{"id":"0123456789abcdef","par' >>"$tmp/k/journal.jsonl"
  run -q sweep "$tmp/s.lua" --out "$tmp/k"; expect_status 2; expect_err "pass --resume to continue it"
  run -q -j 2 sweep "$tmp/s.lua" --out "$tmp/k" --resume; expect_status 0
  expect_err "is torn"; expect_out "already journaled"
  journal_check "$tmp/k" 60
  cmp "$tmp/full/results.csv" "$tmp/k/results.csv" || fail "results.csv after resume differs from an uninterrupted run"
  cmp "$tmp/full/results.json" "$tmp/k/results.json" || fail "results.json after resume differs"
  # resuming a finished sweep runs nothing and changes nothing
  run -q sweep "$tmp/s.lua" --out "$tmp/k" --resume; expect_status 0; expect_out "60 point(s) already journaled, 0 adopted"
  journal_check "$tmp/k" 60
}

sweep_adopts_unjournaled_points() {
  sweep_file "$tmp/s.lua" 6
  run -q -j 2 sweep "$tmp/s.lua" --out "$tmp/a"; expect_status 0
  cp "$tmp/a/results.json" "$tmp/want.json"
  # the coordinator killed after points 5 and 6 ended, before journaling them
  head -n 4 "$tmp/a/journal.jsonl" >"$tmp/j" && mv "$tmp/j" "$tmp/a/journal.jsonl"
  local id5 id6; id5=$(sed -n 6p "$tmp/a/results.csv" | cut -d, -f1); id6=$(sed -n 7p "$tmp/a/results.csv" | cut -d, -f1)
  rm "$tmp/a/points/$id6.exit" # only its results file: adopted too
  echo stale >"$tmp/a/logs/$id5.log"
  run -q sweep "$tmp/s.lua" --out "$tmp/a" --resume; expect_status 0
  expect_out "4 point(s) already journaled, 2 adopted (finished, not journaled), 0 to run"
  [ "$(cat "$tmp/a/logs/$id5.log")" = stale ] || fail "an adopted point ran again"
  journal_check "$tmp/a" 6
  cmp "$tmp/want.json" "$tmp/a/results.json" || fail "results differ after adoption"
}

sweep_failed_points_and_retry() {
  cat >"$tmp/b.lua" <<'EOF'
return {
  name = "sweep-test", description = "a point that fails while a marker file exists",
  params = { x = { default = 1, help = "the point" } },
  run = function(torch, p)
    local f = io.open(os.getenv("SWEEP_TEST_MARK") or "", "r")
    if f and p.x == 2 then f:close() error("point x=2 fails on purpose") end
    local d = torch.empty({ 8, 8 }, { dtype = "f16", dp = torch.DPPolicy { cube = "row_wise" } })
    torch.wait(d:copy_(torch.randn({ 8, 8 }, { dtype = "f16" })))
    return { square = p.x * p.x }
  end,
}
EOF
  cat >"$tmp/s.lua" <<'EOF'
return { bench = "b.lua", topology = "small_1cube_1pe", axes = { param = { x = { 1, 2, 3 } } },
         metrics = { square = "result.square", sim_ns = "simulation.sim_ns" } }
EOF
  touch "$tmp/mark"
  SWEEP_TEST_MARK="$tmp/mark" run -q -j 2 sweep "$tmp/s.lua" --out "$tmp/o"; expect_status 1
  expect_out "3 point(s): 2 ok, 1 failed, 0 missing"; expect_out "--retry-failed"
  grep -q '"status":"failed","exit_code":1,"error":"[^"]*point x=2 fails on purpose' "$tmp/o/journal.jsonl" ||
    fail "no failure with its error in the journal: $(cat "$tmp/o/journal.jsonl")"
  grep -q ',failed,1,2,,$' "$tmp/o/results.csv" || fail "results.csv: $(cat "$tmp/o/results.csv")"
  # --resume does not run a failed point again, even when it would pass now
  rm "$tmp/mark"
  SWEEP_TEST_MARK="$tmp/mark" run -q sweep "$tmp/s.lua" --out "$tmp/o" --resume; expect_status 1
  expect_out "3 point(s) already journaled, 0 adopted (finished, not journaled), 0 to run"
  [ "$(wc -l <"$tmp/o/journal.jsonl")" -eq 3 ] || fail "a failed point ran again without --retry-failed"
  SWEEP_TEST_MARK="$tmp/mark" run -q sweep "$tmp/s.lua" --out "$tmp/o" --retry-failed; expect_status 0
  expect_out "3 point(s): 3 ok, 0 failed, 0 missing"
  [ "$(wc -l <"$tmp/o/journal.jsonl")" -eq 4 ] || fail "the retry should add one line"
  grep -q ',ok,0,2,[0-9.]*,4$' "$tmp/o/results.csv" || fail "the retried point: $(cat "$tmp/o/results.csv")"
}

sweep_dry_run() {
  sweep_file "$tmp/s.lua" 5
  run sweep "$tmp/s.lua" --out "$tmp/d" --dry-run; expect_status 0
  expect_out "sweep t: 5 point(s) of probe cases"
  [ "$(grep -c '^[0-9a-f]\{16\}  to-run  sip.io_chiplets.0.components.pcie_ep.attrs.overhead_ns=' "$tmp/out")" -eq 5 ] ||
    fail "dry run listing: $(cat "$tmp/out")"
  [ ! -e "$tmp/d" ] || fail "a dry run created $tmp/d"
  # the ids do not depend on the order of the file's keys, nor on its metrics
  cat >"$tmp/r.lua" <<'EOF'
return {
  axes = { set = { ["sip.io_chiplets.0.components.pcie_ep.attrs.overhead_ns"] = { 5, 4, 3, 2, 1 } } },
  case = "h2d-1hop", topology = "small_1cube_1pe", probe = true, name = "t",
}
EOF
  run sweep "$tmp/r.lua" --dry-run --out "$tmp/d"; expect_status 0
  grep '^[0-9a-f]' "$tmp/out" | cut -c1-16 | sort >"$tmp/ids2"
  run sweep "$tmp/s.lua" --dry-run --out "$tmp/d"
  grep '^[0-9a-f]' "$tmp/out" | cut -c1-16 | sort | cmp -s - "$tmp/ids2" || fail "ids depend on the order of the file"
}

sweep_usage_errors() {
  run sweep; expect_status 2; expect_err "which sweep file?"
  run sweep "$tmp/none.lua"; expect_status 2; expect_err "$tmp/none.lua: no such sweep file"
  printf 'return { probe = true, case = "h2d-1hop", axes = { set = { ["cube.nope"] = {1} } } }\n' >"$tmp/bad.lua"
  run sweep "$tmp/bad.lua"; expect_status 2; expect_err "$tmp/bad.lua: set cube.nope=1:"
  printf 'return { bench = "ccl-allreduce", axes = { param = { n_elm = {8} } } }\n' >"$tmp/bad.lua"
  run sweep "$tmp/bad.lua"; expect_status 2; expect_err "axes.param[\"n_elm\"][1]: --param n_elm=8: bench ccl-allreduce has no parameter 'n_elm'"
  sweep_file "$tmp/s.lua" 2
  run sweep "$tmp/s.lua" --backend nope; expect_status 2; expect_err "--backend nope: not implemented"
  run sweep "$tmp/s.lua" --frobnicate; expect_status 2; expect_err "unknown option '--frobnicate'"
  run --param x=1 sweep "$tmp/s.lua"; expect_status 2
  run -t small_2x2 sweep "$tmp/s.lua"; expect_status 2; expect_err "put them in the sweep file"
  run sweep --help; expect_status 0; expect_out "usage: kernbench [-q] [-j N] sweep FILE"
}

sweep_thousand_points_stay_valid() {
  sweep_file "$tmp/s.lua" 1000
  local jobs; jobs=$(nproc); [ "$jobs" -ge 2 ] || jobs=2
  run -q -j "$jobs" sweep "$tmp/s.lua" --out "$tmp/o"; expect_status 0
  expect_out "1000 point(s): 1000 ok, 0 failed, 0 missing"
  journal_check "$tmp/o" 1000
  results_check "$tmp/o" 1000
}
