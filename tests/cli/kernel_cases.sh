#!/usr/bin/env bash
# Command-line cases of kernel benches: the shipped kernel benches verified
# in data mode, --data / --verify-data, kernel errors and verification
# failures as exit status 1, kernel spans in the trace (deterministic) and
# GEMM records in the op log (sourced by tests/cli/cli_test.sh; uses its
# helpers and tests/cli/trace_check.lua).

kernel_cases=(kernel_benches_verify kernel_error_exits_1 kernel_verify_mismatch_exits_1
              kernel_trace_and_op_log)

kernel_benches_verify() {
  run -q -t small_2x2 benches/sharded_gemm.lua --verify-data; expect_status 0
  expect_out "sharded gemm 64x256x2048 f16 on 4 cubes x 8 PEs"; expect_out "verified C (f16)"
  run -q -t small_1cube_1pe --verify-data benches/gemm_single_pe.lua; expect_status 0
  expect_out "verified C (f16)"
  run -q -t small_1cube_8pe benches/softmax_rows.lua --verify-data; expect_status 0
  expect_out "verified softmax (tl.softmax) (f32)"; expect_out "verified softmax (max/exp/sum) (f32)"
  run -q -t small_1cube_8pe benches/memory_branch.lua; expect_status 0   # turns data mode on itself
  expect_out "pe0: "; expect_out "of 16 blocks"
  run -q -t small_1cube_8pe benches/memory_branch.lua --verify-data; expect_status 0; expect_out "verified y (f32)"
  # timing-only: the same simulated time, nothing to verify
  run -q -t small_2x2 benches/sharded_gemm.lua; expect_status 0
  grep -q "^verified" "$tmp/out" && fail "verified without data mode"
  local timing; timing=$(grep "^bench sharded-gemm" "$tmp/out")
  run -q -t small_2x2 --data benches/sharded_gemm.lua; expect_status 0
  [ "$(grep "^bench sharded-gemm" "$tmp/out")" = "$timing" ] || fail "data mode changed the timing"
}

kernel_error_exits_1() {
  cat >"$tmp/bad.lua" <<'LUA'
return { name = "bad-kernel", description = "a kernel that raises", run = function(torch)
  torch.launch({ name = "oops", fn = function(tl) tl.cycles(5); error("no such luck") end }, { 2, 1 })
end }
LUA
  run -q -t small_1cube_8pe "$tmp/bad.lua"; expect_status 1
  expect_err "bench bad-kernel: "; expect_err "kernel oops on sip0.cube0.pe0"
  expect_err "failed at t="; expect_err "no such luck"; expect_err "stack traceback"
}

kernel_verify_mismatch_exits_1() {
  cat >"$tmp/wrong.lua" <<'LUA'
return { name = "wrong", description = "checks against a wrong reference", run = function(torch)
  local d = torch.to_device(torch.ones({ 4, 4 }), torch.DPPolicy { num_cubes = 1, num_pes = 1 })
  torch.launch(function(tl, p) tl.store(p, tl.exp(tl.load(p, { 4, 4 }, "f32"))) end, 1, d)
  torch.verify("d", d:cpu(), torch.ones({ 4, 4 }))
end }
LUA
  run -q -t small_1cube_1pe "$tmp/wrong.lua" --verify-data; expect_status 1
  expect_err "verify d: f32 result differs from the reference beyond rtol = atol = 1e-05"
  cat >"$tmp/none.lua" <<'LUA'
return { name = "none", description = "verifies nothing", run = function(torch)
  torch.launch(function(tl) tl.cycles(1) end, 1)
end }
LUA
  run -q -t small_1cube_1pe "$tmp/none.lua" --verify-data; expect_status 1
  expect_err "--verify-data, but the bench verified no output"
  run -q -t small_1cube_1pe "$tmp/none.lua"; expect_status 0
}

kernel_trace_and_op_log() {
  run -q -t small_2x2 --trace "$tmp/a.json" --op-log "$tmp/ops.jsonl" benches/sharded_gemm.lua --data
  expect_status 0
  run -q -t small_2x2 --trace "$tmp/b.json" --op-log "$tmp/ops2.jsonl" benches/sharded_gemm.lua --data
  cmp -s "$tmp/a.json" "$tmp/b.json" || fail "two runs wrote different traces"
  cmp -s "$tmp/ops.jsonl" "$tmp/ops2.jsonl" || fail "two runs wrote different op logs"
  check "$tmp/a.json"
  expect_check "thread sip0.cube3.pe7.pe_cpu"; expect_check "thread sip0.cube3.pe7.pe_gemm"
  expect_check "thread sip0.cube0.pe0.pe_tcm"; expect_check "thread sip0.cube0.pe0.pe_fetch_store"
  for span in '"name":"tl.load"' '"name":"tl.dot"' '"name":"tl.store"' '"name":"kernel kernels.sharded_gemm"' \
              '"name":"gemm"' '"name":"fetch"'; do
    grep -qF "$span" "$tmp/a.json" || fail "no $span slice in the trace"
  done
  [ "$(grep -c '"op_name":"gemm_f16"' "$tmp/ops.jsonl")" -eq 32 ] || fail "expected 32 gemm_f16 records"
  grep -qF '"params":{"src_a_addr":' "$tmp/ops.jsonl" || fail "gemm record without its parameters"
  grep -qF '"m":64,"k":256,"n":64' "$tmp/ops.jsonl" || fail "gemm record without m, k, n"
  [ "$(grep -c '"op_name":"dma_read"' "$tmp/ops.jsonl")" -eq 64 ] || fail "expected 64 dma_read records"
}
