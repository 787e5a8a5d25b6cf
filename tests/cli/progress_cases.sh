#!/usr/bin/env bash
# The progress line on stderr (docs/cli.md, "Progress") and kb.progress
# (sourced by tests/cli/cli_test.sh; uses its helpers).
#
# KERNBENCH_PROGRESS=1 forces the line with no delay and a redraw at every
# report (each 65536 events of a run), so these cases depend on event
# counts, never on the machine's speed; the cases of the automatic mode
# (a terminal through script(1), a pipe) make their run last 1.5 s of CPU
# time by construction, past the 1 s delay.

progress_cases=(progress_forced_shows_the_line progress_quiet_hides_it progress_never_on_a_pipe
                progress_on_a_terminal progress_point_of_n progress_bad_arguments_are_errors
                progress_output_is_identical progress_lines_are_cleared_before_output
                progress_partial_line_is_not_overwritten progress_bad_environment_value)

# A Lua script whose one simulation processes N events (arg[1], default
# 300000): a process that sleeps 1 ns N times.
unset KERNBENCH_PROGRESS # each case sets it when it means to

progress_script() {
  cat >"$tmp/many.lua" <<'LUA'
local s = sim.new()
local n = tonumber(arg[1]) or 300000
s:spawn(function() for _ = 1, n do s:sleep(1) end end)
s:run()
print("done", s:now())
LUA
}

# What a terminal would show of $1: each line is what follows its last
# "\r", with the clear-to-end-of-line sequences removed.
# (A terminal's own "\r\n" line ends are taken off first.)
progress_screen() { sed -e 's/\r$//' -e 's/.*\r//' -e 's/\x1b\[K//g' "$1"; }

progress_forced_shows_the_line() {
  progress_script
  KERNBENCH_PROGRESS=1 run "$tmp/many.lua"; expect_status 0; expect_out "done	300000"
  expect_err $'\rsim #1  t=65.53 us  65536 events  '
  expect_err "t=262.1 us  262144 events  "; expect_err " events/s"
  grep -q $'\x1b\\[K' "$tmp/err" || fail "no clear-to-end-of-line in: $(cat -v "$tmp/err")"
  # no newline while it lasts, and the line is gone when the run returns
  [ "$(tr -cd '\n' <"$tmp/err" | wc -c)" -eq 0 ] || fail "the progress line wrote a newline: $(cat -v "$tmp/err")"
  [ "$(tail -c 4 "$tmp/err" | od -An -c | tr -d ' ')" = '\r033[K' ] || fail "stderr does not end cleared: $(cat -v "$tmp/err")"
  # a run of fewer events than one report shows nothing
  KERNBENCH_PROGRESS=1 run "$tmp/many.lua" 60000; expect_status 0; expect_empty err
}

progress_quiet_hides_it() {
  progress_script
  KERNBENCH_PROGRESS=1 run -q "$tmp/many.lua"; expect_status 0; expect_empty err
  KERNBENCH_PROGRESS=1 run --quiet "$tmp/many.lua"; expect_status 0; expect_empty err
  KERNBENCH_PROGRESS=0 run "$tmp/many.lua"; expect_status 0; expect_empty err
}

# A Lua script whose run lasts 1.5 s of CPU time, so of wall time: past
# the 1 s delay by construction.
progress_long_script() {
  cat >"$tmp/long.lua" <<'LUA'
local s = sim.new()
local t0 = os.clock()
s:spawn(function() while os.clock() - t0 < 1.5 do s:sleep(1) end end)
s:run()
print("done")
LUA
}

progress_never_on_a_pipe() {
  progress_long_script
  # stderr a file, and a pipe: never without the force switch, however long
  "$KB" "$tmp/long.lua" </dev/null >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "done"; expect_empty err
  "$KB" "$tmp/long.lua" </dev/null 2>&1 >"$tmp/out" | cat >"$tmp/err"
  expect_out "done"; expect_empty err
}

