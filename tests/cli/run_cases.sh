#!/usr/bin/env bash
# Interrupted, limited and failed runs (docs/cli.md, "Exit status" and
# "Output files"): a kill leaves no output that looks complete, SIGINT,
# SIGTERM and the run limits write consistent outputs marked truncated and
# exit with their own status, busy Lua loops stop on the first Ctrl-C,
# output paths are checked before anything runs and write errors fail the
# run (sourced by tests/cli/cli_test.sh; uses its helpers).
#
# Signal tests start tests/cli/endless_bench.lua (or a busy loop) in the
# background and send the signal once it has printed "ready", so they do
# not depend on the machine's speed; every wait is bounded (a hang fails).

run_cases=(runs_kill9_leaves_no_output runs_sigint_writes_truncated_outputs
           runs_sigterm_writes_truncated_outputs runs_busy_lua_stops_on_first_sigint
           runs_until_limit runs_max_events_limit runs_timeout_limit runs_limit_values_are_checked
           runs_output_paths_checked_before_running runs_unwritable_outputs_fail_before_running
           runs_full_disk_fails_the_run runs_write_error_leaves_no_output runs_bench_results_are_atomic)

endless=tests/cli/endless_bench.lua
all_outputs() { echo --trace "$1/t.json" --stats-json "$1/s.json" --op-log "$1/o.jsonl" --dump-config "$1/c.yaml"; }

# start_bg ARGS...: kernbench in the background (pid in $bg), output in $tmp/out and $tmp/err
start_bg() {
  "$KB" "$@" </dev/null >"$tmp/out" 2>"$tmp/err" &
  bg=$!
}
# wait_ready: until the background run prints "ready" (at most 60 s)
wait_ready() {
  for _ in $(seq 1200); do
    grep -q ready "$tmp/out" 2>/dev/null && return 0
    kill -0 "$bg" 2>/dev/null || fail "exited before it was ready: $(cat "$tmp/err")"
    sleep 0.05
  done
  kill -9 "$bg"; fail "not ready within 60 s"
}
# wait_bg: its exit status in $status (at most 60 s, else it is killed and the case fails)
wait_bg() {
  for _ in $(seq 1200); do
    kill -0 "$bg" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$bg" 2>/dev/null; then
    kill -9 "$bg"; wait "$bg"; fail "did not stop within 60 s; stderr: $(cat "$tmp/err")"
  fi
  wait "$bg"; status=$?
}
# signal_when_ready SIG ARGS...: runs kernbench, sends SIG once it is ready
signal_when_ready() {
  local sig=$1; shift
  start_bg "$@"; wait_ready; kill -"$sig" "$bg"; wait_bg
}
# as_user CMD...: without root's right to write anywhere (as nobody when root)
as_user() {
  if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
  else "$@"; fi
}
# stage_for_user: kernbench installed under $tmp/prefix (install_prefix,
# tests/cli/install_cases.sh) and the endless bench beside it, readable by
# anyone (sets $staged_kb and $staged_endless): the user as_user runs as may
# not be able to enter the checkout, a clone under a 0700 directory for one.
stage_for_user() {
  install_prefix
  cp "$endless" "$tmp/prefix/endless_bench.lua"
  chmod 755 "$tmp"; chmod -R a+rX "$tmp/prefix"
  staged_kb=$tmp/prefix/bin/kernbench staged_endless=$tmp/prefix/endless_bench.lua
  as_user test -x "$staged_kb" -a -r "$staged_endless" \
    || fail "the copy in $tmp/prefix cannot be read by the user as_user runs as (is \$TMPDIR inside a private directory?)"
}

