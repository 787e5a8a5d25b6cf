#!/usr/bin/env bash
# Command-line behaviour of kernbench, one case per ctest entry:
#   cli_test.sh CASE /path/to/kernbench     run one case (from the repo root)
#   cli_test.sh --list                      list the cases
set -u

cases=(help version unknown_option missing_option_argument eval eval_error
       script_arguments missing_script stdin_script process_error deadlock
       repl_through_stdin repl_incomplete_input interactive_after_script stats
       demo_is_deterministic interrupt install_runs_anywhere library_path_override)
source "$(dirname "${BASH_SOURCE[0]}")/probe_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/trace_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/bench_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/kernel_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/golden_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/run_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/repl_cases.sh"
cases+=("${repl_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/names_cases.sh"
cases+=("${names_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/fidelity_cases.sh"
cases+=("${fidelity_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/install_cases.sh"
source "$(dirname "${BASH_SOURCE[0]}")/progress_cases.sh"
cases+=("${progress_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/pe_dma_cases.sh"
cases+=("${pe_dma_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/ipcq_cases.sh"
cases+=("${ipcq_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/ccl_cases.sh"
cases+=("${ccl_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/milestone_ccl_cases.sh"
cases+=("${milestone_ccl_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/models_cases.sh"
cases+=("${models_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/web_cases.sh"
cases+=("${web_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/draw_cases.sh"
cases+=("${draw_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/sweep_cases.sh"
cases+=("${sweep_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/scaling_cases.sh"
cases+=("${scaling_cases[@]}")
source "$(dirname "${BASH_SOURCE[0]}")/usage_cases.sh"
cases+=("${usage_cases[@]}")
cases+=("${probe_cases[@]}" "${trace_cases[@]}" "${bench_cases[@]}" "${kernel_cases[@]}" "${golden_cases[@]}"
        "${run_cases[@]}" "${install_cases[@]}")

if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${cases[@]}"
  exit 0
fi

case_name=$1
KB=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }

# run ARGS... : runs kernbench with stdin from $tmp/in (if any); sets
# $status and fills $tmp/out and $tmp/err
run() {
  if [ -f "$tmp/in" ]; then "$KB" "$@" <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
  else "$KB" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; fi
  status=$?
}
expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1; stderr: $(cat "$tmp/err")"; }
expect_out() { grep -qF -- "$1" "$tmp/out" || fail "stdout lacks '$1'; stdout was: $(cat "$tmp/out")"; }
expect_err() { grep -qF -- "$1" "$tmp/err" || fail "stderr lacks '$1'; stderr was: $(cat "$tmp/err")"; }
expect_err_where() { grep -qE -- "$1" "$tmp/err" || fail "stderr does not match '$1'; stderr was: $(cat "$tmp/err")"; }
expect_empty() { [ ! -s "$tmp/$1" ] || fail "$1 should be empty, was: $(cat "$tmp/$1")"; }

case $case_name in
help)
  run --help; expect_status 0
  expect_out "usage: kernbench [options] [script.lua [args...]]"
  expect_out "exit status: 0 success, 1 script, model or bench error"
  expect_out "2 usage error"; expect_out "130 SIGINT"
  run -h; expect_status 0; expect_out "--stats"; expect_out "--param KEY=VALUE"; expect_out "--results-json FILE"
  expect_out "help BENCH"
  expect_out "--timeout SECONDS"; expect_out "--until NS"; expect_out "--max-events N" ;;
version)
  run --version; expect_status 0; expect_out "kernbench 0.1.0 (Lua 5.4" ;;
unknown_option)
  run --frobnicate; expect_status 2
  expect_err "unknown option '--frobnicate'"; expect_err "kernbench --help"; expect_empty out ;;
missing_option_argument)
  run -e; expect_status 2; expect_err "option '-e' needs an argument" ;;
eval)
  run -e 'print(1 + 1)' -e 'print(type(sim.new), kb.version == sim.version)'; expect_status 0
  expect_out "2"; expect_out "function	true" ;;
eval_error)
  run -e 'error("broken")'; expect_status 1
  expect_err "kernbench: (command line):1: broken"; expect_err "stack traceback:" ;;
script_arguments)
  printf 'print(arg[0], arg[1], arg[2], #arg, ...)\nprint(arg[-1] ~= nil)\n' >"$tmp/args.lua"
  run "$tmp/args.lua" one two; expect_status 0
  expect_out "$tmp/args.lua	one	two	2	one	two"; expect_out "true" ;;
missing_script)
  run "$tmp/nope.lua"; expect_status 2; expect_err "cannot open $tmp/nope.lua: no such file" ;;
stdin_script)
  printf 'local s = sim.new()\ns:spawn(function() s:sleep(3) end)\ns:run()\nprint("t=" .. s:now())\n' >"$tmp/in"
  run -; expect_status 0; expect_out "t=3" ;;
process_error)
  cat >"$tmp/bad.lua" <<'LUA'
local s = sim.new()
s:spawn{name = "dma0", fn = function()
  s:sleep(12.5)
  local t = nil
  return t.field
end}
s:run()
LUA
  run "$tmp/bad.lua"; expect_status 1
  expect_err "kernbench: process 'dma0' failed at t=12.500 ns: $tmp/bad.lua:5: attempt to index a nil value (local 't')"
  expect_err "stack traceback:"; expect_err "bad.lua:5: in function" ;;
deadlock)
  cat >"$tmp/dead.lua" <<'LUA'
