#!/usr/bin/env bash
# Command-line cases of the scaling benchmarks (benches/perf/cross_sip.lua,
# collective_scale.lua, pending_flits.lua, scaling.sh; docs/scaling.md) at
# small sizes: the work they model, never their time (sourced by
# tests/cli/cli_test.sh; uses its helpers).

scaling_cases=(scaling_cross_sip_work scaling_collective_work scaling_pending_flits_work scaling_driver)

# field NAME: the value of NAME= in $tmp/out's first line.
field() { grep -o " $1=[^ ]*" "$tmp/out" | head -1 | cut -d= -f2; }

scaling_cross_sip_work() {
  # every write of 1024 bytes crosses the switch as 4 data flits and its
  # acknowledgement as 1; the traffic per SIP is the same at every N
  run -q benches/perf/cross_sip.lua 2 2 1024; expect_status 0
  expect_out "cross_sip: sips=2 "; expect_out " txns=64 "; expect_out " xsip_flits=320 "
  local per_sip2 lines2; per_sip2=$(field events_per_sip); lines2=$(field events)
  [ "$per_sip2" -gt 0 ] || fail "no events: $(cat "$tmp/out")"
  run -q benches/perf/cross_sip.lua 3 2 1024; expect_status 0
  expect_out " txns=96 "; expect_out " xsip_flits=480 "
  [ "$(field events_per_sip)" = "$per_sip2" ] || fail "events per SIP changed with N: $per_sip2 at 2, $(cat "$tmp/out")"
  # the lookahead through the switch: three 5 ns node overheads, two 1 ns
  # links (100 mm at 0.01 ns/mm) and one 256-byte flit at 64 GB/s (4 ns)
  expect_out " lookahead_ns=21.000 lookahead_ctrl_ns=17.000 "
  # the simulated figures are deterministic
  run -q benches/perf/cross_sip.lua 2 2 1024; expect_status 0
  [ "$(field events)" = "$lines2" ] || fail "events differ between two runs"
  run -q benches/perf/cross_sip.lua 1; expect_status 2; expect_err "usage: kernbench benches/perf/cross_sip.lua"
}

scaling_collective_work() {
  run -q benches/perf/collective_scale.lua 2 256; expect_status 0
  expect_out "collective_scale: sips=2 "; expect_out " algorithm=lrab_hierarchical_allreduce n_elem=256 bytes_per_pe=512 "
  [ "$(field events)" -gt 0 ] || fail "no events: $(cat "$tmp/out")"
  [ "$(field xsip_flits)" -gt 0 ] || fail "no flit crossed the switch: $(cat "$tmp/out")"
  run -q benches/perf/collective_scale.lua 2 0; expect_status 2
  expect_err "usage: kernbench benches/perf/collective_scale.lua"
}

scaling_pending_flits_work() {
  # 64 transactions of 16 flits down the 8-node chain: one event per flit
  # per hop (7 hops) and one completion per transaction
  run -q benches/perf/pending_flits.lua 64 16; expect_status 0
  expect_out "pending_flits: txns=64 flits_per_txn=16 flits=1024 nodes=8 events=7232 "
  [ -n "$(field peak_mib)" ] && [ -n "$(field bytes_per_flit)" ] || fail "no memory figures: $(cat "$tmp/out")"
}

scaling_driver() {
  # a tray the loader refuses is reported and skipped, the others tabulated
  KB_SCALE_ARGS_CROSS="1 256" KB_SCALE_ARGS_COLL="64" KB_SCALE_ARGS_PENDING="8 4" KB_SCALE_SYNC_WINDOWS=10 \
    bash benches/perf/scaling.sh "$KB" 2 100000 >"$tmp/out" 2>"$tmp/err"
  status=$?; expect_status 0
  expect_out "cross_sip: sips=2 "; expect_out "collective_scale: sips=2 "; expect_out "pending_flits: txns=8 "
  expect_out "100000 | (not loaded)"; expect_err "cross_sip.lua N=100000: skipped"
  expect_out "window_sync: barrier=spin threads=2 windows=10 "; expect_out "window_sync: barrier=pthread threads=2 windows=10 "
  grep -qE '^2 +\| [0-9]+ ' "$tmp/out" || fail "no table row for N=2: $(cat "$tmp/out")"
}