progress_on_a_terminal() {
  # stderr (and stdout) on a terminal: script(1) gives the command a pty.
  progress_long_script
  env -u KERNBENCH_PROGRESS TERM=xterm script -qec "'$KB' '$tmp/long.lua'" /dev/null </dev/null >"$tmp/out" 2>&1
  grep -q $'\rsim #1  t=' "$tmp/out" || fail "no progress line on a terminal: $(cat -v "$tmp/out")"
  grep -qF ' events/s' "$tmp/out" || fail "no events/s on a terminal: $(cat -v "$tmp/out")"
  progress_screen "$tmp/out" | tr -d '\r' | grep -qx "done" || fail "'done' not on a line of its own: $(cat -v "$tmp/out")"
  env -u KERNBENCH_PROGRESS TERM=xterm script -qec "'$KB' -q '$tmp/long.lua'" /dev/null </dev/null >"$tmp/out" 2>&1
  grep -q 'events' "$tmp/out" && fail "--quiet shows the progress line: $(cat -v "$tmp/out")"
  true
}

progress_point_of_n() {
  cat >"$tmp/points.lua" <<'LUA'
local s = sim.new()
for k = 1, 3 do
  kb.progress(k, 3, "shape " .. k .. "\nx")
  s:spawn(function() for _ = 1, 70000 do s:sleep(1) end end)
  s:run()
end
kb.progress(0, 1) -- accepted: none of 1 started
print("ok")
LUA
  KERNBENCH_PROGRESS=1 run "$tmp/points.lua"; expect_status 0; expect_out "ok"
  expect_err "  point 1/3 (shape 1 x)"   # control characters become spaces
  expect_err "  point 2/3 (shape 2 x) ~ "; expect_err " s left"
  expect_err "  point 3/3 (shape 3 x) ~ "
  grep -qF "point 1/3 (shape 1 x) ~" "$tmp/err" && fail "an estimate before any point was done: $(cat -v "$tmp/err")"
  # without a terminal (and without the CLI's line) it is a silent no-op
  run "$tmp/points.lua"; expect_status 0; expect_out "ok"; expect_empty err
}

progress_bad_arguments_are_errors() {
  run -e 'kb.progress(1.5, 3)'; expect_status 1
  expect_err "kb.progress(k, n[, label]): k must be an integer, got 1.5"
  run -e 'kb.progress("1", 3)'; expect_status 1; expect_err "k must be an integer, got string"
  run -e 'kb.progress(1)'; expect_status 1; expect_err "n must be an integer, got no value"
  run -e 'kb.progress(0, 0)'; expect_status 1; expect_err "n (the number of points) must be >= 1, got 0"
  run -e 'kb.progress(4, 3)'; expect_status 1; expect_err "k must be between 0 and n, got k = 4, n = 3"
  run -e 'kb.progress(-1, 3)'; expect_status 1; expect_err "k must be between 0 and n, got k = -1, n = 3"
  run -e 'kb.progress(1, 3, {})'; expect_status 1; expect_err "label must be a string, got table"
  expect_err "(command line):1:"
  run -e 'kb.progress(0, 3) kb.progress(3, 3, "last") kb.progress(3.0, 3, nil) print("fine")'
  expect_status 0; expect_out "fine"
}

progress_output_is_identical() {
  # A bench's stdout, trace and statistics (less their wall-clock figures)
  # are the same with the line forced on and off.
  strip_wall() { sed -E 's/"(wall_s|events_per_s|resumes_per_s)":[-0-9.e+]+,?//g' "$1"; }
  for m in 0 1; do
    KERNBENCH_PROGRESS=$m run --stats-json "$tmp/s$m.json" --trace "$tmp/t$m.json" benches/deploy_roundtrip.lua
    expect_status 0
    cp "$tmp/out" "$tmp/out$m"; cp "$tmp/err" "$tmp/err$m"
  done
  grep -q $'\rsim #1  t=' "$tmp/err1" || fail "the forced run drew no line: $(cat -v "$tmp/err1")"
  grep -q $'\rsim #' "$tmp/err0" && fail "KERNBENCH_PROGRESS=0 drew a line"
  cmp -s "$tmp/out0" "$tmp/out1" || fail "stdout differs: $(diff "$tmp/out0" "$tmp/out1")"
  cmp -s "$tmp/t0.json" "$tmp/t1.json" || fail "the traces differ"
  strip_wall "$tmp/s0.json" >"$tmp/s0"; strip_wall "$tmp/s1.json" >"$tmp/s1"
  cmp -s "$tmp/s0" "$tmp/s1" || fail "the statistics differ: $(diff "$tmp/s0" "$tmp/s1" | head -5)"
  # stderr too, once the line is taken out, up to the summary: the summary
  # breaks ties between equally busy links and components by the address of
  # their statistics (src/cli/summary.c, by_util), which any change in
  # allocations (such as this line's Lua wrappers) may reorder.
  progress_screen "$tmp/err1" | sed '/^summary:/,$d' >"$tmp/e1"
  progress_screen "$tmp/err0" | sed '/^summary:/,$d' >"$tmp/e0"
  grep -q '^summary:' "$tmp/err0" || fail "no summary: $(cat "$tmp/err0")"
  cmp -s "$tmp/e0" "$tmp/e1" || fail "stderr differs: $(diff "$tmp/e0" "$tmp/e1" | head -5)"
}

