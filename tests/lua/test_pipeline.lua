--- The PE pipeline through tl.composite: results against the CPU reference
-- with epilogues, exactly-once completion, overlap of stages, backpressure
-- stalling the feeder and not the scheduler, register-file stalls, and
-- the errors of a bad composite table. Tile plans themselves are tested in
-- tests/c/test_tiling.c.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"
local gemm_run = require "gemm_run"

TestPipeline = {}

local function runtime(overrides, data, extra)
  local o = { topology = kb.topology.load("small_1cube_1pe", overrides or {}), data_mode = data and "data" or nil }
  for k, v in pairs(extra or {}) do
    if k ~= "pin" then o[k] = v end
  end
  return torchmod.new(o)
end

-- C = epilogue(A x B) with A pinned (tl.load) or streamed, B streamed.
local function gemm_case(dtype, M, K, N, pin_a, epilogue_of, reference_of)
  local torch = runtime(nil, true)
  torch.manual_seed(21)
  local one = torch.DPPolicy {}
  local a = torch.randn({ M, K }, { dtype = dtype })
  local b = torch.randn({ K, N }, { dtype = dtype })
  local bias = torch.randn({ N }, { dtype = dtype })
  local res = torch.randn({ M, N }, { dtype = dtype })
  local da, db = torch.to_device(a, one), torch.to_device(b, one)
  local dbias, dres = torch.to_device(bias, one), torch.to_device(res, one)
  local dc = torch.empty({ M, N }, { dtype = dtype, dp = one })
  local h = torch.launch(function(tl, pa, pb, pc, pbias, pres)
    local A = pin_a and tl.load(pa, { M, K }, dtype) or tl.ref(pa, { M, K }, dtype)
    local ops = epilogue_of and epilogue_of(tl.load(pbias, { N }, dtype), tl.load(pres, { M, N }, dtype)) or nil
    tl.wait(tl.composite { op = "gemm", a = A, b = tl.ref(pb, { K, N }, dtype), out_ptr = pc, epilogue = ops })
  end, 1, da, db, dc, dbias, dres)
  local ref = torch.matmul(a:float(), b:float())
  if reference_of then ref = reference_of(torch, ref, bias:float(), res:float()) end
  local worst = torch.verify("C " .. dtype, dc:cpu(), ref:to(dtype))
  torch.close()
  return worst, h
end

function TestPipeline:test_composite_gemm_matches_the_reference_f16_bf16_with_epilogues()
  for _, dt in ipairs { "f16", "bf16" } do
    lu.assertNotNil(gemm_case(dt, 70, 150, 40, false))
    lu.assertNotNil(gemm_case(dt, 64, 128, 64, true,
      function(bias, res)
        return { { op = "bias", bias = bias }, { op = "relu" }, { op = "scale", factor = 0.5 },
                 { op = "add", other = res } }
      end,
      function(torch, c, bias, res)
        return torch.add(torch.mul(torch.relu(torch.add(c, bias)), 0.5), res)
      end))
    -- dequant per K tile scales each partial product; silu and gelu on the output tile
    lu.assertNotNil(gemm_case(dt, 32, 128, 32, true,
      function() return { { op = "dequant", scale = 0.25, scope = "k_tile" }, { op = "silu" } } end,
      function(torch, c)
        local x = torch.mul(c, 0.25)
        return torch.mul(x, torch.sigmoid(x))
      end))
  end
end

