#!/usr/bin/env bash
# Command-line cases of --trace, --stats-json, --op-log and the run summary,
# one function per case, for tests/cli/cli_test.sh (sourced there; they use
# its helpers run, expect_*, fail and $tmp). Traces are checked with
# tests/cli/trace_check.lua, run by kernbench itself.

trace_cases=(trace_valid_and_deterministic trace_flows_and_counters trace_filter_and_window
             trace_error_leaves_valid_file trace_options_need_trace stats_json_and_op_log
             summary_and_quiet dump_config)

traffic=tests/cli/traffic.lua
check() { "$KB" tests/cli/trace_check.lua "$1" >"$tmp/check" 2>"$tmp/check_err" ||
          fail "trace check of $1 failed: $(cat "$tmp/check_err")"; }
expect_check() { grep -qxF -- "$1" "$tmp/check" || fail "trace digest lacks '$1': $(head -20 "$tmp/check")"; }
check_value() { sed -n "s/^$1 //p" "$tmp/check"; }

trace_valid_and_deterministic() {
  run -t small_2x2 --trace "$tmp/a.json" $traffic; expect_status 0
  run -t small_2x2 --trace "$tmp/b.json" $traffic; expect_status 0
  cmp -s "$tmp/a.json" "$tmp/b.json" || fail "two runs wrote different traces"
  check "$tmp/a.json"
  expect_check "processes fabric,host,sip0"
  expect_check "thread sip0.cube0.pe0.pe_dma"
  expect_check "thread sip0.cube0.hbm_ctrl.pe0"
  expect_check "thread host.requests"
  [ "$(check_value X)" -gt 100 ] || fail "too few slices: $(check_value X)"
  [ "$(check_value s)" -eq 0 ] || fail "flow events without --trace-flows"
  [ "$(check_value C)" -eq 0 ] || fail "counters without --trace-counters"
  grep -qF '"name":"MemoryWrite","args":{"bytes":8192,"src":"sip0.io0.pcie_ep","dst":"sip0.cube0.hbm_ctrl.pe0","txn":1}' \
    "$tmp/a.json" || fail "no MemoryWrite slice with its arguments"
}

trace_flows_and_counters() {
  run -t small_2x2 --trace "$tmp/t.json" --trace-flows --trace-counters --trace-counter-ns 5 $traffic
  expect_status 0; check "$tmp/t.json"
  # one flow per operation: 2 host ops per cube plus one DMA per PE, each starts and ends once
  local ops; ops=$(grep -c '"ph":"i".*"name":"submit ' "$tmp/t.json")
  [ "$(check_value s)" -eq "$ops" ] || fail "flow starts $(check_value s) != operations $ops"
  [ "$(check_value f)" -eq "$ops" ] || fail "flow ends $(check_value f) != operations $ops"
  [ "$(check_value C)" -gt 0 ] || fail "no counter samples"
  grep -qF '"name":"link sip0.io0.pcie_ep -> sip0.io0.io_noc","args":{"util":' "$tmp/t.json" ||
    fail "no link utilisation counter"
  grep -qE '"name":"sip0.cube0.hbm_ctrl.pe0.pc[0-9]+","args":\{"util":' "$tmp/t.json" ||
    fail "no pseudo-channel counter"
  ! grep -qE '"util":(-|[1-9][0-9]*\.[0-9]*[1-9]|[2-9])' "$tmp/t.json" || fail "a utilisation outside [0, 1]"
}

trace_filter_and_window() {
  run -t small_2x2 --trace "$tmp/all.json" $traffic; expect_status 0
  check "$tmp/all.json"; local all; all=$(check_value X)
  run -t small_2x2 --trace "$tmp/f.json" --trace-filter 'sip0.cube0.r*' --trace-filter '*.pe_dma' $traffic
  expect_status 0; check "$tmp/f.json"
  grep '^thread ' "$tmp/check" | grep -vE '^thread (sip0\.cube0\.r[0-9]+c[0-9]+|.*\.pe_dma)( \([0-9]+\))?$' &&
    fail "a thread outside the filter"
  [ "$(check_value X)" -lt "$all" ] || fail "the filter did not reduce the slices"
  run -t small_2x2 --trace "$tmp/w.json" --trace-window 100:200 $traffic; expect_status 0
  check "$tmp/w.json"
  [ "$(check_value X)" -lt "$all" ] || fail "the window did not reduce the slices"
  read -r lo hi <<<"$(check_value slices_us)"
  awk -v hi="$hi" 'BEGIN { exit !(hi >= 0.1) }' || fail "no slice reaches into the window (ends by $hi us)"
  # every slice overlaps [0.1, 0.2] us
  grep -o '"ph":"X","pid":[0-9]*,"tid":[0-9]*,"ts":[0-9.]*,"dur":[0-9.]*' "$tmp/w.json" |
    awk -F'[:,]' '{ ts = $8; dur = $10; if (ts > 0.2 || ts + dur < 0.1) { print; bad = 1 } } END { exit bad }' ||
    fail "a slice outside the window"
  run --trace "$tmp/x.json" --trace-window 5 $traffic; expect_status 2; expect_err "--trace-window '5'"
}