progress_lines_are_cleared_before_output() {
  # Lua code printing inside a run, another process writing between runs,
  # a failure, a stop and the stats lines all start on a clean line: on the "screen" no line holds the progress text
  # and anything else.
  cat >"$tmp/talk.lua" <<'LUA'
io.stdout:setvbuf("line") -- stdout and stderr interleave in one file
local s = sim.new()
s:spawn(function()
  for i = 1, 400000 do -- reports at 65536 * k, the last one after the last print
    s:sleep(1)
    if i % 100000 == 0 and i < 400000 then print("tick " .. i) io.write("w" .. i, "\n") io.stderr:write("e" .. i .. "\n") end
  end
end)
s:run()
os.execute("echo child") -- between runs: written by another process
s:spawn(function() for _ = 1, 70000 do s:sleep(1) end error("boom") end)
s:run()
LUA
  KERNBENCH_PROGRESS=1 "$KB" "$tmp/talk.lua" </dev/null >"$tmp/all" 2>&1; status=$?
  expect_status 1
  grep -qF "events/s" "$tmp/all" || fail "no line drawn: $(cat -v "$tmp/all")"
  progress_screen "$tmp/all" >"$tmp/screen"
  for w in "tick 100000" "w200000" "e300000" "child"; do
    grep -qx "$w" "$tmp/screen" || fail "'$w' not on a line of its own: $(cat -v "$tmp/all")"
  done
  grep -q "^kernbench: .*boom" "$tmp/screen" || fail "the error is not on a line of its own: $(cat -v "$tmp/all")"
  grep -q "events/s" "$tmp/screen" && fail "a progress line was left on the screen: $(cat -v "$tmp/screen")"
  # a stop (--max-events) and the stats lines at exit
  progress_script
  KERNBENCH_PROGRESS=1 "$KB" --stats --max-events 250000 "$tmp/many.lua" </dev/null >"$tmp/all" 2>&1; status=$?
  expect_status 4
  progress_screen "$tmp/all" >"$tmp/screen"
  grep -q "^kernbench: stopped: --max-events" "$tmp/screen" || fail "the stop is not on a line of its own: $(cat -v "$tmp/all")"
  grep -q "^\[stats\] sim #1: events=250000" "$tmp/screen" || fail "the stats line is not on a line of its own: $(cat -v "$tmp/all")"
  grep -q "events/s" "$tmp/screen" && fail "a progress line was left on the screen: $(cat -v "$tmp/screen")"
  true
}

progress_partial_line_is_not_overwritten() {
  # An unfinished line of the script's own output is not drawn over.
  cat >"$tmp/partial.lua" <<'LUA'
local s = sim.new()
s:spawn(function()
  io.stderr:write("working...")
  for _ = 1, 200000 do s:sleep(1) end
  io.stderr:write(" done\n")
  for _ = 1, 200000 do s:sleep(1) end
end)
s:run()
LUA
  KERNBENCH_PROGRESS=1 run "$tmp/partial.lua"; expect_status 0
  progress_screen "$tmp/err" | grep -qx "working... done" || fail "the partial line was overwritten: $(cat -v "$tmp/err")"
  expect_err "  262144 events"   # drawn again once the line was finished
}

progress_bad_environment_value() {
  progress_script
  KERNBENCH_PROGRESS=yes run "$tmp/many.lua" 10; expect_status 0
  expect_err "kernbench: KERNBENCH_PROGRESS='yes': expected 1 (on) or 0 (off); ignored"
}