runs_kill9_leaves_no_output() {
  mkdir -p "$tmp/o"
  # shellcheck disable=SC2046
  ENDLESS_RESULT="$tmp/o/result.csv" signal_when_ready KILL -q -t small_1cube_1pe $(all_outputs "$tmp/o") $endless
  [ "$status" -eq 137 ] || fail "exit status $status after SIGKILL, expected 137"
  for f in t.json s.json o.jsonl c.yaml result.csv; do
    [ ! -e "$tmp/o/$f" ] || fail "$f exists after kill -9 ($(wc -c <"$tmp/o/$f") bytes)"
    ls "$tmp/o/.$f.partial."[0-9]* >/dev/null 2>&1 || fail "no temporary .$f.partial.PID: $(ls -a "$tmp/o")"
  done
  [ -s "$tmp/o/.t.json.partial.$bg" ] || fail "the trace was not being written (.t.json.partial.$bg empty)"
  ! ls -a "$tmp/o" | grep -q spill || fail "an op-log spill file was left: $(ls -a "$tmp/o")"
}

stopped_outputs_check() { # REASON: the outputs in $tmp/o are complete and say they are truncated
  "$KB" tests/cli/stop_check.lua "$tmp/o" "$1" >"$tmp/check" 2>&1 || fail "outputs: $(cat "$tmp/check")"
  [ ! -e "$tmp/o/result.csv" ] || fail "the bench's result file exists"
  ! ls -a "$tmp/o" | grep -q partial || fail "temporary files left: $(ls -a "$tmp/o")"
}

runs_sigint_writes_truncated_outputs() {
  mkdir -p "$tmp/o"
  # shellcheck disable=SC2046
  ENDLESS_RESULT="$tmp/o/result.csv" signal_when_ready INT -q -t small_1cube_1pe $(all_outputs "$tmp/o") $endless
  expect_status 130
  # The signal finds either the simulation at an event or the bench's Lua
  # code between two launches; either way the message says where the
  # simulated time was.
  expect_err_where "kernbench: interrupted \\(SIGINT\\): .*simulation #1 (stopped at|had reached) t="
  expect_err "the trace, statistics and op log written say so"
  stopped_outputs_check sigint
  grep -q "^stopped_at sim 1 sim_ns" "$tmp/check" || fail "stats: no stopped_at: $(cat "$tmp/check")"
}

runs_sigterm_writes_truncated_outputs() {
  mkdir -p "$tmp/o"
  # shellcheck disable=SC2046
  ENDLESS_RESULT="$tmp/o/result.csv" signal_when_ready TERM -q -t small_1cube_1pe $(all_outputs "$tmp/o") $endless
  expect_status 143
  expect_err_where "kernbench: interrupted \\(SIGTERM\\): .*simulation #1 (stopped at|had reached) t="
  stopped_outputs_check sigterm
}

runs_busy_lua_stops_on_first_sigint() {
  local kernel='io.stdout:setvbuf("no")
return { name = "busy", description = "a busy loop", run = function(torch)
  torch.launch(function(tl) tl.cycles(1) BODY end, 1)
end }'
  local body cases=(
    'print("ready") while true do end'
    'print("ready") while true do pcall(function() while true do end end) end'
    'local co = coroutine.create(function() print("ready") while true do end end) coroutine.resume(co) while true do end'
    'coroutine.wrap(function() print("ready") while true do end end)()')
  local i=0
  for body in "${cases[@]}"; do # in a kernel (a simulation process)
    i=$((i + 1))
    printf '%s\n' "${kernel/BODY/$body}" >"$tmp/busy$i.lua"
    signal_when_ready INT -q -t small_1cube_1pe "$tmp/busy$i.lua"
    expect_status 130; expect_err "kernbench: interrupted (SIGINT): simulation #1 stopped at t="
    expect_err "Lua code stopped at $tmp/busy$i.lua:3"
  done
  # in the bench itself, swallowed by pcall
  printf 'return { name = "b", description = "d", run = function(torch)\n  io.stdout:setvbuf("no") print("ready")\n  while true do pcall(function() while true do end end) end\nend }\n' >"$tmp/bench.lua"
  signal_when_ready INT -q -t small_1cube_1pe "$tmp/bench.lua"; expect_status 130
  expect_err "kernbench: interrupted (SIGINT): Lua code stopped at $tmp/bench.lua:3"
  # in the bench after a launch: the message and stats say where the simulation was
  printf 'return { name = "b", description = "d", run = function(torch)\n  io.stdout:setvbuf("no") torch.launch(function(tl) tl.cycles(10) end, 1)\n  print("ready") while true do end\nend }\n' >"$tmp/after.lua"
  signal_when_ready INT -q -t small_1cube_1pe --stats-json "$tmp/after.json" "$tmp/after.lua"; expect_status 130
  expect_err_where "Lua code stopped at $tmp/after.lua:3; simulation #1 had reached t=[0-9.]+ ns after [0-9]+ events"
  grep -q '"stopped_at":{"sim":1,"sim_ns":' "$tmp/after.json" || fail "stats lack stopped_at: $(tail -c 300 "$tmp/after.json")"
  # in a process of a plain simulation, and in a latency model
  signal_when_ready INT -e 'io.stdout:setvbuf("no") local s = sim.new() s:spawn(function() print("ready") while true do end end) s:run()'
  expect_status 130; expect_err "interrupted (SIGINT): simulation #1 stopped at t=0.000 ns"
  expect_err "Lua code stopped at (command line):1"
  mkdir -p "$tmp/lm"
  printf 'return function(q) if q.op == "gemm" then print("ready") while true do end end return q.builtin_ns end\n' \
    >"$tmp/lm/busy.lua"
  signal_when_ready INT -e "io.stdout:setvbuf('no') package.path = '$tmp/?.lua;' .. package.path
    local torch = kb.torch { topology = kb.topology.load('small_1cube_1pe',
      { 'cube.pe_template.components.pe_gemm.latency_model=lua:lm.busy' }) }
    torch.launch(function(tl) tl.dot(tl.zeros({ 2, 2 }), tl.zeros({ 2, 2 })) end, 1)"
  expect_status 130; expect_err "interrupted (SIGINT): simulation #1 stopped at t="
  expect_err "Lua code stopped at $tmp/lm/busy.lua:1"
}

