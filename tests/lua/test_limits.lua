--- Sizes and times from users are checked, never wrapped: a shape whose
-- bytes pass 2^46 (kernel loads and constants, composite operands and
-- outputs, host and device tensors), counts and ranges that overflow int64,
-- and any time whose picoseconds leave int64 (tl.cycles, s:timeout,
-- s:sleep, a latency model's answer) are errors naming the call and the
-- allowed range.
local lu = require "luaunit"

TestLimits = {}

local function runtime(topo)
  return kb.torch { topology = kb.topology.load(topo or "small_1cube_1pe") }
end

-- The message of a one-PE launch of kernel(tl, p) with p a 4x4 f32 tensor.
local function kernel_error(kernel, topo)
  local torch = runtime(topo)
  local a = torch.empty({ 4, 4 }, { dp = torch.DPPolicy {}, name = "a" })
  local ok, err = pcall(torch.launch, { name = "k", fn = kernel }, 1, a)
  torch.close()
  lu.assertFalse(ok, "the launch should fail")
  return tostring(err)
end

-- ---- kernel shapes ----

function TestLimits:test_a_load_whose_shape_overflows_is_an_error_not_a_tiny_load()
  for _, shape in ipairs { { 2 ^ 31, 2 ^ 31, 2 ^ 31 }, { 1 << 31, 1 << 31, 1 << 31 }, { 1 << 62, 4 } } do
    local err = kernel_error(function(tl, p) tl.load(p, shape, "f32") end)
    lu.assertStrContains(err, "kernel k on sip0.cube0.pe0' failed at t=")
    lu.assertStrContains(err, "tl.load: a result of shape [")
    lu.assertStrContains(err, "f32 is larger than any memory (more than 2^46 bytes) on sip0.cube0.pe0")
  end
end

function TestLimits:test_constants_and_ranges_that_overflow_are_errors()
  lu.assertStrContains(kernel_error(function(tl) tl.zeros({ 1 << 40, 1 << 40 }) end),
    "tl.zeros: a result of shape [1099511627776, 1099511627776] f16 is larger than any memory")
  lu.assertStrContains(kernel_error(function(tl) tl.arange(math.mininteger, math.maxinteger) end),
    "tl.arange: -9223372036854775808 .. 9223372036854775807 has more than 2^63 values")
  lu.assertStrContains(kernel_error(function(tl) tl.arange(0, 1 << 50) end),
    "tl.arange: a result of shape [1125899906842624] i32 is larger than any memory")
  lu.assertStrContains(kernel_error(function(tl) tl.arange(0, 0 / 0) end), "tl.arange: stop must be an integer, got")
end

function TestLimits:test_composite_operands_outputs_and_tiles_that_overflow_are_errors()
  lu.assertStrContains(kernel_error(function(tl, p)
    tl.composite { op = "math", math_op = "exp", a = tl.ref(p, { 1 << 40, 1 << 40 }), out_ptr = p }
  end), "tl.composite: a of shape [1099511627776, 1099511627776] f16 is larger than any memory")
  -- A [2^23, 1] x [1, 2^23] GEMM: each operand is small, C has 2^46 f16 elements
  lu.assertStrContains(kernel_error(function(tl, p)
    tl.composite { op = "gemm", a = tl.ref(p, { 1 << 23, 1 }), b = tl.ref(p, { 1, 1 << 23 }), out_ptr = p }
  end), "tl.composite: the output [8388608, 8388608] f16 is larger than any memory (more than 2^46 bytes)")
  -- tiles larger than the matrix are clipped to it (a 4x4 tile plan of one tile) ...
  local torch = runtime()
  local a = torch.empty({ 4, 4 }, { dp = torch.DPPolicy {}, name = "a" })
  local tiles
  torch.launch(function(tl, p)
    local h = tl.composite { op = "math", math_op = "exp", a = tl.ref(p, { 4, 4 }, "f32"), out_ptr = p,
                             tile_shape = { 1 << 62, 1 << 62 } }
    tl.wait(h)
    tiles = h:stats().tiles
  end, 1, a)
  torch.close()
  lu.assertEquals(tiles, 1)
  -- ... but a tile that would move more than 4 GiB in a stage cannot be planned
  lu.assertStrContains(kernel_error(function(tl, p)
    tl.composite { op = "math", math_op = "exp", a = tl.ref(p, { 1 << 17, 1 << 17 }, "f32"), out_ptr = p,
                   tile_shape = { 1 << 17, 1 << 17 } }
  end), "one of its stages would move more than 4 GiB; use smaller tiles")
  lu.assertStrContains(kernel_error(function(tl, p)
    tl.composite { op = "math", math_op = "exp", a = tl.zeros({ 2, 2 }), out_ptr = p, tile_shape = { 2.5, 2 } }
  end), "tl.composite: tile size tm must be an integer, got 2.5")
end

-- ---- times ----

function TestLimits:test_cycles_whose_picoseconds_overflow_are_an_error_naming_the_range()
  -- 2^62 cycles at 1 GHz are 2^62 ns, 4.6e21 ps: beyond int64 picoseconds
  for _, n in ipairs { 2 ^ 62, 1 << 62, math.maxinteger } do
    local err = kernel_error(function(tl) tl.cycles(n) end)
    lu.assertStrContains(err, "tl.cycles: " .. math.tointeger(n) .. " cycles at 1 GHz last")
    lu.assertStrContains(err, "beyond the simulated range (int64 picoseconds, up to t=9223372036854775.807 ns)")
  end
  for _, bad in ipairs { 0 / 0, 1 / 0, 2.5, "3" } do
    lu.assertStrContains(kernel_error(function(tl) tl.cycles(bad) end),
      "tl.cycles: the count must be an integer number of cycles, got")
  end
  lu.assertStrContains(kernel_error(function(tl) tl.cycles(-1) end), "tl.cycles: the count must be >= 0 (got -1)")
  -- the largest count that fits still runs (and takes its time)
  local torch = runtime()
  local t0, t1
  torch.launch(function(tl)
    t0 = torch.now_ns()
    tl.cycles(1000000)
    t1 = torch.now_ns()
  end, 1)
  torch.close()
  lu.assertEquals(t1 - t0, 1000000 + 1) -- 1 GHz, plus the 1 ns dispatch
end

function TestLimits:test_timeouts_and_sleeps_must_end_within_the_simulated_range()
  local s = sim.new {}
  for _, bad in ipairs { 2 ^ 62, 1e300, 1 / 0, math.maxinteger } do
    lu.assertErrorMsgContains("s:timeout(ns): time ", s.timeout, s, bad)
    lu.assertErrorMsgContains("0 .. 9223372036854775.807 ns (int64 picoseconds)", s.timeout, s, bad)
  end
  lu.assertErrorMsgContains("s:timeout(ns): time must be >= 0 ns (got ", s.timeout, s, 0 / 0)
  lu.assertErrorMsgContains("nan); times are 0 .. 9223372036854775.807 ns (int64 picoseconds)", s.timeout, s, 0 / 0)
  -- a delay that fits on its own but not from now
  local err
  s:spawn(function()
    s:sleep(9000000000000000)
    local ok, e = pcall(s.sleep, s, 9000000000000000)
    err = not ok and tostring(e)
  end)
  s:run()
  lu.assertStrContains(err, "s:sleep(ns): 9000000000000000 ns from now (t=9000000000000000.000 ns) ends beyond the "
                            .. "simulated range, 0 .. 9223372036854775.807 ns")
  s:close()
end

function TestLimits:test_a_latency_model_answer_beyond_int64_picoseconds_fails_the_run()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir .. "/lm")
  local f = assert(io.open(dir .. "/lm/huge.lua", "w"))
  f:write("return function(q) if q.op == 'gemm' then return 1e300 end return q.builtin_ns end\n")
  f:close()
  package.path = dir .. "/?.lua;" .. package.path
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe",
    { "cube.pe_template.components.pe_gemm.latency_model=lua:lm.huge" }) }
  local ok, err = pcall(torch.launch, function(tl) tl.dot(tl.zeros({ 2, 2 }), tl.zeros({ 2, 2 })) end, 1)
  torch.close()
  os.execute("rm -rf " .. dir)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "latency model lm.huge returned 1e+300 for gemm: it must return a number of "
                                      .. "ns in 0 .. 9223372036854775.807 (int64 picoseconds)")