local s = sim.new()
local q = s:store(1, "q")
local r = s:resource(1, "bus")
s:spawn{name = "consumer", fn = function() q:get() end}
s:spawn{name = "holder", fn = function() r:acquire() s:sleep(1) r:acquire() end}
s:run()
LUA
  run "$tmp/dead.lua"; expect_status 1
  expect_err "deadlock: simulation quiescent at t=1.000 ns with 2 processes still waiting:"
  expect_err "process 'consumer' #1 ($tmp/dead.lua:4) waiting to get from store 'q'"
  expect_err "process 'holder' #2 ($tmp/dead.lua:5) waiting to acquire resource 'bus' (1 of 1 in use, 1 waiting)" ;;
repl_through_stdin)
  cat >"$tmp/in" <<'LUA'
x = 20 + 1
x * 2
function double(v)
  return v * 2
end
double(x), "two", nil
error("oops")
s = sim.new()
s:spawn(function() s:sleep(4) end)
s:run()
s:now()
LUA
  run; expect_status 0
  printf '42\n42\ttwo\tnil\nprocess '"'"'proc#1'"'"' #1 (active, function at stdin:1)\nempty\n4\n' >"$tmp/want"
  cmp -s "$tmp/out" "$tmp/want" || fail "stdout: $(cat "$tmp/out")"
  expect_err "kernbench: stdin:1: oops" ;;
repl_incomplete_input)
  printf 'for i = 1, 2 do\n  print(i)\n' >"$tmp/in"
  run; expect_status 0; expect_err "'end' expected"; expect_empty out ;;
interactive_after_script)
  printf 'answer = 42\n' >"$tmp/set.lua"
  printf 'answer + 1\n' >"$tmp/in"
  run -i "$tmp/set.lua"; expect_status 0; expect_out "43" ;;
stats)
  run --stats -e 'local s = sim.new(); s:spawn(function() for _ = 1, 10 do s:sleep(2) end end); s:run()'
  expect_status 0
  # 11 resumes (start + 10 wake-ups) and the process's completion event
  expect_err "[stats] sim #1: events=12 sim_time=20.000 ns wall_s="
  expect_err "events_per_s="; expect_err "resumes=11" ;;
demo_is_deterministic)
  run benches/perf/demo.lua; expect_status 0
  expect_out "delivered"; expect_out "arrival order:"
  grep -v '^wall clock' "$tmp/out" >"$tmp/first"
  run benches/perf/demo.lua; expect_status 0
  grep -v '^wall clock' "$tmp/out" >"$tmp/second"
  cmp -s "$tmp/first" "$tmp/second" || fail "two runs differ: $(diff "$tmp/first" "$tmp/second")" ;;
