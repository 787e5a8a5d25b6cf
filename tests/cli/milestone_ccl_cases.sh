#!/usr/bin/env bash
# The CCL milestone, benches/milestone_ccl.lua (sourced by tests/cli/cli_test.sh;
# uses its helpers): the quick sweep writes every output (PNG and DOT when
# gnuplot and Graphviz are installed) with the invariants the model
# promises, the results do not depend on -j nor on how many points a
# worker runs, fast=1 re-renders without
# simulating and refuses a missing or foreign file, and a run stopped by
# a signal leaves no output that looks complete and no worker behind.

milestone_ccl_cases=(milestone_ccl_quick_writes_every_output milestone_ccl_results_independent_of_jobs
                     milestone_ccl_worker_points_are_independent milestone_ccl_fast_rerenders milestone_ccl_stopped_run_leaves_nothing
                     milestone_ccl_bad_arguments milestone_ccl_compares_profiles)

ccl_bench() { echo "$PWD/benches/milestone_ccl.lua"; }

# ccl_quick DIR [kernbench options...]: the quick sweep into DIR
ccl_quick() {
  local dir=$1; shift
  run "$@" --param quick=1 --param "out=$dir" "$(ccl_bench)"
}

ccl_outputs_present() {
  local dir=$1
  for f in results.json summary.csv buffer_kind.csv; do
    [ -s "$dir/$f" ] || fail "no $f in $dir: $(ls -A "$dir")"
  done
  if command -v gnuplot >/dev/null 2>&1; then
    for png in latency_ring_1d latency_torus_2d latency_mesh_2d_no_wrap buffer_kind algorithms; do
      [ "$(head -c 4 "$dir/$png.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "$png.png is not a PNG"
    done
  fi
  if command -v neato >/dev/null 2>&1; then
    [ "$(head -c 4 "$dir/topology.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "topology.png is not a PNG"
    head -1 "$dir/topology.dot" | grep -q '^graph milestone_ccl_topology {' || fail "topology.dot: $(head -1 "$dir/topology.dot")"
  fi
  ! ls -A "$dir" | grep -q -e '^\.milestone_ccl\.work' -e 'partial' || fail "work files left: $(ls -A "$dir")"
}

milestone_ccl_quick_writes_every_output() {
  ccl_quick "$tmp/o" -j 2 --results-json "$tmp/r.json"; expect_status 0
  ccl_outputs_present "$tmp/o"
  cmp -s "$tmp/r.json" "$tmp/o/results.json" || fail "--results-json differs from results.json"
  expect_out "milestone-ccl: 13 points in 3 worker processes, 2 at once"
  expect_out "nothing simulated (the 13 points were simulated by worker processes (-j 2): 13 simulations,"
  # the run summary says where the events were counted, not "0 events" alone
  expect_err "summary: 1 simulation in this process, 0 events here (the 13 points were simulated by worker processes"
  [ "$(wc -l <"$tmp/o/summary.csv")" -eq 14 ] || fail "summary.csv: $(cat "$tmp/o/summary.csv")"
  head -1 "$tmp/o/summary.csv" | grep -q '^id,algorithm,topology,buffer_kind,root,root_cube,n_elem,bytes_per_pe,crit_ns,' ||
    fail "summary.csv header: $(head -1 "$tmp/o/summary.csv")"
  # the invariants: crit_ns grows with the size on each SIP topology, the
  # centre root is never slower than the corner, every point has its
  # prediction and submitted requests of its own
  cat >"$tmp/check.lua" <<'EOF'
local json = require "kernbench.json"
local f = assert(io.open(arg[1]))
local d = json.decode(f:read("a"))
f:close()
assert(d.schema == "kernbench.results" and d.bench.name == "milestone-ccl", "not the bench's results")
assert(d.status == "ok" and d.simulation.host_requests > 0, "status or totals")
local r = d.result
assert(r.schema == "kernbench.ccl_milestone" and r.version == 1 and #r.points == 13, "result")
local key = function(p) return table.concat({ p.algorithm, p.topology, p.buffer_kind, p.root, p.n_elem }, "|") end
local by = {}
for _, p in ipairs(r.points) do
  assert(p.predicted_ns and p.predicted_ns > 0, p.id .. ": no prediction")
  assert(p.crit_ns > 0 and p.host_requests > 0 and p.events > 0, p.id .. ": not simulated")
  by[key(p)] = p
end
local lrab = "lrab_hierarchical_allreduce"
for _, t in ipairs { "ring_1d", "torus_2d", "mesh_2d_no_wrap" } do
  local small, big = by[lrab .. "|" .. t .. "|tcm|center|8"], by[lrab .. "|" .. t .. "|tcm|center|512"]
  assert(small.crit_ns < big.crit_ns, t .. ": crit_ns does not grow with the size")
  local corner = by[lrab .. "|" .. t .. "|tcm|corner|512"]
  assert(big.crit_ns <= corner.crit_ns, ("%s: centre %g > corner %g"):format(t, big.crit_ns, corner.crit_ns))
end
for _, k in ipairs { "sram", "hbm" } do assert(by[lrab .. "|torus_2d|" .. k .. "|center|512"], k) end
for _, a in ipairs { "ring_allreduce", "tree_allreduce" } do assert(by[a .. "|torus_2d|tcm|center|512"], a) end
print("invariants hold")
EOF
  run "$tmp/check.lua" "$tmp/o/results.json"; expect_status 0; expect_out "invariants hold"
}

milestone_ccl_results_independent_of_jobs() {
  ccl_quick "$tmp/o" -j 1; expect_status 0
  expect_out "13 points in 3 worker processes, 1 at once"
  mkdir "$tmp/first" && cp "$tmp/o"/* "$tmp/first/"
  ccl_quick "$tmp/o" -j 2; expect_status 0
  for f in results.json summary.csv buffer_kind.csv; do
    cmp -s "$tmp/first/$f" "$tmp/o/$f" || fail "$f differs between -j 1 and -j 2: $(diff "$tmp/first/$f" "$tmp/o/$f" | head -5)"
  done
}

milestone_ccl_worker_points_are_independent() {
  # a worker running three points writes what three workers of one point
  # each write: a point's simulation does not see the ones before it
  local ids=lrab-torus_2d-tcm-corner-512,lrab-torus_2d-hbm-center-32,tree-torus_2d-tcm-center-512
  mkdir "$tmp/one" "$tmp/all"
  for id in ${ids//,/ }; do
    run -t torus_2d_6sip_2x3 --param "point=$id" --param "out=$tmp/one" "$(ccl_bench)"; expect_status 0
  done
  run -t torus_2d_6sip_2x3 --param "point=$ids" --param "out=$tmp/all" "$(ccl_bench)"; expect_status 0
  for id in ${ids//,/ }; do
    cmp -s "$tmp/one/$id.json" "$tmp/all/$id.json" || fail "$id differs: $(diff "$tmp/one/$id.json" "$tmp/all/$id.json")"
  done
  # every point is checked before any runs
  run -t torus_2d_6sip_2x3 --param "point=lrab-torus_2d-tcm-center-8,lrab-ring_1d-tcm-center-8" \
    --param "out=$tmp/bad" "$(ccl_bench)"; expect_status 2
  expect_err "point lrab-ring_1d-tcm-center-8 needs the 6-SIP ring_1d topology (-t ring_1d_6sip)"
  [ ! -e "$tmp/bad/lrab-torus_2d-tcm-center-8.json" ] || fail "a point ran before a bad one was refused"
}

milestone_ccl_fast_rerenders() {
  # a missing or foreign file is a clear error, and nothing is written
  run --param fast=1 --param "out=$tmp/none" "$(ccl_bench)"; expect_status 1
  expect_err "fast=1 re-renders an existing run, but $tmp/none/results.json cannot be read; run without fast=1 first"
  mkdir -p "$tmp/foreign"; printf '{"schema": "kernbench.gqa_sweep", "version": 1}\n' >"$tmp/foreign/results.json"
  run --param fast=1 --param "out=$tmp/foreign" "$(ccl_bench)"; expect_status 1
  expect_err "$tmp/foreign/results.json is not a milestone-ccl results file"
  [ "$(ls -A "$tmp/foreign")" = results.json ] || fail "outputs beside a foreign file: $(ls -A "$tmp/foreign")"
  # re-rendering a run's results: the same CSVs again, nothing simulated
  ccl_quick "$tmp/o" -j 2; expect_status 0
  mkdir "$tmp/first" && cp "$tmp/o"/* "$tmp/first/"
  rm "$tmp/o/summary.csv" "$tmp/o/buffer_kind.csv" "$tmp/o"/*.png "$tmp/o"/topology.dot 2>/dev/null
  run --param fast=1 --param "out=$tmp/o" "$(ccl_bench)"; expect_status 0
  expect_out "nothing simulated (fast=1: re-rendered $tmp/o/results.json)"
  ccl_outputs_present "$tmp/o"
  for f in results.json summary.csv buffer_kind.csv; do
    cmp -s "$tmp/first/$f" "$tmp/o/$f" || fail "$f differs after fast=1"
  done
}

milestone_ccl_compares_profiles() {
  # the same quick sweep on both profiles: the original's points differ (they
  # are faster at these sizes), and compare= draws both runs in profiles.png
  ccl_quick "$tmp/d" -j 2; expect_status 0
  ccl_quick "$tmp/o" -j 2 --profile original; expect_status 0
  expect_out "on default (profile original)"
  grep -q '"profile=original"' "$tmp/o/results.json" || fail "results.json does not record the profile"
  paste -d, <(cut -d, -f9 "$tmp/d/summary.csv" | tail -n +2) <(cut -d, -f9 "$tmp/o/summary.csv" | tail -n +2) |
    awk -F, '{ if (!($2 < $1)) bad = bad " " NR } END { if (bad) { print "not faster on original at rows" bad; exit 1 } }' \
    || fail "the original profile's points are not all faster"
  run --param fast=1 --param "out=$tmp/d" --param "compare=$tmp/nowhere" "$(ccl_bench)"; expect_status 1
  expect_err "compare=$tmp/nowhere draws another run, but $tmp/nowhere/results.json cannot be read"
  run --param fast=1 --param "out=$tmp/d" --param "compare=$tmp/o" "$(ccl_bench)"; expect_status 0
  if command -v gnuplot >/dev/null 2>&1; then
    [ "$(head -c 4 "$tmp/d/profiles.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "profiles.png is not a PNG"
  fi
}

milestone_ccl_stopped_run_leaves_nothing() {
  # one worker at a time, stopped once a point is done: SIGTERM ends the
  # parent (143) after it has terminated its worker
  "$KB" -j 1 --param quick=1 --param "out=$tmp/o" "$(ccl_bench)" >"$tmp/out" 2>"$tmp/err" & local pid=$!
  for _ in $(seq 600); do
    ls "$tmp/o"/.milestone_ccl.work.*/*.json >/dev/null 2>&1 && break
    sleep 0.05
  done
  ls "$tmp/o"/.milestone_ccl.work.*/*.json >/dev/null 2>&1 || fail "no point finished: $(cat "$tmp/err")"
  kill -TERM "$pid"; wait "$pid"; status=$?
  expect_status 143
  expect_err "interrupted (SIGTERM)"
  for f in results.json summary.csv buffer_kind.csv topology.dot topology.png latency_torus_2d.png algorithms.png; do
    [ ! -e "$tmp/o/$f" ] || fail "a stopped run wrote $f"
  done
  ! ls -A "$tmp/o" | grep -q partial || fail "temporary outputs left: $(ls -A "$tmp/o")"
  ! pgrep -f -- "out=$tmp/o/.milestone_ccl.work" >/dev/null || fail "a worker outlived its parent"
  # the next run removes the stopped run's work directory
  run --param fast=1 --param "out=$tmp/o" "$(ccl_bench)"; expect_status 1
  ! ls -A "$tmp/o" | grep -q '^\.milestone_ccl\.work' || fail "stale work directory kept: $(ls -A "$tmp/o")"
}

milestone_ccl_bad_arguments() {
  run -j 0 -e 'print(kb.jobs)'; expect_status 2; expect_err "option -j/--jobs needs a number of processes from 1 to 1024, got '0'"
  run -j; expect_status 2; expect_err "option -j/--jobs needs a number of processes"
  run -j 2 -j 3 -e 'print(kb.jobs)'; expect_status 2; expect_err "given twice"
  run -j3 -e 'print(kb.jobs)'; expect_status 0; expect_out "3"
  run --jobs=4 -e 'print(kb.jobs)'; expect_status 0; expect_out "4"
  run -e 'print(kb.jobs)'; expect_status 0; expect_out "nil"
  # a worker's point must name one of the sweep's
  run -t torus_2d_6sip_2x3 --param point=nope --param "out=$tmp" "$(ccl_bench)"; expect_status 2
  expect_err "point 'nope' is not ALGO-TOPOLOGY-BUFFER_KIND-ROOT-N_ELEM"
  run -t ring_1d_6sip --param point=lrab-torus_2d-tcm-center-8 --param "out=$tmp" "$(ccl_bench)"; expect_status 2
  expect_err "point lrab-torus_2d-tcm-center-8 needs the 6-SIP torus_2d topology (-t torus_2d_6sip_2x3)"
}
