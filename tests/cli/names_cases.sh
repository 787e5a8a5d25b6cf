#!/usr/bin/env bash
# Command-line cases of the newcomer's first hour (docs/cli.md, docs/benches.md):
# benches by name from anywhere, module and `base:` resolution, bench
# parameters, the results file, exit codes and honest summaries (sourced
# by tests/cli/cli_test.sh; uses its helpers).

names_cases=(names_run_by_name_from_anywhere names_kernels_beside_the_bench names_topology_base_by_name
             params_typed_and_checked params_from_environment results_json_document results_json_failures
             exit_codes_usage verify_line_names_the_worst_element summary_and_docs_agree readme_minimal_script)

# A bench with one parameter of each type that prints what it receives.
write_param_bench() {
  cat >"$tmp/pb.lua" <<'LUA'
return {
  name = "params-demo", description = "prints its parameters",
  params = {
    n = { default = 4, min = 1, max = 64, help = "an integer", env = "PB_N" },
    scale = { default = 0.5, help = "a number" },
    fast = { default = false, help = "a boolean" },
    dtype = { default = "f16", choices = { "f16", "f32" }, help = "a string with choices" },
  },
  run = function(torch, p)
    print(("n=%s %s scale=%s %s fast=%s dtype=%s"):format(p.n, math.type(p.n), p.scale, math.type(p.scale),
      tostring(p.fast), p.dtype))
    torch.zeros({ p.n }, { dtype = p.dtype, dp = torch.DPPolicy { num_cubes = 1, num_pes = 1 } })
    return { n = p.n, sum = p.n * p.scale, list = { 1, 2, 3 } }
  end,
}
LUA
}

names_run_by_name_from_anywhere() {
  local kb_abs; kb_abs=$(cd "$(dirname "$KB")" && pwd)/$(basename "$KB")
  (cd / && "$kb_abs" list) >"$tmp/list" 2>"$tmp/err" || fail "list from /: $(cat "$tmp/err")"
  local names; names=$(awk '{print $2}' "$tmp/list")
  [ -n "$names" ] || fail "list printed no bench"
  # every listed name resolves from / (help shares run's resolution), by name and by index
  local name i=0
  for name in $names; do
    i=$((i + 1))
    (cd / && "$kb_abs" help "$name") >"$tmp/out" 2>"$tmp/err"; status=$?
    expect_status 0; expect_out "$name: "; expect_out "file: "
    (cd / && "$kb_abs" help "$i") >"$tmp/out" 2>"$tmp/err"; status=$?
    expect_status 0; expect_out "$name: "
  done
  # run by listed name, by file name and by file name with .lua, from /
  for name in deploy-roundtrip deploy_roundtrip deploy_roundtrip.lua; do
    (cd / && "$kb_abs" -q -t small_2x2 --param rows=64 --param cols=32 run "$name") >"$tmp/out" 2>"$tmp/err"; status=$?
    expect_status 0; expect_out "bench deploy-roundtrip (cols=32, rows=64, seed=7) on small_2x2: "
  done
  # an unknown name: a usage error with close matches
  (cd / && "$kb_abs" run deploy-rondtrip) >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 2; expect_err "no bench 'deploy-rondtrip'"; expect_err "did you mean deploy-roundtrip?"
  (cd / && "$kb_abs" run gemm) >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 2; expect_err "did you mean gemm-single-pe, "
  (cd / && "$kb_abs" help nosuch-bench-at-all) >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 2; expect_err "no bench 'nosuch-bench-at-all'"
}

names_kernels_beside_the_bench() {
  mkdir -p "$tmp/proj/kernels"
  printf 'return function(tl, p) tl.store(p, tl.load(p, {8}, "f32")) end\n' >"$tmp/proj/kernels/copy8.lua"
  cat >"$tmp/proj/bench.lua" <<'LUA'
local copy8 = require "kernels.copy8"
return { name = "beside", description = "a kernel next to the bench", run = function(torch)
  local d = torch.zeros({ 8 }, { dtype = "f32", dp = torch.DPPolicy { num_cubes = 1, num_pes = 1 } })
  torch.launch({ name = "copy8", fn = copy8 }, 1, d)
  torch.launch("kernels.copy8", 1, d) -- by module name too
end }
LUA
  local kb_abs; kb_abs=$(cd "$(dirname "$KB")" && pwd)/$(basename "$KB")
  (cd / && "$kb_abs" -q run "$tmp/proj/bench.lua") >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "bench beside on default: "
  # the shipped kernels are found from anywhere too
  (cd / && "$kb_abs" -q -t small_1cube_1pe --param m=32 --param k=32 --param n=32 run gemm-single-pe) \
    >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "bench gemm-single-pe (k=32, m=32, n=32)"
}