end

-- ---- host and device tensors ----

function TestLimits:test_device_shapes_are_integers_whose_bytes_fit()
  local torch = runtime()
  local dp = torch.DPPolicy {}
  local cases = {
    { { 2 ^ 31, 2 ^ 31, 2 ^ 31 }, "shape [2147483648.0, 2147483648.0, 2147483648.0] of f32 is too large" },
    { { 1 << 62, 4 }, "shape [4611686018427387904, 4] of f32 is too large (more than 2^46 bytes)" },
    { { 0 / 0, 2 }, "size 0 of the shape must be an integer >= 1 (a device tensor holds at least one element), got" },
    { { 2, 1 / 0 }, "size 1 of the shape must be an integer >= 1" },
    { { 2.5 }, "got 2.5" },
    { { 0, 4 }, "got 0" },
    { { -1 }, "got -1" },
    { "4", "torch.empty: the shape must be a table of sizes like {64, 128}, got string" },
  }
  for _, c in ipairs(cases) do
    lu.assertErrorMsgContains(c[2], torch.empty, c[1], { dp = dp })
  end
  lu.assertErrorMsgContains("torch.empty: shape", torch.empty, { 1 << 62, 4 }, { dp = dp })
  lu.assertErrorMsgContains("torch.to_device: size 0 of the shape must be an integer >= 1",
                            torch.to_device, torch.zeros({ 0 }), dp)
  lu.assertEquals(torch.stats().live_tensors, 0) -- nothing was placed
  torch.close()
end

function TestLimits:test_host_shapes_with_a_zero_still_have_strides_that_fit()
  local torch = runtime()
  lu.assertErrorMsgContains("tensor: shape [0, 4611686018427387904, 4611686018427387904] of f32 is too large",
                            torch.zeros, { 0, 1 << 62, 1 << 62 })
  lu.assertEquals(torch.zeros({ 0, 1 << 20, 1 << 20 }):numel(), 0)
  lu.assertErrorMsgContains("is invalid for a tensor of 4 elements", torch.reshape, torch.zeros({ 2, 2 }),
                            { 1 << 40, 1 << 40, 1 << 40 })
  -- a view of an empty tensor follows the same rule (its element count overflowed)
  local e = torch.zeros({ 2, 0, 16 }, { dtype = "f16" })
  lu.assertErrorMsgContains("reshape: shape [9223372036854775807, 2, 0, 16] of f16 is too large", e.view, e,
                            { math.maxinteger, 2, 0, 16 })
  lu.assertEquals(e:view({ 0, 1 << 20, 1 << 20 }):numel(), 0)
  torch.close()
end