runs_until_limit() {
  mkdir -p "$tmp/o"
  # shellcheck disable=SC2046
  run -q -t small_1cube_1pe --until 20000 $(all_outputs "$tmp/o") $endless
  expect_status 3
  expect_err "kernbench: stopped: --until reached: simulation #1 stopped at t=20000.000 ns after"
  stopped_outputs_check until
  grep -q "^stopped_at sim 1 sim_ns 20000.000 events" "$tmp/check" || fail "$(cat "$tmp/check")"
  grep -q "^simulation_1 sim_ns 20000.000" "$tmp/check" || fail "$(cat "$tmp/check")"
  # every event before the limit was processed: the same run, deterministic
  cp "$tmp/check" "$tmp/first"
  # shellcheck disable=SC2046
  run -q -t small_1cube_1pe --until 20000 $(all_outputs "$tmp/o") $endless; expect_status 3
  "$KB" tests/cli/stop_check.lua "$tmp/o" until >"$tmp/check" 2>&1
  cmp -s "$tmp/first" "$tmp/check" || fail "two runs differ: $(diff "$tmp/first" "$tmp/check")"
  # a script's own s:run(until) past the limit stops at the limit too
  run --until 1.5 -e 'local s = sim.new() s:run(5) print(s:now())'; expect_status 3
  expect_err "simulation #1 stopped at t=1.500 ns after 0 events"
  # a simulation that ends before the limit is not stopped
  run --until 100 -e 'local s = sim.new() s:spawn(function() s:sleep(3) end) s:run() print(s:now())'
  expect_status 0; expect_out "3"
}

runs_max_events_limit() {
  mkdir -p "$tmp/o"
  # shellcheck disable=SC2046
  run -q -t small_1cube_1pe --max-events 3000 $(all_outputs "$tmp/o") $endless
  expect_status 4
  expect_err "kernbench: stopped: --max-events reached: simulation #1 stopped at t="
  expect_err "after 3000 events"
  stopped_outputs_check max_events
  grep -q "^simulation_1 sim_ns .* events 3000$" "$tmp/check" || fail "$(cat "$tmp/check")"
  run --max-events 5 -e 'local s = sim.new() s:spawn(function() s:sleep(1) end) s:run()'; expect_status 0
}