function TestPipeline:test_math_composite_matches_the_reference()
  local torch = runtime(nil, true)
  torch.manual_seed(22)
  local one = torch.DPPolicy {}
  local x = torch.randn({ 50, 70 }, { dtype = "f16" })
  local y = torch.randn({ 50, 70 }, { dtype = "f16" })
  local dx, dy = torch.to_device(x, one), torch.to_device(y, one)
  local d1 = torch.empty({ 50, 70 }, { dtype = "f16", dp = one })
  local d2 = torch.empty({ 50, 70 }, { dtype = "f16", dp = one })
  torch.launch(function(tl, px, py, p1, p2)
    local X = tl.ref(px, { 50, 70 }, "f16")
    local h1 = tl.composite { op = "math", a = X, out_ptr = p1, math_op = "exp" }
    local h2 = tl.composite { op = "math", a = tl.load(px, { 50, 70 }, "f16"), b = tl.ref(py, { 50, 70 }, "f16"),
                              out_ptr = p2, math_op = "maximum" }
    tl.wait() -- both
    lu.assertTrue(h1:done() and h2:done())
  end, 1, dx, dy, d1, d2)
  torch.verify("exp", d1:cpu(), torch.exp(x:float()):half())
  local m = torch.zeros({ 50, 70 })
  for i = 0, 49 do
    for j = 0, 69 do m[{ i, j }] = math.max(x[{ i, j }], y[{ i, j }]) end
  end
  torch.verify("maximum", d2:cpu(), m:half())
  torch.close()
end

-- Runs one composite GEMM timing-only; returns its handle's stats and the op log.
local function gemm_stats(overrides, M, K, N, tile, opts)
  local torch = runtime(overrides, false, opts)
  local pin = opts and opts.pin
  local st = gemm_run.composite(torch, M, K, N, { pin_a = pin, pin_b = pin, tile = tile })
  local log = torch.sim:op_log()
  torch.close()
  return st, log
end

local function busy_sum(st)
  local sum = 0
  for _, v in pairs(st.stage_ns) do sum = sum + v end
  return sum
end

function TestPipeline:test_stages_overlap_across_tiles_but_not_within_one()
  local one = gemm_stats(nil, 32, 64, 32)
  lu.assertEquals(one.tiles, 1)
  lu.assertAlmostEquals(one.done_ns - one.first_ns, busy_sum(one), 1e-6) -- a single tile: stages in sequence
  local many = gemm_stats(nil, 128, 256, 128)
  lu.assertEquals(many.tiles, 64)
  lu.assertTrue(many.done_ns - many.first_ns < busy_sum(many),
    ("makespan %g should be below the sum of stage times %g"):format(many.done_ns - many.first_ns, busy_sum(many)))
  -- stage counts: two reads per tile, one write per output tile
  lu.assertEquals(many.stage_counts.DMA_READ, 128)
  lu.assertEquals(many.stage_counts.GEMM, 64)
  lu.assertEquals(many.stage_counts.DMA_WRITE, 16)
  lu.assertEquals(many.stage_counts.STORE, 16)
end

function TestPipeline:test_a_composite_completes_exactly_once()
  local _, log = gemm_stats(nil, 96, 128, 64, nil, { op_log = true })
  lu.assertEquals(log.counts.composite_gemm, 1)
  lu.assertEquals(log.counts["TileToken/GEMM"], 3 * 2 * 2)
  local stages = {}
  for _, r in ipairs(log.records) do
    if r.op_name:match("^TileToken/") then
      stages[r.params.stage_type] = (stages[r.params.stage_type] or 0) + 1
      lu.assertTrue(r.t_end_ns >= r.t_start_ns)
    end
  end
  lu.assertEquals(stages.DMA_WRITE, 3 * 2)
end

