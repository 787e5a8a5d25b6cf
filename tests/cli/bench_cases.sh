#!/usr/bin/env bash
# Command-line cases of benches: kernbench FILE.lua / run FILE.lua with a
# bench table, NO_REQUESTS, --device, and kernbench list (sourced by
# tests/cli/cli_test.sh; uses its helpers).

bench_cases=(bench_runs bench_no_requests bench_run_requires_a_bench bench_device bench_list bench_model_pieces)

bench_runs() {
  DEPLOY_ROWS=64 DEPLOY_COLS=32 run -q -t small_2x2 benches/deploy_roundtrip.lua; expect_status 0
  expect_out "deployed 64 x 32 f16 (4096 bytes) over"; expect_out "data identical"
  expect_out "bench deploy-roundtrip (cols=32, rows=64, seed=7) on small_2x2: "; expect_out "simulated time"
  DEPLOY_ROWS=64 DEPLOY_COLS=32 run -q -t small_2x2 run benches/deploy_roundtrip.lua; expect_status 0
  cp "$tmp/out" "$tmp/first"
  DEPLOY_ROWS=64 DEPLOY_COLS=32 run -q -t small_2x2 benches/deploy_roundtrip.lua
  cmp -s "$tmp/first" "$tmp/out" || fail "two runs differ: $(diff "$tmp/first" "$tmp/out")"
}

bench_no_requests() {
  printf 'return { name = "idle", description = "does nothing", run = function(torch) end }\n' >"$tmp/idle.lua"
  run -q "$tmp/idle.lua"; expect_status 1; expect_err "bench idle: NO_REQUESTS"
  printf 'return { name = "boom", description = "fails", run = function(torch) error("kaput") end }\n' >"$tmp/boom.lua"
  run "$tmp/boom.lua"; expect_status 1; expect_err "bench boom: "; expect_err "kaput"
  # one report with one traceback, and no summary after a failure
  [ "$(grep -c 'stack traceback' "$tmp/err")" -eq 1 ] || fail "not one traceback: $(cat "$tmp/err")"
  ! grep -q "^summary:" "$tmp/err" || fail "a summary after a failed bench: $(cat "$tmp/err")"
}

bench_run_requires_a_bench() {
  printf 'print("plain")\n' >"$tmp/plain.lua"
  run -q "$tmp/plain.lua"; expect_status 0; expect_out "plain"
  run -q run "$tmp/plain.lua"; expect_status 1; expect_err "not a bench: the file returns nothing"
  run -q --param n=1 "$tmp/plain.lua"; expect_status 2; expect_err "--param needs a bench"
  run -q --results-json "$tmp/r.json" "$tmp/plain.lua"; expect_status 2; expect_err "--results-json needs a bench"
  [ ! -e "$tmp/r.json" ] || fail "a results file for a plain script"
  run -q --param n=1 -e 'print(1)'; expect_status 2; expect_err "--param and --results-json need a bench"
  printf 'return { name = "Bad_Name", description = "x", run = function() end }\n' >"$tmp/bad.lua"
  run -q "$tmp/bad.lua"; expect_status 1; expect_err "name 'Bad_Name' must be lowercase"
  run run; expect_status 2; expect_err "run: which bench?"
}

bench_device() {
  printf 'return { name = "dev", description = "where", run = function(torch)\n  local d = torch.empty({2, 4}, {dtype = "f16", dp = torch.DPPolicy{num_cubes = 1, num_pes = 1}})\n  print("sip", d.shards[1].sip, torch.ahbm.current_device())\nend }\n' >"$tmp/dev.lua"
  run -q --device sip:1 "$tmp/dev.lua"; expect_status 0; expect_out "sip	1	1"
  run -q "$tmp/dev.lua"; expect_status 0; expect_out "sip	0	nil"
  run -q --device sip:5 "$tmp/dev.lua"; expect_status 2; expect_err "--device sip:5: the topology has 2 SIP(s)"
  expect_err "usage: kernbench"; ! grep -q traceback "$tmp/err" || fail "a traceback for a usage error"
  run -q --device gpu0 "$tmp/dev.lua"; expect_status 2; expect_err "--device 'gpu0': expected all or sip:N"
}

bench_list() {
  run list; expect_status 0; expect_out "  deploy-roundtrip "; expect_out " deploy a random f16"
  mkdir -p "$tmp/b/sub"
  printf 'return { name = "zeta", description = "last", run = function() end }\n' >"$tmp/b/z.lua"
  printf 'return { name = "alpha", description = "first", run = function() end }\n' >"$tmp/b/sub/a.lua"
  printf 'return 42\n' >"$tmp/b/broken.lua"
  printf 'this is not lua\n' >"$tmp/b/syntax.lua"
  run list "$tmp/b"; expect_status 1
  expect_out "  1  alpha  first"; expect_out "  2  zeta   last"
  expect_err "$tmp/b/broken.lua: not a bench: the file returns a number"
  expect_err "$tmp/b/syntax.lua: not a bench: it fails to load"
}

# The model's pieces as thin benches (issue 42): each checked against the CPU
# reference in data mode, and each parameter's rule enforced.
bench_model_pieces() {
  run -q --verify-data run qkv-gemm; expect_status 0
  expect_out "qkv gemm 32x64x(3x32) f16 on sip0.cube0.pe0: "
  for t in Q K V; do expect_out "verified $t (f16) within rtol = atol = 0.001"; done
  run -q --verify-data --param pes=4 run qkv-gemm-multi-pe; expect_status 0
  expect_out "qkv gemm 128x64x(3x32) f16 over 4 PEs of cube 0 (32 rows each)"; expect_out "verified V (f16)"
  run -q --param m=33 --param pes=4 run qkv-gemm-multi-pe; expect_status 2
  expect_err "33 tokens do not split evenly over 4 PEs"
  for v in load_ref ref_ref load_load; do
    run -q --verify-data --param m=64 --param k=96 --param n=32 --param variant=$v run matmul-composite
    expect_status 0; expect_out "matmul composite 64x96x32 f16 $v on sip0.cube0.pe0"; expect_out "verified C (f16)"
  done
  run -q --verify-data --param tm=32 --param tk=32 --param tn=32 run matmul-composite; expect_status 0
  expect_out "64 tiles" # 4 x 4 x 4 (m, n, k)
  run -q --param tm=32 run matmul-composite; expect_status 2; expect_err "give tm, tk and tn together"
  run -q --verify-data --param d=64 --param cubes=2 --param pes=2 run gpt3-qkv; expect_status 0
  expect_out "gpt3 qkv 32x64x192 f16 over 2 cubes x 2 PEs (48 columns each)"; expect_out "verified QKV (f16)"
  run -q --param d=100 run gpt3-qkv; expect_status 2; expect_err "3d = 300 columns do not split evenly over 128 PEs"
}