names_topology_base_by_name() {
  printf 'base: small_2x2\nname: mine\n' >"$tmp/mine.yaml"
  run -t "$tmp/mine.yaml" -e 'local t = kb.topology.load() print(t.name, t:params().cubes_per_sip, t:params().pes_per_cube)'
  expect_status 0; expect_out "mine	4	8"
  printf 'base: default.yaml\nname: mine2\n' >"$tmp/mine2.yaml"
  run -t "$tmp/mine2.yaml" -e 'print(kb.topology.load():params().cubes_per_sip)'; expect_status 0; expect_out "16"
  # a file beside the including file wins over a shipped one of the same name
  printf 'base: small_1cube_1pe.yaml\nname: local_small\n' >"$tmp/small_2x2.yaml"
  printf 'base: small_2x2.yaml\nname: mine\n' >"$tmp/mine.yaml"
  run -t "$tmp/mine.yaml" -e 'local p = kb.topology.load():params() print(p.cubes_per_sip, p.pes_per_cube)'
  expect_status 0; expect_out "1	1"
  # a base that is neither: the error names both places
  printf 'base: nosuch\nname: bad\n' >"$tmp/bad.yaml"
  run -t "$tmp/bad.yaml" -e 'kb.topology.load()'; expect_status 2
  expect_err "$tmp/bad.yaml:1:7: base: "; expect_err "nor is it a shipped topology in "
}

params_typed_and_checked() {
  write_param_bench
  run -q "$tmp/pb.lua"; expect_status 0; expect_out "n=4 integer scale=0.5 float fast=false dtype=f16"
  run -q --param n=8 --param scale=2 --param fast=yes --param=dtype=f32 "$tmp/pb.lua"; expect_status 0
  expect_out "n=8 integer scale=2.0 float fast=true dtype=f32"
  expect_out "bench params-demo (dtype=f32, fast=true, n=8, scale=2.0) on default: "
  run -q --param nn=3 "$tmp/pb.lua"; expect_status 2
  expect_err "bench params-demo has no parameter 'nn' (its parameters: dtype, fast, n, scale)"; expect_err "usage: kernbench"
  run -q --param n=3.5 "$tmp/pb.lua"; expect_status 2; expect_err "--param n=3.5: expected an integer for n (an integer)"
  run -q --param n=0 "$tmp/pb.lua"; expect_status 2; expect_err "expected at least 1"
  run -q --param n=65 "$tmp/pb.lua"; expect_status 2; expect_err "expected at most 64"
  run -q --param fast=maybe "$tmp/pb.lua"; expect_status 2; expect_err "expected true or false"
  run -q --param dtype=bf16 "$tmp/pb.lua"; expect_status 2; expect_err "expected one of f16, f32"
  run -q --param scale=nan "$tmp/pb.lua"; expect_status 2; expect_err "expected a finite number"
  run -q --param n=2 --param n=3 "$tmp/pb.lua"; expect_status 2; expect_err "'n' given twice"
  run -q --param n "$tmp/pb.lua"; expect_status 2; expect_err "option '--param' needs KEY=VALUE"
  # parameters go before the bench: an argument after it is a usage error with a hint
  run -q "$tmp/pb.lua" --fast; expect_status 2; expect_err "unexpected argument '--fast' after the bench"
  expect_err "did you mean --param fast=...?"
  # a bad declaration is reported when the bench is loaded
  printf 'return { name = "badp", description = "x", params = { n = { help = "no default" } }, run = function() end }\n' >"$tmp/badp.lua"
  run -q "$tmp/badp.lua"; expect_status 1; expect_err "params.n: 'default' is missing"
  # help and list --verbose show them
  run help "$tmp/pb.lua"; expect_status 0; expect_out "params-demo: prints its parameters"
  expect_out "  n=4         integer, >= 1, <= 64, env PB_N: an integer"
  expect_out "  dtype=f16   string, one of f16|f32: a string with choices"
  mkdir -p "$tmp/dir"; cp "$tmp/pb.lua" "$tmp/dir/"
  run list --verbose "$tmp/dir"; expect_status 0; expect_out "  1  params-demo  prints its parameters"
  expect_out "       fast=false  boolean: a boolean"
}