function TestPipeline:test_a_full_queue_stalls_the_feeder_not_the_scheduler()
  -- a slow GEMM (a 4 x 4 MAC array) and queues one deep: the feeder waits
  local slow = { "cube.pe_template.components.pe_gemm.attrs.mac_rows=4",
                 "cube.pe_template.components.pe_gemm.attrs.mac_cols=4" }
  for _, part in ipairs { "pe_dma", "pe_fetch_store", "pe_gemm", "pe_math" } do
    slow[#slow + 1] = ("cube.pe_template.components.%s.attrs.queue_depth=1"):format(part)
  end
  local torch = runtime(slow, false)
  local one = torch.DPPolicy {}
  local da = torch.empty({ 256, 64 }, { dtype = "f16", dp = one })
  local db = torch.empty({ 64, 32 }, { dtype = "f16", dp = one })
  local dc = torch.empty({ 256, 32 }, { dtype = "f16", dp = one })
  local t_issue, h1, h2 = {}, nil, nil
  torch.launch(function(tl, pa, pb, pc)
    local t0 = torch.now_ns()
    h1 = tl.composite { op = "gemm", a = tl.ref(pa, { 256, 64 }), b = tl.ref(pb, { 64, 32 }), out_ptr = pc }
    t_issue[1] = torch.now_ns() - t0
    h2 = tl.composite { op = "gemm", a = tl.ref(pa, { 256, 64 }), b = tl.ref(pb, { 64, 32 }), out_ptr = pc }
    t_issue[2] = torch.now_ns() - t0
    tl.wait()
  end, 1, da, db, dc)
  -- the scheduler took both commands at once (one dispatch cycle each) ...
  lu.assertEquals(t_issue, { 1, 2 })
  local s1, s2 = h1:stats(), h2:stats()
  -- ... while the feeder fed the second only after every tile of the first
  -- had entered the pipeline, long after it was submitted
  lu.assertTrue(s2.first_ns > s2.submit_ns + 100, ("second fed at %g, submitted at %g"):format(s2.first_ns, s2.submit_ns))
  lu.assertTrue(s2.first_ns < s1.done_ns)  -- but before the first finished: the pipeline overlaps commands' tails
  lu.assertTrue(s2.done_ns > s1.done_ns)
  torch.close()
end

function TestPipeline:test_register_file_too_small_for_a_tile_is_an_error()
  local torch = runtime({ "cube.pe_template.components.pe_fetch_store.attrs.register_file_kb=4" }, false)
  local one = torch.DPPolicy {}
  local da = torch.empty({ 32, 64 }, { dtype = "f16", dp = one })
  local ok, err = pcall(torch.launch, function(tl, pa)
    tl.composite { op = "gemm", a = tl.ref(pa, { 32, 64 }), b = tl.ref(pa, { 64, 32 }), out_ptr = pa }
  end, 1, da)
  torch.close()
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tl.composite on sip0.cube0.pe0 (kernel '")
  lu.assertStrContains(tostring(err), "a 32x64x32 tile needs 12288 bytes of register file, the PE has 4096")
end

function TestPipeline:test_register_file_stalls_slow_the_pipeline()
  -- operands pinned in TCM: fetch and GEMM (16 ns each per tile) set the pace
  local roomy = gemm_stats(nil, 128, 256, 128, nil, { pin = true })
  -- room for one tile's operands and its accumulator only: a fetch waits for the GEMM before it
  local tight = gemm_stats({ "cube.pe_template.components.pe_fetch_store.attrs.register_file_kb=12" }, 128, 256, 128,
                           nil, { pin = true })
  lu.assertTrue(tight.done_ns - tight.first_ns > roomy.done_ns - roomy.first_ns)
  lu.assertEquals(tight.stage_counts.GEMM, roomy.stage_counts.GEMM)
end

function TestPipeline:test_bad_composite_tables_fail_at_the_call()
  local torch = runtime(nil, false)
  local one = torch.DPPolicy {}
  local d = torch.empty({ 32, 64 }, { dtype = "f16", dp = one })
  local cases = {
    { { op = "conv" }, 'op must be "gemm" or "math"' },
    { { op = "gemm", b = 1 }, "field 'a' is missing" },
    { { op = "gemm", a = "x", out_ptr = 0 }, "a must be a tensor handle" },
    { { op = "gemm", a = true, frob = 1 }, "unknown field 'frob'" },
    { { op = "gemm", epilogue = { { op = "sqrtx" } } }, "epilogue[1]: unknown op 'sqrtx'" },
    { { op = "gemm", epilogue = { { op = "bias" } } }, "epilogue[1]: bias needs field 'bias'" },
    { { op = "gemm", epilogue = { { op = "relu", scope = "kernel" } } }, "scope 'kernel' has no place in a tile plan" },
    { { op = "gemm", acc_dtype = "f16" }, "only f32 accumulation is modelled" },
    { { op = "math", out_ptr = 0 }, "needs math_op" },
  }
  torch.launch(function(tl, p)
    local A = tl.ref(p, { 32, 64 })
    for _, c in ipairs(cases) do
      local spec = c[1]
      if spec.a == true then spec.a = A end
      if spec.op == "gemm" and not spec.a and not spec.b then spec.a, spec.b, spec.out_ptr = A, A, p end
      if spec.op == "math" then spec.a = A end
      local ok, err = pcall(tl.composite, spec)
      lu.assertFalse(ok, c[2])
      lu.assertStrContains(tostring(err), c[2])
    end
    local ok, err = pcall(tl.composite, { op = "gemm", a = A, b = tl.ref(p, { 32, 64 }), out_ptr = p })
    lu.assertFalse(ok)
    lu.assertStrContains(tostring(err), "tl.composite: cannot be multiplied: shapes [32, 64] and [32, 64]")
  end, 1, d)
  torch.close()
end

function TestPipeline:test_a_kernel_failing_with_composites_in_flight_stops_cleanly()
  local torch = runtime(nil, true)
  local one = torch.DPPolicy {}
  local d = torch.empty({ 256, 256 }, { dtype = "f16", dp = one })
  local ok, err = pcall(torch.launch, { name = "dies", fn = function(tl, p)
    tl.composite { op = "gemm", a = tl.ref(p, { 256, 256 }), b = tl.ref(p, { 256, 256 }), out_ptr = p }
    tl.cycles(10)
    error("gone while tiles fly")
  end }, 1, d)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "gone while tiles fly")
  torch.close()
  collectgarbage()
end

function TestPipeline:test_an_unmapped_output_fails_at_the_call()
  local torch = runtime(nil, false)
  local d = torch.empty({ 32, 64 }, { dtype = "f16", dp = torch.DPPolicy {} })
  local ok, err = pcall(torch.launch, function(tl, p)
    tl.composite { op = "gemm", a = tl.ref(p, { 32, 64 }), b = tl.ref(p, { 64, 32 }), out_ptr = 0x7000000000 }
  end, 1, d)
  torch.close()
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tl.composite: virtual address 0x7000000000 is not mapped on sip0.cube0.pe0 "
                                      .. "(kernel '")
  lu.assertStrContains(tostring(err), "at t=")
