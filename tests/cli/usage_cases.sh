#!/usr/bin/env bash
# A user's mistake is exit status 2 and one line, never a traceback
# (docs/cli.md "Exit status", docs/reliability.md "Usage errors"); a write
# limit is a message and exit status 1; the newcomer's smaller findings.
# Sourced by tests/cli/cli_test.sh; uses its helpers.

usage_cases=(usage_mistakes_are_one_line usage_errors_leave_no_output usage_internal_errors_keep_traceback
             usage_write_limit_fails_the_run usage_repl_torch_global usage_workers_summary
             usage_all_cubes_header usage_numbers_shortest_round_trip usage_torch_doc_current)

# The mistakes, one a line: MESSAGE FRAGMENT <TAB> ARGUMENTS (shell words,
# expanded by eval: $tmp is the case's directory). Each must exit 2 with the
# fragment on stderr, at most 3 lines, the first `kernbench...: `, and no
# traceback. Grouped by what is wrong.
usage_table() {
  cat <<'TABLE'
unknown option '--frobnicate'	--frobnicate
option '--trace' needs an argument	--trace
--timeout	--timeout abc -e 1
--until	--until 0 -e 1
--max-events	--max-events x -e 1
-j/--jobs needs a number	-j 0 -e 1
need --trace FILE	--trace-flows -e 1
given twice	--stats-json $tmp/a.json --stats-json $tmp/b.json -e 1
needs KEY.PATH=VALUE	--set novalue -e 1
option '--profile' needs	--profile a=b -e 1
--topology nosuch	--topology nosuch -e 1
--ccl $tmp/none.yaml	--ccl $tmp/none.yaml -e 1
--ccl $tmp/bad_ccl.yaml:1:1: algorithms: missing	--ccl $tmp/bad_ccl.yaml run ccl-allreduce
directory $tmp/nodir does not exist	--trace $tmp/nodir/t.json -e 1
need a bench	--param n=1 -e 1
need a bench	--results-json $tmp/r.json probe
cube.nope: unknown key	--set cube.nope=3 run sharded-gemm
cube.nope: unknown key	--set cube.nope=3 benches/sharded_gemm.lua
cube.nope: unknown key	--set cube.nope=3 -e 'kb.topology.load()'
expected a number, got 'abc'	--set cube.links.router_link_bw_gbs=abc run deploy-roundtrip
no profile 'nosuch'	--profile nosuch run deploy-roundtrip
cannot open topology file	-t $tmp/bad.yaml run deploy-roundtrip
kernbench probe: --set cube.nope=3: cube.nope: unknown key	--set cube.nope=3 probe
kernbench draw: --set cube.nope=3	--set cube.nope=3 draw -o $tmp/x.svg
kernbench web: --set cube.nope=3	--set cube.nope=3 web --no-open --port 0
needs KEY=VALUE	--param noequals run deploy-roundtrip
has no parameter 'nope' (its parameters:	--param nope=1 run deploy-roundtrip
expected an integer for rows	--param rows=abc run deploy-roundtrip
'rows' given twice	--param rows=64 --param rows=32 run deploy-roundtrip
expected one of tcm, sram, hbm	--param buffer_kind=dram run ccl-allreduce
known: lrab_hierarchical_allreduce, ring_allreduce, tree_allreduce	--param algorithm=foo run ccl-allreduce
--param root=nowhere: expected center, corner or a cube index 0 .. 15	--param root=nowhere run ccl-allreduce
expected one of '' (empty), tcm, sram, hbm	--param buffer_kind=dram run llama-layer
unknown model 'foo': one of llama-3-70b, llama-3-8b, llama-tiny	--param model=foo run llama-layer
--param out=/dev/null: it exists and is not a directory	--param out=/dev/null run llama-layer
--param out=/dev/null: it exists and is not a directory	--param out=/dev/null run milestone-ccl
--param out=/dev/null/x: cannot create that directory	--param out=/dev/null/x run milestone-gemm
--param out=/dev/null: it exists and is not a directory	--param out=/dev/null run milestone-gqa-llama70b
--param out=/dev/null: it exists and is not a directory	--param out=/dev/null run pe-to-pe-latency
--param slot_size=24: expected a multiple of 16	--param slot_size=24 run ccl-allreduce
--param slot_size=24: expected a multiple of 16	--param slot_size=24 run llama-layer
--param mode=bogus: expected one of prefill, decode	--param mode=bogus run llama-layer
--param cubes=7: the all-reduces take one cube or all 16	--param cubes=7 run llama-layer
has no parameter 'nope'	--param nope=1 benches/deploy_roundtrip.lua
--param cubes=99: a SIP of the topology has 16 cubes	--param cubes=99 run sharded-gemm
--param pes=99: a cube of the topology has 8 PEs	--param pes=99 benches/sharded_gemm.lua
--param point=bogus: point 'bogus' is not	--param point=bogus run milestone-ccl
--device sip:99: the topology has 2 SIP(s)	--device sip:99 run deploy-roundtrip
--device 'bogus': expected all or sip:N	--device bogus run deploy-roundtrip
unexpected argument '--frob' after the bench	run deploy-roundtrip --frob
is a plain script	--param n=1 $tmp/plain.lua
cannot open missing.lua: no such file	missing.lua
cannot open $tmp/missing.lua: no such file	$tmp/missing.lua
subcommands: draw, help, list, probe, run, sweep, web	frobnicate
did you mean 'kernbench run'?	rnu sharded-gemm
did you mean 'kernbench probe'?	prboe
did you mean 'kernbench run sharded-gemm'?	sharded_gemm
run: which bench?	run
did you mean deploy-roundtrip?	run deploy-rondtrip
kernbench run: no bench 'nosuch-at-all'	run nosuch-at-all
kernbench help: which bench?	help
kernbench help: no bench 'nosuch'	help nosuch
kernbench list: $tmp/none is not a directory	list $tmp/none
kernbench list: unexpected argument '--frob'	list --frob
kernbench probe: unknown option '--frob'	probe --frob
kernbench probe: unknown case 'nope'	probe --case nope
option '--case' needs an argument	probe --case
kernbench probe: unexpected argument 'extra'	probe extra
no topology file 'nosuch'	probe --topology nosuch
kernbench draw: --view 'nope': expected one of system, sip, cube, pe	draw --view nope
kernbench draw: --format 'gif'	draw --format gif
kernbench draw: --cube 'x'	draw --cube x
no node 'nonode'	draw --route nonode sip0.cube0.sram
kernbench draw: --stats $tmp/none.json	draw --stats $tmp/none.json
kernbench web: --port 'x'	web --port x
kernbench web: --port '70000'	web --port 70000
kernbench web: unknown option '--frob'	web --frob
kernbench web: --stats $tmp/none.json	web --no-open --stats $tmp/none.json
kernbench sweep: which sweep file?	sweep
kernbench sweep: nope.lua: no such sweep file	sweep nope.lua
kernbench sweep: --backend nope	sweep sweeps/allreduce.lua --backend nope --dry-run
do not apply to a sweep	-t small_2x2 sweep sweeps/allreduce.lua --dry-run
do not apply to a sweep	--data sweep sweeps/allreduce.lua --dry-run
kernbench sweep: unknown option '--frob'	sweep --frob
TABLE
}

usage_mistakes_are_one_line() {
  printf 'base: nosuch\nname: bad\n' >"$tmp/bad.yaml"
  printf 'print("plain")\n' >"$tmp/plain.lua"
  printf 'defaults:\n  algorithm: nope\n' >"$tmp/bad_ccl.yaml"
  local frag args n=0 bad="" lines
  while IFS=$'\t' read -r frag args; do
    [ -n "$frag" ] || continue
    n=$((n + 1))
    frag=$(eval "printf '%s' \"$frag\"")
    eval "set -- $args"
    timeout 60 "$KB" -q "$@" </dev/null >"$tmp/out" 2>"$tmp/err"; status=$?
    lines=$(wc -l <"$tmp/err")
    if [ "$status" -ne 2 ]; then bad+="
  kernbench $args: exit status $status, expected 2"
    elif ! grep -qF -- "$frag" "$tmp/err"; then bad+="
  kernbench $args: stderr lacks '$frag'"
    elif grep -q "stack traceback" "$tmp/err"; then bad+="
  kernbench $args: a traceback"
    elif [ "$lines" -gt 3 ]; then bad+="
  kernbench $args: $lines lines on stderr, expected at most 3"
    elif ! head -1 "$tmp/err" | grep -qE '^kernbench( [a-z]+)?: '; then bad+="
  kernbench $args: the first line is not 'kernbench[ COMMAND]: MESSAGE'"
    else
      continue
    fi
    bad+="
$(sed 's/^/    | /' "$tmp/err" | head -12)"
  done < <(usage_table)
  [ "$n" -ge 60 ] || fail "only $n usage cases enumerated"
  [ -z "$bad" ] || fail "usage mistakes not reported as one line with exit status 2:$bad"
  [ ! -e "$tmp/x.svg" ] && [ ! -e "$tmp/r.json" ] || fail "a usage error wrote an output"
}

usage_errors_leave_no_output() {
  # a mistake found while running (the topology, a bench's own check): no
  # trace, statistics or op log is left, as for one found before
  run -q --trace "$tmp/t.json" --stats-json "$tmp/s.json" --op-log "$tmp/o.jsonl" --set cube.nope=3 \
    run deploy-roundtrip
  expect_status 2
  run -q --trace "$tmp/t.json" --stats-json "$tmp/s.json" --op-log "$tmp/o.jsonl" --results-json "$tmp/r.json" \
    --param root=nowhere -t small_2x2 run ccl-allreduce
  expect_status 2
  [ -z "$(ls -A "$tmp" | grep -v -e '^in$' -e '^out$' -e '^err$')" ] || fail "outputs left: $(ls -a "$tmp")"
}

usage_internal_errors_keep_traceback() {
  # not a user's mistake: exit status 1 with the traceback
  run -e 'error("boom")'; expect_status 1; expect_err "boom"; expect_err "stack traceback"
  # a usage error raised by a script's own code is one line too (kernbench.usage)
  run -e 'require("kernbench.usage").error("bad thing %d", 3)'; expect_status 2
  expect_err "kernbench: bad thing 3"
  ! grep -q "stack traceback" "$tmp/err" || fail "a traceback: $(cat "$tmp/err")"
}

# Runs kernbench ARGS... with SIGXFSZ at its default action (whatever the
# test's own parent ignores; a shell cannot undo an ignore it inherited,
# env --default-signal can) under a file-size limit of 64 blocks.
run_limited() {
  env --default-signal=XFSZ bash -c 'ulimit -f 64; exec "$@"' limited "$KB" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
  status=$?
}

usage_write_limit_fails_the_run() {
  # the disposition the runs below start with really is the default one
  local ign
  ign=$(env --default-signal=XFSZ bash -c 'ulimit -f 64; exec grep SigIgn /proc/self/status' | awk '{print $2}')
  [ $(( (0x$ign >> 24) & 1 )) -eq 0 ] || fail "SIGXFSZ is still ignored (SigIgn $ign)"
  mkdir -p "$tmp/o"
  local opt f
  for opt in --trace --stats-json --op-log; do
    f="$tmp/o/out${opt//-/_}"
    run_limited -q $opt "$f" benches/sharded_gemm.lua
    [ "$status" -ne 153 ] || fail "$opt: killed by SIGXFSZ (exit 153)"
    expect_status 1
    expect_err "kernbench: $opt $f"
    expect_err "File too large"
    [ ! -e "$f" ] || fail "$opt: the target exists after a failed write ($(wc -c <"$f") bytes)"
    ! ls -a "$tmp/o" | grep -q partial || fail "$opt: temporary files left: $(ls -a "$tmp/o")"
  done
  # an existing target is kept as it was
  echo previous >"$tmp/o/t.json"
  run_limited -q --trace "$tmp/o/t.json" --trace-counters benches/sharded_gemm.lua; expect_status 1
  [ "$(cat "$tmp/o/t.json")" = previous ] || fail "the previous trace was replaced"
}

usage_repl_torch_global() {
  # help() lists torch among the globals: it exists in the REPL (a runtime
  # on the default topology, made when first used); tl is not a global
  printf 'print(type(torch), torch.topology.name)\nprint(rawget(_G, "tl"))\nhelp()\n' >"$tmp/in"
  run -t small_2x2; expect_status 0
  expect_out "table	small_2x2"
  local globals; globals=$(sed -n '/^Globals:/,/^What kb holds:/p' "$tmp/out")
  grep -q "^  torch " <<<"$globals" || fail "help() does not list torch among the globals: $globals"
  ! grep -q "^  tl " <<<"$globals" || fail "help() lists tl, which is no global: $globals"
}

usage_workers_summary() {
  # a bench whose work ran in other processes says so in the run summary
  cat >"$tmp/w.lua" <<'LUA'
return { name = "workers-demo", description = "work done elsewhere",
  renders_only = function() return "the 3 points were simulated by worker processes: 42 events" end,
  run = function() end }
LUA
  run "$tmp/w.lua"; expect_status 0
  expect_err "summary: 1 simulation in this process, 0 events here (the 3 points were simulated by worker processes: 42 events)"
}

usage_all_cubes_header() {
  run -q -t small_2x2 run sharded-gemm; expect_status 0
  expect_out "cubes=all"; expect_out "pes=all"; ! grep -q "cubes=0" "$tmp/out" || fail "cubes=0 printed: $(cat "$tmp/out")"
  run -q -t small_2x2 --param cubes=2 run sharded-gemm; expect_status 0; expect_out "cubes=2"
  run help sharded-gemm; expect_status 0; expect_out "cubes=0"; expect_out "0: every cube of the SIP"
}

usage_numbers_shortest_round_trip() {
  # every CSV and JSON writer prints a number in its shortest form that
  # reads back as the same double (kernbench.json.number)
  cat >"$tmp/n.lua" <<'LUA'
local json = require "kernbench.json"
local cases = { 209.2, 0.1 + 0.2, 1 / 3, 1e300, 5e-324, 2.5, 100.0, -0.0, 123456789012345680000.0, 209.20000000000002 }
for _, x in ipairs(cases) do
  local s = json.number(x)
  assert(tonumber(s) == x, s)
  for p = 1, 17 do
    local t = ("%." .. p .. "g"):format(x)
    if tonumber(t) == x then
      assert(#s <= #t or s == ("%d"):format(x), ("%s: %s is not the shortest (%s)"):format(x, s, t))
      break
    end
  end
  io.write(s, " ")
end
print(json.encode({ 209.2 }), require("kernbench.sweep.file").text(209.2))
LUA
  run "$tmp/n.lua"; expect_status 0
  expect_out "209.2 0.30000000000000004 0.3333333333333333 1e+300 5e-324 2.5 100 "
  expect_out "[209.2]	209.2"
}

usage_torch_doc_current() {
  # docs/torch.md no longer says the distributed shim is not built
  ! grep -qiE "(distributed|shim)[^.]*not (yet )?built|not built[^.]*(distributed|shim)" docs/torch.md \
    || fail "docs/torch.md: $(grep -niE "not (yet )?built" docs/torch.md)"
  grep -q "torch.distributed" docs/torch.md || fail "docs/torch.md does not mention torch.distributed"
}