interrupt)
  # SIGINT stops a simulation run (polled by the event loop) and plain Lua
  # code (a hook); both end with exit status 130 and a message. The signal is
  # sent once the code runs (it prints "ready"), so a slow start cannot race it.
  interrupt_when_ready() {
    "$KB" -e "$1" >"$tmp/out" 2>"$tmp/err" & local pid=$!
    for _ in $(seq 200); do grep -q ready "$tmp/out" 2>/dev/null && break; sleep 0.05; done
    sleep 0.1
    kill -INT "$pid"; wait "$pid"; status=$?
  }
  interrupt_when_ready 'io.stdout:setvbuf("no") local s = sim.new(); s:spawn(function() print("ready") while true do s:sleep(1) end end); s:run()'
  expect_status 130; expect_err "interrupted (SIGINT): simulation #1 stopped at t="
  interrupt_when_ready 'io.stdout:setvbuf("no") print("ready") while true do end'
  expect_status 130; expect_err "kernbench: interrupted (SIGINT): Lua code stopped at (command line):1" ;;
install_runs_anywhere)
  build_dir=$(dirname "$(dirname "$KB")")
  # the README's `make install PREFIX=...`, with the build taken as done (-o build: the
  # build directory under test is not reconfigured while other tests use it)
  make -s -o build install BUILD="$build_dir" PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 \
    || fail "make install failed: $(cat "$tmp/install.log")"
  (cd / && "$tmp/prefix/bin/kernbench" -e 'print(kb.format_ns(2500), package.searchpath("kernbench", package.path))') \
    >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "2.5 us	$tmp/prefix/share/kernbench/lua/kernbench/init.lua"
  [ -f "$tmp/prefix/share/kernbench/benches/perf/demo.lua" ] || fail "benches not installed"
  # kernels are found with require "kernels.NAME" from anywhere
  (cd / && "$tmp/prefix/bin/kernbench" -q -t small_1cube_1pe "$tmp/prefix/share/kernbench/benches/gemm_single_pe.lua" \
     --verify-data) >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "verified C (f16)"
  # the shipped benches are listed, and one runs by its path, from anywhere
  (cd / && "$tmp/prefix/bin/kernbench" list) >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "sharded-gemm"; expect_out "milestone-gemm"
  (cd / && DEPLOY_ROWS=64 DEPLOY_COLS=32 "$tmp/prefix/bin/kernbench" -q -t small_2x2 \
     "$tmp/prefix/share/kernbench/benches/deploy_roundtrip.lua") >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "data identical"
  # and by every name the installed list prints (help shares run's resolution), one run by name
  for name in $(cd / && "$tmp/prefix/bin/kernbench" list | awk '{print $2}'); do
    (cd / && "$tmp/prefix/bin/kernbench" help "$name") >"$tmp/out" 2>"$tmp/err"; status=$?
    expect_status 0; expect_out "file: $tmp/prefix/share/kernbench/benches/"
  done
  (cd / && "$tmp/prefix/bin/kernbench" -q -t small_2x2 --param rows=64 --param cols=32 run deploy-roundtrip) \
    >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "data identical"
  # a user topology anywhere may name a shipped one as its base
  printf 'base: small_1cube_1pe\nname: mine\n' >"$tmp/mine.yaml"
  (cd / && "$tmp/prefix/bin/kernbench" -t "$tmp/mine.yaml" -e 'print(kb.topology.load():params().pes_per_cube)') \
    >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "1" ;;
library_path_override)
  mkdir -p "$tmp/lib/kernbench"
  printf 'return { version = "custom", format_ns = tostring }\n' >"$tmp/lib/kernbench/init.lua"
  KERNBENCH_PATH="$tmp/lib" run -e 'print(kb.version)'; expect_status 0; expect_out "custom"
  KERNBENCH_PATH="$tmp/none" run -e 'print(1)'; expect_status 1
  expect_err "KERNBENCH_PATH=$tmp/none does not contain kernbench/init.lua" ;;
probe_* | trace_* | bench_* | kernel_* | milestone_* | pipeline_* | stats_json_and_op_log | summary_and_quiet | dump_config \
  | results_match_golden_digests | golden_* | runs_* | progress_* | install_* | make_* | names_* | params_* | results_json_* \
  | exit_codes_* | verify_line_* | summary_and_docs_agree | readme_minimal_script | fidelity_* | pe_dma_* | ipcq_* \
  | ccl_* | web_* | draw_* | sweep_* | scaling_* | usage_* | llama_*)
  "$case_name" ;;
repl_help_* | repl_tab_* | repl_pretty_* | repl_history_* | repl_kb_*)
  "$case_name" ;;
*)
  fail "unknown case" ;;
esac
exit 0