runs_timeout_limit() {
  mkdir -p "$tmp/o"
  # shellcheck disable=SC2046
  start_bg -q -t small_1cube_1pe --timeout 0.5 --trace-window 0:5000 $(all_outputs "$tmp/o") $endless; wait_bg
  expect_status 124
  # the timer may find the simulation running or the bench's Lua code between runs
  expect_err_where "kernbench: stopped: --timeout reached: (simulation #1 stopped at t=|Lua code stopped at .*; simulation #1 had reached t=)"
  stopped_outputs_check timeout
  # plain Lua code too
  start_bg --timeout 0.2 -e 'while true do end'; wait_bg
  expect_status 124; expect_err "kernbench: stopped: --timeout reached: Lua code stopped at (command line):1"
}

runs_limit_values_are_checked() {
  local bad
  for bad in -1 0 abc 1e3 inf nan 0x10 1.2.3 "" 1000000001 0.0000001; do
    run --timeout "$bad" -e 'print(1)'; expect_status 2; expect_err "--timeout"; expect_empty out
  done
  for bad in -5 0 0.0 1.0001 abc 1e6 9223372036854776 99999999999999999999; do
    run --until "$bad" -e 'print(1)'; expect_status 2; expect_err "--until '$bad'"; expect_empty out
  done
  for bad in -1 0 1.5 x 18446744073709551616; do
    run --max-events "$bad" -e 'print(1)'; expect_status 2; expect_err "--max-events '$bad'"; expect_empty out
  done
  run --until 1 --until 2 -e 'print(1)'; expect_status 2; expect_err "option '--until' given twice"
  run --stats-json "$tmp/a.json" --stats-json "$tmp/b.json" -e 'print(1)'; expect_status 2
  expect_err "option '--stats-json' given twice"
  run --timeout 3600 --until 9223372036854775.807 --max-events 18446744073709551615 -e 'print(1)'
  expect_status 0; expect_out "1"
}

runs_output_paths_checked_before_running() {
  # the endless bench would never end: each error must come before it runs
  local cases=("--trace $tmp/nodir/t.json|--trace $tmp/nodir/t.json: directory $tmp/nodir does not exist"
               "--stats-json $tmp|--stats-json $tmp: is a directory"
               "--op-log $tmp/f/o.jsonl|--op-log $tmp/f/o.jsonl: $tmp/f is not a directory"
               "--trace $tmp/x.json --op-log $tmp/./x.json|--trace $tmp/x.json and --op-log $tmp/./x.json name the same file"
               "--stats-json $tmp/link --dump-config $tmp/target|name the same file")
  : >"$tmp/f"; : >"$tmp/target"; ln -s "$tmp/target" "$tmp/link"
  local c
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    run -q -t small_1cube_1pe ${c%%|*} $endless; expect_status 2; expect_err "${c#*|}"
    expect_empty out
  done
  [ ! -e "$tmp/x.json" ] || fail "a rejected output was created"
  run -q -t small_1cube_1pe --trace /dev/null --op-log /dev/null benches/gemm_single_pe.lua; expect_status 0
  ! ls -a "$tmp" | grep -q partial || fail "temporary files left: $(ls -a "$tmp")"
}

runs_unwritable_outputs_fail_before_running() {
  stage_for_user
  mkdir -p "$tmp/ro"; chmod 555 "$tmp/ro"
  : >"$tmp/readonly.json"; chmod 444 "$tmp/readonly.json"
  as_user "$staged_kb" -q -t small_1cube_1pe --trace "$tmp/ro/t.json" "$staged_endless" </dev/null >"$tmp/out" 2>"$tmp/err"
  status=$?; expect_status 2; expect_empty out
  expect_err "--trace $tmp/ro/t.json: cannot create a file in $tmp/ro: Permission denied"
  as_user "$staged_kb" -q -t small_1cube_1pe --stats-json "$tmp/readonly.json" "$staged_endless" </dev/null >"$tmp/out" 2>"$tmp/err"
  status=$?; expect_status 2; expect_empty out
  expect_err "--stats-json $tmp/readonly.json: cannot write the file: Permission denied"
  # a bench's result file: kb.open_output at its start
  ENDLESS_RESULT="$tmp/ro/result.csv" as_user "$staged_kb" -q -t small_1cube_1pe "$staged_endless" </dev/null >"$tmp/out" 2>"$tmp/err"
  status=$?; expect_status 1; expect_empty out
  expect_err "kb.open_output: $tmp/ro/result.csv: cannot create a file in $tmp/ro: Permission denied"
}