end

function TestPipeline:test_an_unmapped_streamed_operand_fails_at_the_call_naming_kernel_and_time()
  local torch = runtime(nil, false)
  local d = torch.empty({ 32, 64 }, { dtype = "f16", dp = torch.DPPolicy {} })
  local ok, err = pcall(torch.launch, { name = "bad_ref", fn = function(tl, p)
    tl.composite { op = "gemm", a = tl.ref(p, { 32, 64 }), b = tl.ref(0x6000000000, { 64, 32 }), out_ptr = p }
  end }, 1, d)
  torch.close()
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "tl.composite: virtual address 0x6000000000 is not mapped on sip0.cube0.pe0 "
                                      .. "(kernel 'bad_ref' at t=")
end

-- A kernel that fails with composites in flight, a composite handle kept
-- past the end of the runtime: the instance lives as long as its
-- composites, and everything is released (checked under ASan).
function TestPipeline:test_a_composite_handle_kept_after_its_kernel_failed_and_its_runtime_closed()
  local torch = runtime(nil, true)
  local d = torch.empty({ 256, 256 }, { dtype = "f16", dp = torch.DPPolicy {} })
  local kept
  local ok = pcall(torch.launch, { name = "keeps", fn = function(tl, p)
    kept = tl.composite { op = "gemm", a = tl.ref(p, { 256, 256 }), b = tl.ref(p, { 256, 256 }), out_ptr = p }
    tl.cycles(10)
    error("gone")
  end }, 1, d)
  lu.assertFalse(ok)
  torch.close()
  collectgarbage()
  lu.assertFalse(kept:done())
  lu.assertStrContains(tostring(kept), "running")
  kept = nil
  collectgarbage()
end
