#!/usr/bin/env bash
# Command-line cases of the REPL for people (docs/repl.md): help, Tab
# completion, pretty-printed results, kb.probe, and the history file
# (sourced by tests/cli/cli_test.sh; uses its helpers). Terminal behaviour
# runs through tests/cli/pty_drive (a pseudo-terminal; its path in
# $KB_PTY_DRIVE, else next to kernbench), which waits for each expected
# text and kills the REPL after 60 s, so a case never hangs.

repl_cases=(repl_help_lists_modules repl_help_shows_signatures repl_tab_completes_fields_and_methods
            repl_pretty_prints_results repl_pretty_prints_on_a_terminal repl_history_persists
            repl_kb_probe_reachable)

# pty SCRIPT_LINES...: runs the REPL on a terminal with the steps given
# (pty_drive's: expect TEXT, send TEXT, pause) after its first prompt, and
# Ctrl-D at the next prompt after them; the terminal's output in $tmp/out,
# status in $status
pty() {
  local drive=${KB_PTY_DRIVE:-$(dirname "$KB")/pty_drive}
  printf '%s\n' 'expect Ctrl-D exits' 'expect > ' "$@" 'expect \n> ' 'send \x04' >"$tmp/steps"
  (cd "$tmp" && env TERM=dumb HOME="$tmp" KERNBENCH_HISTORY="${HISTFILE_FOR_TEST:-$tmp/history}" \
     "$drive" 60 "$tmp/steps" "$KB" -q) >"$tmp/out" 2>"$tmp/err"
  status=$?
}
expect_no_out() { ! grep -qF -- "$1" "$tmp/out" || fail "stdout has '$1'; stdout was: $(cat "$tmp/out")"; }

repl_help_lists_modules() {
  pty 'send help()\r' 'expect Types'
  expect_status 0
  expect_out "globals: sim, kb, help; help() lists what they hold, Tab completes names"
  for want in "  sim " "  kb " "  help " "  tl " "  kb.topology " "  kb.torch" "  kb.probe " "  kb.components " \
              "  kb.addr " "  kb.format_ns" "  torch " "  Simulation s " "  Topology t " "  Tensor t "; do
    expect_out "$want"
  done
}

repl_help_shows_signatures() {
  pty 'send help(kb.topology.load)\r' 'expect docs/lua-api.md' \
      'send help("tl.load")\r' 'expect docs/tl.md' 'send help("t:summary")\r' 'expect (Topology' \
      'send help(42)\r' 'expect no help' 'send help("tl.nothing")\r' 'expect no help'
  expect_status 0
  expect_out "kb.topology.load([path[, overrides]]) -> t"; expect_out "  load and compile a topology"
  expect_out "tl.load(ptr, shape[, dtype]) or tl.load(ref) -> h"; expect_out "  (blocking) DMA from memory into TCM"
  expect_out "t:summary() -> string"
  expect_out "no help for this value: a number"; expect_out 'no help for "tl.nothing"'
}

repl_tab_completes_fields_and_methods() {
  : >"$tmp/zzfile_marker.txt"
  # one candidate: completed in place (the typed text never holds the result)
  pty 'send kb.topology.lo\t' 'pause' 'send ("small_2x2"):params().nodes * 2\r' 'expect 1100' \
      'send t = kb.topology.load("small_2x2")\r' 'pause' \
      'send t:par\t' 'pause' 'send ().edges + 2\r' 'expect 1700' \
      'send kb.form\t' 'pause' 'send (1500)\r' 'expect 1.5 us' \
      'send kb.topology.\t\t' 'expect implementations' 'send \x15' \
      'send t:path\t\t' 'expect path_latency_ns' 'send \x15' \
      'send zzfile\t\t' 'pause' 'send \x15' 'send "end" .. "ed"\r' 'expect ended'
  expect_status 0
  expect_out "kb.topology.load"; expect_out "kb.topology.implementations"; expect_out "kb.topology.default_overrides"
  expect_out "t:params"; expect_out "t:path_edges"; expect_out "kb.format_ns"
  expect_no_out "zzfile_marker"
}

repl_pretty_prints_results() {
  cat >"$tmp/in" <<'LUA'
{1, 2, {a = "x", b = {c = {d = 1}}}, [true] = 0}
t = {} for i = 1, 25 do t[i] = i end
t
kb.torch{topology = kb.topology.load("small_1cube_1pe")}.arange(12):reshape({3, 4})
kb.topology.load("small_2x2")
sim.new{topology = kb.topology.load("small_2x2")}
42, "two", nil, {x = {}}
setmetatable({}, {})
LUA
  run; expect_status 0
  expect_out '{1, 2, {a = "x", b = {c = {...} (1 entry)}}, [true] = 0}'
  expect_out "  1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20,"
  expect_out "  ... (5 more)"
  expect_out "tensor{shape = {3, 4}, dtype = i32, device = cpu, values = {0, 1, 2, 3, 4, 5, 6, 7, ... (4 more)}}"
  expect_out "topology small_2x2 ("; expect_out "  nodes: 550, directed edges: 1698"
  expect_out "0 events processed, 0 pending) on topology small_2x2"
  expect_out "42	two	nil	{x = {}}"
  grep -qx '{}' "$tmp/out" || fail "an empty table with a metatable: $(cat "$tmp/out")"
  expect_no_out "table: 0x"; expect_empty err
}

repl_pretty_prints_on_a_terminal() {
  pty 'send {k = {1, 2}, s = sim.new()}\r' 'expect pending)}' \
      'send kb.topology.load("small_2x2")\r' 'expect edge kinds'
  expect_status 0
  expect_out "{k = {1, 2}, s = sim #1 (t=0.000 ns, 0 events processed, 0 pending)}"
  expect_out "  nodes: 550, directed edges: 1698"
  expect_no_out "table: 0x"
}

repl_history_persists() {
  HISTFILE_FOR_TEST="$tmp/kb_history"
  pty 'send "recalled " .. 6 * 7\r' 'expect recalled 42'
  expect_status 0
  [ -s "$tmp/kb_history" ] || fail "no history written to $tmp/kb_history"
  grep -q "recalled" "$tmp/kb_history" || fail "history lacks the line: $(cat "$tmp/kb_history")"
  # a second session recalls it with Up and runs it again
  pty 'send \e[A' 'pause' 'send \r' 'expect recalled 42'
  expect_status 0
  expect_out "recalled 42"
  unset HISTFILE_FOR_TEST
}

repl_kb_probe_reachable() {
  printf 'type(kb.probe.run), #kb.probe.case_names(), kb.probe.NBYTES\nkb.probe.passed(kb.probe.run{topology = "small_2x2", case = "h2d-1hop"})\n' >"$tmp/in"
  run; expect_status 0; expect_out "function	13	32768"; expect_out "true"
  rm "$tmp/in"
  run probe --case h2d-1hop -t small_2x2; expect_status 0; expect_out "PASS"
}