params_from_environment() {
  write_param_bench
  PB_N=16 run -q "$tmp/pb.lua"; expect_status 0; expect_out "n=16 integer"
  PB_N=16 run -q --param n=2 "$tmp/pb.lua"; expect_status 0; expect_out "n=2 integer"
  PB_N=lots run -q "$tmp/pb.lua"; expect_status 2; expect_err "PB_N=lots: expected an integer for parameter n"
  # the shipped benches' variables keep working
  DEPLOY_ROWS=64 DEPLOY_COLS=16 run -q -t small_2x2 run deploy-roundtrip; expect_status 0
  expect_out "deployed 64 x 16 f16"
}

results_json_document() {
  write_param_bench
  run -q --param n=8 --results-json "$tmp/r.json" "$tmp/pb.lua"; expect_status 0
  cat >"$tmp/check.lua" <<'LUA'
package.path = "tests/lua/?.lua;" .. package.path
local f = assert(io.open(arg[1]))
local doc = require("json_decode")(f:read("a"))
f:close()
assert(doc.schema == "kernbench.results" and doc.schema_version == 1, "schema")
assert(doc.kernbench_version == kb.version, "version")
assert(doc.bench.name == "params-demo" and doc.bench.path:match("pb%.lua$"), "bench")
assert(doc.status == "ok" and doc.error == nil, "status")
assert(doc.topology.name == "default" and doc.topology.digest:match("^fnv1a64:%x+$"), "topology")
assert(doc.topology.digest == require("kernbench.results").topology_digest(kb.topology.load("default")), "digest")
assert(doc.params.n == 8 and doc.params.scale == 0.5 and doc.params.fast == false and doc.params.dtype == "f16")
assert(doc.param_sources.n == "param" and doc.param_sources.scale == "default")
assert(doc.mode == "timing" and doc.verification == nil, "mode")
assert(doc.simulation.sim_ns > 0 and doc.simulation.events > 0 and doc.simulation.host_requests >= 1, "simulation")
assert(doc.result.n == 8 and doc.result.sum == 4 and #doc.result.list == 3, "result")
print("ok")
LUA
  "$KB" "$tmp/check.lua" "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "ok"
  # byte-identical across runs; the digest does not depend on where the topology file lives
  run -q --param n=8 --results-json "$tmp/r2.json" "$tmp/pb.lua"; expect_status 0
  cmp -s "$tmp/r.json" "$tmp/r2.json" || fail "two runs wrote different results"
  cp topologies/small_2x2.yaml topologies/default.yaml "$tmp/"
  run -e "local r = require('kernbench.results')
    print(r.topology_digest(kb.topology.load('small_2x2')) == r.topology_digest(kb.topology.load('$tmp/small_2x2.yaml')))"
  expect_out "true"
  # verification: each check with its tolerance and worst element
  run -q -t small_1cube_1pe --param m=16 --param k=16 --param n=16 --results-json "$tmp/v.json" \
    run gemm-single-pe --verify-data; expect_status 0
  grep -qF '"mode":"verify"' "$tmp/v.json" || fail "mode: $(cat "$tmp/v.json")"
  grep -qE '"verification":\[\{"name":"C","dtype":"f16","ok":true,"rtol":0.001,"atol":0.001,"worst_abs_error":[0-9.e-]+,"worst_index":\[[0-9]+,[0-9]+\],"got":' "$tmp/v.json" \
    || fail "verification: $(cat "$tmp/v.json")"
}

results_json_failures() {
  # a failed verification is recorded as such (and fails the run)
  cat >"$tmp/vf.lua" <<'LUA'
return { name = "vf", description = "verifies a wrong answer", run = function(torch)
  local d = torch.zeros({ 4 }, { dtype = "f32", dp = torch.DPPolicy { num_cubes = 1, num_pes = 1 } })
  torch.verify("x", d:cpu(), torch.tensor({ 0, 0, 1, 0 }))
end }
LUA
  run -q --results-json "$tmp/vf.json" "$tmp/vf.lua" --verify-data; expect_status 1
  expect_err "verify x: f32 result differs from the reference beyond rtol = atol = 1e-05: worst |error| 1 at [2] (got 0, expected 1)"
  grep -qF '"status":"verification_failed"' "$tmp/vf.json" || fail "status: $(cat "$tmp/vf.json")"
  grep -qF '"worst_index":[2],"got":0,"expected":1' "$tmp/vf.json" || fail "worst element: $(cat "$tmp/vf.json")"
  # a bench that fails otherwise writes nothing
  printf 'return { name = "boom", description = "fails", run = function(torch) error("kaput") end }\n' >"$tmp/boom.lua"
  run -q --results-json "$tmp/b.json" "$tmp/boom.lua"; expect_status 1
  [ ! -e "$tmp/b.json" ] || fail "a results file after a failure"
  # a stopped run writes nothing
  run -q --max-events 100 --results-json "$tmp/s.json" -t small_2x2 run deploy-roundtrip; expect_status 4
  [ ! -e "$tmp/s.json" ] || fail "a results file after a stop"
  ! ls -a "$tmp" | grep -q partial || fail "temporary files left: $(ls -a "$tmp")"
  # checked before anything runs, with the other outputs
  run -q --results-json "$tmp/nodir/r.json" run deploy-roundtrip; expect_status 2; expect_err "directory $tmp/nodir does not exist"
  run -q --results-json "$tmp/x.json" --trace "$tmp/x.json" run deploy-roundtrip; expect_status 2
  expect_err "name the same file"
  run -q --results-json "$tmp/a.json" --results-json "$tmp/b.json" run deploy-roundtrip; expect_status 2
  expect_err "option '--results-json' given twice"
  # a result JSON cannot hold
  printf 'return { name = "fnres", description = "returns a function", run = function(torch)\n  torch.zeros({1}, {dp = torch.DPPolicy{num_cubes = 1, num_pes = 1}}) return { f = print } end }\n' >"$tmp/fn.lua"
  run -q --results-json "$tmp/fn.json" "$tmp/fn.lua"; expect_status 1
  expect_err "its result cannot be written to --results-json: json: results.result.f is a function"
  [ ! -e "$tmp/fn.json" ] || fail "a results file for a result JSON cannot hold"
}

exit_codes_usage() {
  run -t nosuch -e 'print(1)'; expect_status 2; expect_err "--topology nosuch: "; expect_empty out
  run list /nonexistent; expect_status 2; expect_err "/nonexistent is not a directory"
  run list --bogus; expect_status 2; expect_err "unexpected argument '--bogus'"
  run help; expect_status 2; expect_err "usage: kernbench help BENCH"
  run help a b; expect_status 2
  run --device sip:9 -t small_2x2 run deploy-roundtrip; expect_status 2
  ! grep -q "stack traceback" "$tmp/err" || fail "a traceback for a usage error: $(cat "$tmp/err")"
  run run; expect_status 2
  run --param; expect_status 2
}

verify_line_names_the_worst_element() {
  run -q -t small_1cube_1pe --param m=16 --param k=16 --param n=16 run gemm-single-pe --verify-data; expect_status 0
  grep -qE '^verified C \(f16\) within rtol = atol = 0\.001: worst \|error\| [0-9.e-]+ at \[[0-9]+, [0-9]+\] \(got [-0-9.e]+, expected [-0-9.e]+\)$' \
    "$tmp/out" || fail "verify line: $(cat "$tmp/out")"
}

summary_and_docs_agree() {
  run probe; expect_status 0
  # the summary example in docs/cli.md is this run's: same counts and times
  local doc_line out_line
  doc_line=$(grep -m1 '^summary: ' docs/cli.md | sed 's/, wall .*//')
  out_line=$(grep -m1 '^summary: ' "$tmp/err" | sed 's/, wall .*//')
  [ -n "$doc_line" ] && [ "$doc_line" = "$out_line" ] || fail "docs/cli.md says '$doc_line', the run '$out_line'"
  grep -qF "$(grep -m1 '^  host requests: ' "$tmp/err")" docs/cli.md || fail "docs/cli.md's host requests line differs"
  # "requests" means host requests, and says so
  ! grep -qE '^  requests: ' "$tmp/err" || fail "an unqualified requests line"
}

readme_minimal_script() {
  # the README's minimal script, as printed there, prints when each item arrives
  awk '/^A minimal script:/{f=1} f && /^```lua/{g=1; next} g && /^```/{exit} g' README.md >"$tmp/min.lua"
  [ -s "$tmp/min.lua" ] || fail "no minimal script in README.md"
  run "$tmp/min.lua"; expect_status 0
  expect_out "t=10 ns got 1"; expect_out "t=20 ns got 2"; expect_out "t=30 ns got 3"
}