runs_full_disk_fails_the_run() {
  local opt
  for opt in --trace --stats-json --op-log --dump-config; do
    run -q -t small_1cube_1pe "$opt" /dev/full benches/gemm_single_pe.lua; expect_status 1
    expect_err "kernbench: $opt /dev/full: write failed: No space left on device"
  done
  run -e 'kb.write_file("/dev/full", "x")'; expect_status 1
  expect_err "kb.open_output: /dev/full: write failed: No space left on device"
  # the GEMM milestone's CSV on a full disk (a link to /dev/full): an error, not an empty file
  mkdir -p "$tmp/ms"; ln -s /dev/full "$tmp/ms/gemm_sweep.csv"
  run -q --param quick=true --param out="$tmp/ms" run milestone-gemm; expect_status 1
  expect_err "kb.open_output: $tmp/ms/gemm_sweep.csv: write failed: No space left on device"
  # /dev/null and /dev/stdout are written directly, as before
  run -q -t small_1cube_1pe --op-log /dev/stdout --stats-json /dev/null benches/gemm_single_pe.lua
  expect_status 0; expect_out '"op_name":"dma_read"'
}

runs_write_error_leaves_no_output() {
  # a real write error on a regular file: the file size limit (EFBIG), with
  # SIGXFSZ ignored so the write fails instead of killing the process
  mkdir -p "$tmp/o"; echo previous >"$tmp/o/o.jsonl"
  (trap '' XFSZ; ulimit -f 1; exec "$KB" -q -t small_1cube_1pe --op-log "$tmp/o/o.jsonl" \
    benches/gemm_single_pe.lua) </dev/null >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 1; expect_err "--op-log $tmp/o/o.jsonl: write failed: File too large"
  [ "$(cat "$tmp/o/o.jsonl")" = previous ] || fail "the previous output was replaced"
  ! ls -a "$tmp/o" | grep -q partial || fail "temporary files left: $(ls -a "$tmp/o")"
}

runs_bench_results_are_atomic() {
  # a fake gnuplot writes the PNGs: they appear under their names only once complete
  mkdir -p "$tmp/bin" "$tmp/ms"
  cat >"$tmp/bin/gnuplot" <<'SH'
#!/bin/sh
for out in $(sed -n 's/^set output "\(.*\)"$/\1/p' "$1"); do
  case "$out" in */.*.png.partial.*) printf 'PNG' >"$out" ;; *) echo "gnuplot: not a temporary name: $out" >&2; exit 1 ;; esac
done
SH
  chmod +x "$tmp/bin/gnuplot"
  PATH="$tmp/bin:$PATH" run -q --param quick=true --param out="$tmp/ms" run milestone-gemm; expect_status 0
  for f in gemm_sweep.csv efficiency.png stage_breakdown.png; do
    [ -s "$tmp/ms/$f" ] || fail "$f missing: $(ls -a "$tmp/ms")"
  done
  ! ls -a "$tmp/ms" | grep -q partial || fail "temporary files left: $(ls -a "$tmp/ms")"
  # a failing gnuplot leaves no PNG
  printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/gnuplot"; rm -f "$tmp/ms"/*.png
  PATH="$tmp/bin:$PATH" run -q --param quick=true --param out="$tmp/ms" run milestone-gemm; expect_status 0
  expect_out "gnuplot failed"
  [ ! -e "$tmp/ms/efficiency.png" ] || fail "a PNG exists after gnuplot failed"
  ! ls -a "$tmp/ms" | grep -q partial || fail "temporary files left: $(ls -a "$tmp/ms")"
  # an output collected unclosed (the script failed) leaves nothing
  run -e "local o = kb.open_output('$tmp/r.csv') o:write('a,b') error('broken')"; expect_status 1
  [ ! -e "$tmp/r.csv" ] || fail "an unclosed output was created"
  ! ls -a "$tmp" | grep -q partial || fail "temporary files left: $(ls -a "$tmp")"
}
