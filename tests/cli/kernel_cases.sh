#!/usr/bin/env bash
# Command-line cases of kernel benches: the shipped kernel benches verified
# in data mode, --data / --verify-data, kernel errors and verification
# failures as exit status 1, kernel spans in the trace (deterministic) and
# GEMM records in the op log (sourced by tests/cli/cli_test.sh; uses its
# helpers and tests/cli/trace_check.lua).

kernel_cases=(kernel_benches_verify kernel_error_exits_1 kernel_verify_mismatch_exits_1
              kernel_trace_and_op_log milestone_quick_writes_its_reports pipeline_trace_and_op_log)

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

milestone_quick_writes_its_reports() {
  run -q --param quick=true --param out="$tmp/ms" --results-json "$tmp/ms.json" run milestone-gemm; expect_status 0
  expect_out "32x3072x32/load_ref/cube"; expect_out "written to $tmp/ms/gemm_sweep.csv"
  [ -f "$tmp/ms/gemm_sweep.csv" ] || fail "no CSV"
  [ "$(wc -l <"$tmp/ms/gemm_sweep.csv")" -eq 7 ] || fail "the CSV should have a header and 6 rows"
  cat >"$tmp/check.lua" <<'LUA'
package.path = "tests/lua/?.lua;" .. package.path
local f = assert(io.open(arg[1]))
local doc = require("json_decode")(f:read("a"))
f:close()
assert(doc.bench.name == "milestone-gemm" and doc.params.quick == true and doc.status == "ok")
local r = doc.result
assert(r.quick == true and #r.points == 6)
assert(r.tile_sizes.m == 32 and r.tile_sizes.k == 64 and r.tile_sizes.n == 32)
for _, p in ipairs(r.points) do
  assert(p.tiles >= 1 and p.pe_window_ns > 0 and p.efficiency > 0 and p.efficiency <= 1, p.label)
  assert(p.bound == "compute" or p.bound == "hbm", p.label)
  assert(p.stage_counts.GEMM == p.tiles and p.stage_counts.DMA_WRITE >= 1, p.label)
  for _, e in pairs(p.pipeline_efficiency) do assert(e >= 0 and e <= 1, p.label) end
end
print("ok")
LUA
  "$KB" "$tmp/check.lua" "$tmp/ms.json" >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "ok"
  # with --verify-data every point is checked against the CPU reference
  run -q --param quick=true --param out="$tmp/ms2" benches/milestone_gemm.lua --verify-data; expect_status 0
  expect_out "verified C 128x128x128 load_ref cube (f16)"
  # the systolic latency model (fill, drain) lengthens every point's compute and window
  run -q --set cube.pe_template.components.pe_gemm.latency_model=lua:models.systolic_gemm \
    --param quick=1 --param out="$tmp/ms3" --results-json "$tmp/ms3.json" run milestone-gemm; expect_status 0
  cat >"$tmp/compare.lua" <<'LUA'
package.path = "tests/lua/?.lua;" .. package.path
local function points(path)
  local f = assert(io.open(path))
  local doc = require("json_decode")(f:read("a"))
  f:close()
  return doc.result.points
end
local base, sys = points(arg[1]), points(arg[2])
assert(#base == #sys)
for i, p in ipairs(base) do
  local q = sys[i]
  assert(q.label == p.label and q.tiles == p.tiles, p.label)
  assert(q.pe_window_ns > p.pe_window_ns, p.label .. ": the systolic model should take longer")
  assert(q.stage_ns.GEMM > p.stage_ns.GEMM, p.label .. ": longer GEMM stages")
end
print("ok")
LUA
  "$KB" "$tmp/compare.lua" "$tmp/ms.json" "$tmp/ms3.json" >"$tmp/out" 2>"$tmp/err"; status=$?
  expect_status 0; expect_out "ok"
}

pipeline_trace_and_op_log() {
  MILESTONE_QUICK=1 run -q -t small_1cube_8pe --trace "$tmp/t.json" --op-log "$tmp/ops.jsonl" \
    --param out="$tmp/ms" benches/milestone_gemm.lua; expect_status 0
  check "$tmp/t.json"
  for span in '"name":"DMA_READ"' '"name":"FETCH"' '"name":"GEMM"' '"name":"STORE"' '"name":"DMA_WRITE"'; do
    grep -qF "$span" "$tmp/t.json" || fail "no $span slice in the trace"
  done
  grep -qF '"op_name":"TileToken/GEMM"' "$tmp/ops.jsonl" || fail "no TileToken/GEMM record"
  grep -qF '"stage_type":"DMA_WRITE","tile_id":' "$tmp/ops.jsonl" || fail "stage records without their parameters"
  # one composite per PE of each point: 3 shapes on 1 PE and on the 8 PEs of the cube
  [ "$(grep -c '"op_name":"composite_gemm"' "$tmp/ops.jsonl")" -eq 27 ] || fail "one composite record per PE and point"
}
