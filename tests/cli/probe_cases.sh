#!/usr/bin/env bash
# Command-line cases of `kernbench probe`, one function per case, written
# for tests/cli/cli_test.sh: each uses its helpers (run, expect_status,
# expect_out, expect_err, expect_empty, fail) and $tmp.
probe_cases=(probe_runs probe_json probe_case_filter probe_unknown_case probe_help
             probe_global_topology probe_deterministic)

# python3 that can parse JSON, if this machine has one
probe_have_python() { command -v python3 >/dev/null 2>&1 && python3 -c 'import json' >/dev/null 2>&1; }

probe_runs() {
  run probe; expect_status 0
  expect_out "[v] PASS H2D latency strictly increasing with hops"
  expect_out "[v] PASS D2H >= H2D per hop"
  expect_out "[v] PASS PE DMA cross-cube best < worst"
  expect_out "<BN:128GB/s>"
  expect_out "Utilisation sweep"
  ! grep -qF "[x] FAIL" "$tmp/out" || fail "an invariant failed: $(grep -F '[x]' "$tmp/out")"
  # the run summary goes to stderr; --quiet drops it
  expect_err "summary: 13 simulations"; expect_err "bottleneck link: "
  run --quiet probe; expect_status 0; expect_empty err
}

probe_json() {
  run -q probe --json; expect_status 0; expect_empty err
  [ "$(wc -l <"$tmp/out")" -eq 1 ] || fail "--json printed more than one line: $(head -c 300 "$tmp/out")"
  if probe_have_python; then
    python3 -c '
import json, sys
d = json.load(sys.stdin)
assert list(d)[:3] == ["topology", "nbytes", "cases"], list(d)
assert d["topology"] == "default" and d["nbytes"] == 32768, d["topology"]
assert len(d["cases"]) == 13 and len(d["sweep"]) == 65, (len(d["cases"]), len(d["sweep"]))
assert all(i["pass"] is True for i in d["invariants"]), d["invariants"]
' <"$tmp/out" || fail "--json output is not the expected JSON object: $(head -c 300 "$tmp/out")"
  else
    head -c 1 "$tmp/out" | grep -qF '{' || fail "--json output does not start with '{'"
    grep -q '}$' "$tmp/out" || fail "--json output does not end with '}'"
    expect_out '{"topology":"default","nbytes":32768,"cases":[{"name":"h2d-1hop"'
    expect_out '"invariants":[{"name":'
    ! grep -qF '"pass":false' "$tmp/out" || fail "an invariant failed"
  fi
}

probe_case_filter() {
  run probe --case h2d-2hop; expect_status 0
  expect_out "1 case(s) run"
  expect_out "[-] SKIP H2D latency strictly increasing with hops (1 data point(s))"
  ! grep -qF "h2d-1hop" "$tmp/out" || fail "--case h2d-2hop ran other cases: $(cat "$tmp/out")"
}

probe_unknown_case() {
  run probe --case nope; expect_status 2
  expect_err "kernbench probe: unknown case 'nope'"; expect_err "h2d-1hop"; expect_empty out
  run probe --frobnicate; expect_status 2; expect_err "unknown option '--frobnicate'"
}

probe_help() {
  run probe --help; expect_status 0
  expect_out "usage: kernbench"; expect_out "--case NAME"; expect_out "pe-cross-cube-hbm-worst"
}

probe_global_topology() {
  # the global --topology / --set reach the probe; the probe's own --set applies on top
  run -t small_2x2 probe; expect_status 0
  expect_out "topology small_2x2"; expect_out "skipped h2d-3hop"
  run --set cube.links.router_link_bw_gbs=64 probe --case pe-same-half-hbm; expect_status 0
  grep -E '^pe-same-half-hbm .* 64 ' "$tmp/out" >/dev/null || fail "global --set not applied: $(cat "$tmp/out")"
}

probe_deterministic() {
  run probe; expect_status 0; cp "$tmp/out" "$tmp/first"
  run probe; expect_status 0
  cmp -s "$tmp/first" "$tmp/out" || fail "two runs differ: $(diff "$tmp/first" "$tmp/out" | head)"
}