trace_error_leaves_valid_file() {
  run -t small_2x2 --trace "$tmp/e.json" $traffic fail; expect_status 1
  expect_err "boom after the traffic"
  check "$tmp/e.json"
  grep -q '^error .*boom after the traffic' "$tmp/check" || fail "the error is not in the trace: $(cat "$tmp/check")"
  [ "$(check_value X)" -gt 0 ] || fail "the traffic before the error is missing"
}

trace_options_need_trace() {
  run --trace-flows -e 'print(1)'; expect_status 2; expect_err "need --trace FILE"
  run --trace "$tmp/t.json" --trace-counter-ns 5 -e 'print(1)'; expect_status 2
  expect_err "--trace-counter-ns needs --trace-counters"
  run --trace; expect_status 2; expect_err "option '--trace' needs an argument"
  run --trace /nonexistent/dir/t.json -e 'print(1)'; expect_status 2
  expect_err "--trace /nonexistent/dir/t.json: directory /nonexistent/dir does not exist"
}

stats_json_and_op_log() {
  run -t small_2x2 --stats-json "$tmp/s.json" --op-log "$tmp/o.jsonl" $traffic; expect_status 0
  "$KB" tests/cli/stats_check.lua summary "$tmp/s.json" >"$tmp/sj" 2>&1 || fail "stats JSON: $(cat "$tmp/sj")"
  local cubes pes
  pes=$("$KB" -t small_2x2 -e 'print(kb.topology.load():params().pes_per_cube)')
  cubes=$("$KB" -t small_2x2 -e 'print(kb.topology.load():params().cubes_per_sip)')
  grep -qF "topology small_2x2 requests $((2 * cubes + pes)) writes $cubes" "$tmp/sj" || fail "request count: $(cat "$tmp/sj")"
  [ "$(wc -l <"$tmp/o.jsonl")" -eq $((2 * cubes + pes)) ] || fail "op log lines: $(wc -l <"$tmp/o.jsonl")"
  [ "$(grep -c '"op_name":"dma_write"' "$tmp/o.jsonl")" -eq "$pes" ] || fail "dma_write records"
  [ "$(grep -c '"op_name":"memory_read"' "$tmp/o.jsonl")" -eq "$cubes" ] || fail "memory_read records"
  # a single transfer's latency in the stats equals the probe's
  run -q --stats-json "$tmp/p.json" probe --case h2d-1hop --json; expect_status 0
  "$KB" tests/cli/stats_check.lua latency "$tmp/p.json" "$tmp/out" >"$tmp/cmp" 2>&1 ||
    fail "latency differs: $(cat "$tmp/cmp")"
}

summary_and_quiet() {
  run -t small_2x2 $traffic; expect_status 0
  expect_err "summary: 1 simulation,"; expect_err "busiest components"; expect_err "bottleneck link: "
  run -t small_2x2 --quiet $traffic; expect_status 0; expect_empty err
  run -e 'local s = sim.new() s:run()'; expect_status 0; expect_empty err
}

dump_config() {
  run -t small_2x2 --set cube.links.router_link_bw_gbs=128 --dump-config "$tmp/c.yaml" -q $traffic
  expect_status 0
  grep -qF "# override: --set cube.links.router_link_bw_gbs=128" "$tmp/c.yaml" || fail "no override line"
  grep -qE "^    router_link_bw_gbs: 128  # --set cube.links.router_link_bw_gbs=128$" "$tmp/c.yaml" ||
    fail "override source missing: $(grep router_link "$tmp/c.yaml")"
  grep -qE "^name: small_2x2  # .*topologies/small_2x2.yaml:[0-9]+:[0-9]+$" "$tmp/c.yaml" || fail "file source missing"
  [ "$(grep -c '^---$' "$tmp/c.yaml")" -eq 0 ] || fail "one topology, one document"
  # the dump loads as a topology and gives the same simulated time
  run -t small_2x2 --set cube.links.router_link_bw_gbs=128 -q $traffic; cp "$tmp/out" "$tmp/first"
  run -t "$tmp/c.yaml" -q $traffic; expect_status 0
  cmp -s "$tmp/first" "$tmp/out" || fail "the dumped topology runs differently: $(cat "$tmp/first" "$tmp/out")"
  run --dump-config /nonexistent/dir/c.yaml -e 'print(1)'; expect_status 2; expect_err "--dump-config /nonexistent/dir/c.yaml"
}
