--- Kernel execution: the launch path (KernelLaunch, fan-out, start
-- barrier, answers), program ids, the tl primitives' values in data mode,
-- timing independent of data mode, and the errors a kernel author meets.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestKernels = {}

local function runtime(topo, data)
  return torchmod.new { topology = kb.topology.load(topo), data_mode = data and "data" or nil }
end

-- A launch message for `fn` built by hand (the runtime builds the same).
local function message(torch, shards)
  return {
    msg_type = "KernelLaunch", correlation_id = "c1", request_id = "r1", target_device = "sip:0",
    kernel_ref = { name = "probe", kind = "builtin" },
    args = { { arg_kind = "tensor", tensor_pa_map = { shards = shards }, va_base = 0 } },
  }
end

function TestKernels:test_v1_shards_without_placement_tags_are_rejected()
  local torch = runtime("small_1cube_8pe")
  local shards = { { sip = 0, cube = 0, pe = 0, pa = 0, nbytes = 64, offset_bytes = 0 },
                   { sip = 0, cube = 0, pa = 64, nbytes = 64, offset_bytes = 64 } }
  lu.assertErrorMsgContains("KernelLaunch rejected: args[1] shard 2 has no placement tag 'pe'",
                            torch.submit_launch, message(torch, shards), function() end)
  lu.assertEquals(torch.stats().requests, 0)
  torch.close()
end

function TestKernels:test_unmodelled_message_options_are_refused()
  local torch = runtime("small_1cube_8pe")
  local shards = { { sip = 0, cube = 0, pe = 0, pa = 0, nbytes = 64, offset_bytes = 0 } }
  local msg = message(torch, shards)
  msg.failure_policy = "collect_all"
  lu.assertErrorMsgContains("failure_policy collect_all is not implemented", torch.submit_launch, msg, function() end)
  msg = message(torch, shards)
  msg.kernel_ref.kind = "deployed"
  msg.kernel_ref.deploy_pa = 0
  lu.assertErrorMsgContains("deployed kernels (a binary placed in memory) are not modelled",
                            torch.submit_launch, msg, function() end)
  msg.kernel_ref.deploy_pa = nil
  lu.assertErrorMsgContains("kernel_ref.deploy_pa is required", torch.submit_launch, msg, function() end)
  torch.close()
end

function TestKernels:test_v2_one_submit_fans_out_to_the_two_shard_pes_and_completes_once()
  local function run()
    local torch = runtime("small_1cube_8pe")
    local d = torch.empty({ 2, 64 }, { dtype = "f16", dp = torch.DPPolicy { pe = "row_wise", num_pes = 2 } })
    lu.assertEquals(#d.shards, 2)
    torch.synchronize()
    local before = torch.stats().requests
    local ran = {}
    local h = torch.submit_launch(message(torch, {
      { sip = 0, cube = 0, pe = d.shards[1].pe, pa = d.shards[1].pa, nbytes = 128, offset_bytes = 0 },
      { sip = 0, cube = 0, pe = d.shards[2].pe, pa = d.shards[2].pa, nbytes = 128, offset_bytes = 128 },
    }), function(tl) ran[#ran + 1] = tl.program_id(0) end)
    local completions = 0
    torch.sim:spawn(function() h.finished:wait() completions = completions + 1 end)
    torch.synchronize()
    lu.assertEquals(torch.stats().requests, before + 1) -- one submit
    table.sort(ran)
    lu.assertEquals(ran, { 0, 1 })                    -- fanned out to both PEs
    lu.assertEquals(completions, 1)                    -- one completion
    lu.assertEquals(#h.event:value().pes, 2)
    local t = h:elapsed_ns()
    torch.close()
    return t
  end
  lu.assertEquals(run(), run()) -- deterministic
end

function TestKernels:test_a_lower_rank_first_operand_broadcasts()
  -- the result's shape was computed in place over the first operand's, left to
  -- right: [4] + [2, 4] was refused, [2] + [1, 1, 1, 1] read past a view
  local torch = runtime("small_1cube_8pe", true)
  local d = torch.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 } }, { dtype = "f32", dp = torch.DPPolicy {} })
  local shapes, got = {}, nil
  torch.launch({ name = "bcast", fn = function(tl, p)
    local y = tl.add(tl.arange(0, 4, "f32"), tl.load(p, { 2, 4 }, "f32"))
    shapes[1] = y.shape
    got = y:tolist()
    shapes[2] = tl.add(tl.zeros({ 2 }, "f32"), tl.full({ 1, 1, 1, 1 }, 2, "i8")).shape
    shapes[3] = tl.where(tl.full({ 3, 1 }, 1, "bool"), tl.zeros({ 2 }, "f32"), 1).shape
  end }, { 1, 1 }, d)
  lu.assertEquals(shapes, { { 2, 4 }, { 1, 1, 1, 2 }, { 3, 2 } })
  lu.assertEquals(got, { { 1, 3, 5, 7 }, { 5, 7, 9, 11 } })
  torch.close()
end

function TestKernels:test_program_ids_follow_the_2d_grid()
  local torch = runtime("small_2x2")
  local seen = {}
  torch.launch(function(tl)
    seen[#seen + 1] = ("%d,%d of %d,%d"):format(tl.program_id(0), tl.program_id(1), tl.num_programs(0),
                                                tl.num_programs(1))
    lu.assertEquals(tl.program_id(), tl.program_id(0))
  end, { 3, 2 })
  table.sort(seen)
  lu.assertEquals(seen, { "0,0 of 3,2", "0,1 of 3,2", "1,0 of 3,2", "1,1 of 3,2", "2,0 of 3,2", "2,1 of 3,2" })
  torch.close()
end

function TestKernels:test_every_pe_starts_at_the_stamped_barrier()
  local torch = torchmod.new { topology = kb.topology.load("default") }
  local P = torch.spec
  local h = torch.launch(function() end, { P.pes_per_cube, P.cubes_per_sip })
  local r = h.result
  lu.assertEquals(#r.pes, P.pes_per_cube * P.cubes_per_sip)
  local target = h.message.target_start_ns
  lu.assertTrue(target > 0)
  for _, pe in ipairs(r.pes) do
    lu.assertEquals(pe.start_ns, target, ("sip%d.cube%d.pe%d"):format(pe.sip, pe.cube, pe.pe))
    lu.assertEquals(pe.late_ns, 0)
  end
  torch.close()
end

-- ---- values in data mode ----

local function gemm_case(dtype, M, K, N)
  local torch = runtime("small_1cube_1pe", true)
  torch.manual_seed(5)
  local one = torch.DPPolicy {}
  local a = torch.randn({ M, K }, { dtype = dtype })
  local b = torch.randn({ K, N }, { dtype = dtype })
  local da, db = torch.to_device(a, one), torch.to_device(b, one)
  local dc = torch.empty({ M, N }, { dtype = dtype, dp = one })
  torch.launch("kernels.gemm_tile", 1, da, db, dc, M, K, N)
  return torch, dc:cpu(), torch.matmul(a:float(), b:float()):to(dtype)
end

function TestKernels:test_dot_matches_the_reference_in_f32_f16_bf16()
  for _, dt in ipairs { "f32", "f16", "bf16" } do
    local torch, got, ref
    if dt == "f16" then
      torch, got, ref = gemm_case(dt, 48, 80, 40)
    else -- kernels.gemm_tile takes the dtype as its last argument: bind it
      torch = runtime("small_1cube_1pe", true)
      torch.manual_seed(6)
      local one = torch.DPPolicy {}
      local a, b = torch.randn({ 48, 80 }, { dtype = dt }), torch.randn({ 80, 40 }, { dtype = dt })
      local da, db = torch.to_device(a, one), torch.to_device(b, one)
      local dc = torch.empty({ 48, 40 }, { dtype = dt, dp = one })
      local k = require "kernels.gemm_tile"
      torch.launch({ name = "gemm_" .. dt, fn = function(tl, x, y, z) k(tl, x, y, z, 48, 80, 40, dt) end }, 1,
                   da, db, dc)
      got, ref = dc:cpu(), torch.matmul(a:float(), b:float()):to(dt)
    end
    lu.assertTrue(torch.verify("C " .. dt, got, ref) ~= nil, dt)
    torch.close()
  end
end

-- Runs body(tl, out_ptr) on one PE in data mode; returns the host copy of
-- what it stored into a device tensor of shape/dtype.
local function one_pe(shape, dtype, body, inputs)
  local torch = runtime("small_1cube_1pe", true)
  local one = torch.DPPolicy {}
  local args = {}
  for i, t in ipairs(inputs or {}) do args[i] = torch.to_device(t, one) end
  local out = torch.empty(shape, { dtype = dtype, dp = one })
  args[#args + 1] = out
  torch.launch(body, 1, table.unpack(args))
  local r = out:cpu()
  torch.close()
  return r
end

function TestKernels:test_math_ops_match_the_reference()
  local tc = require "kernbench.tensor_c"
  for _, dt in ipairs { "f32", "f16", "bf16" } do
    local g = tc.new_generator(9)
    local x = tc.randn({ 4, 16 }, { dtype = dt }, g)
    local y = tc.rand({ 4, 16 }, { dtype = dt }, g)
    local tol = ({ f32 = 1e-5, f16 = 1e-3, bf16 = 1e-2 })[dt]
    local cases = {
      { "exp", function(tl, a) return tl.exp(a) end, tc.exp(x:float()) },
      { "add", function(tl, a, b) return a + b end, tc.add(x:float(), y:float()) },
      { "sub scalar", function(tl, a) return a - 0.5 end, tc.sub(x:float(), 0.5) },
      { "mul", function(tl, a, b) return a * b end, tc.mul(x:float(), y:float()) },
      { "div", function(tl, a, b) return a / (b + 1) end, tc.div(x:float(), tc.add(y:float(), 1)) },
      { "neg", function(tl, a) return -a end, tc.neg(x:float()) },
      { "maximum", function(tl, a, b) return tl.maximum(a, b) end, nil },
      { "sigmoid", function(tl, a) return tl.sigmoid(a) end, tc.sigmoid(x:float()) },
      { "softmax", function(tl, a) return tl.softmax(a, 1) end, tc.softmax(x:float(), 1) },
      { "fma", function(tl, a, b) return tl.fma(a, b, a) end, tc.add(tc.mul(x:float(), y:float()), x:float()) },
      { "where", function(tl, a, b) return tl.where(a - b, a, b) end, nil },
      { "clamp", function(tl, a) return tl.clamp(a, -0.5, 0.5) end, nil },
      { "broadcast", function(tl, a) return a - tl.max(a, 1) end, tc.sub(x:float(), (tc.max(x:float(), 1, true))) },
    }
    for _, c in ipairs(cases) do
      local name, f, ref = c[1], c[2], c[3]
      local got = one_pe({ 4, 16 }, dt, function(tl, px, py, out)
        local a, b = tl.load(px, { 4, 16 }, dt), tl.load(py, { 4, 16 }, dt)
        tl.store(out, f(tl, a, b))
      end, { x, y })
      if ref == nil then -- element by element in Lua
        ref = tc.zeros({ 4, 16 })
        for i = 0, 3 do
          for j = 0, 15 do
            local a, b = x[{ i, j }], y[{ i, j }]
            ref[{ i, j }] = (name == "maximum" and math.max(a, b)) or (name == "where" and ((a - b ~= 0) and a or b))
              or math.min(math.max(a, -0.5), 0.5)
          end
        end
      end
      lu.assertTrue(tc.allclose(got:float(), ref:to(dt):float(), tol, tol), dt .. " " .. name)
    end
  end
end

function TestKernels:test_reductions_keep_the_axis_and_reduce_everything_without_one()
  local tc = require "kernbench.tensor_c"
  local x = tc.randn({ 3, 5 }, {}, tc.new_generator(2))
  local got = one_pe({ 1, 5 }, "f32", function(tl, px, out)
    local a = tl.load(px, { 3, 5 }, "f32")
    local s = tl.sum(a, 0)
    lu.assertEquals(s.shape, { 1, 5 })
    lu.assertEquals(tl.min(a).shape, { 1 })
    lu.assertAlmostEquals(tl.sum(a):item(), x:sum(), 1e-5)
    tl.store(out, s)
  end, { x })
  lu.assertTrue(tc.allclose(got, tc.sum(x, 0, true), 1e-5, 1e-5))
end

function TestKernels:test_loaded_values_constants_and_views_can_be_read()
  local tc = require "kernbench.tensor_c"
  local x = tc.tensor({ { 1, 2, 3 }, { 4, 5, 6 } })
  one_pe({ 1 }, "f32", function(tl, px, out)
    local a = tl.load(px, { 2, 3 }, "f32")
    lu.assertEquals(a[1][2], 6)
    lu.assertEquals(a[-1][0], 4)
    lu.assertEquals(a:tolist(), { { 1, 2, 3 }, { 4, 5, 6 } })
    local t = tl.trans(a)
    lu.assertEquals(t.shape, { 3, 2 })
    lu.assertEquals(t:tolist(), { { 1, 4 }, { 2, 5 }, { 3, 6 } })
    lu.assertEquals(tl.dot(t, a):tolist(), { { 17, 22, 27 }, { 22, 29, 36 }, { 27, 36, 45 } })
    local h = tl.full({ 2, 2 }, 0.1, "f16")
    local wide = tl.dot(h, h, { out_dtype = "f32" })
    lu.assertEquals(wide.dtype, "f32")
    lu.assertEquals(tl.dot(h, h).dtype, "f16")
    -- f16 0.1 is 0.0999755859375; two products summed in f32, not rounded to f16
    lu.assertAlmostEquals(wide[0][0], 2 * 0.0999755859375 ^ 2, 1e-8) -- f32 rounding
    lu.assertEquals(tl.arange(2, 6):tolist(), { 2, 3, 4, 5 })
    lu.assertEquals(tl.zeros({ 2 }, "f32"):tolist(), { 0, 0 })
    lu.assertEquals(tl.full({ 2, 1 }, 7, "i32"):tolist(), { { 7 }, { 7 } })
    lu.assertEquals(tl.cdiv(7, 2), 4)
    lu.assertEquals(#a, 2)
    tl.store(out, tl.full({ 1 }, 1, "f32"))
  end, { x })
end

-- ---- timing follows docs/pe-model.md ----

function TestKernels:test_command_times_follow_the_pe_model()
  local torch = runtime("small_1cube_1pe")
  local times = {}
  torch.launch(function(tl)
    local a, b = tl.zeros({ 128, 256 }), tl.zeros({ 256, 128 }) -- metadata: no time
    local t0 = torch.now_ns()
    tl.dot(a, b)
    times.dot = torch.now_ns() - t0
    t0 = torch.now_ns()
    tl.cycles(100)
    times.cycles = torch.now_ns() - t0
    t0 = torch.now_ns()
    tl.exp(tl.zeros({ 1000 }, "f32"))
    times.exp = torch.now_ns() - t0
  end, 1)
  -- dispatch 1 ns; fetch 128 KiB at 512 GB/s = 256 ns; 4 * 4 * 64 = 1024 cycles; store 32 KiB = 64 ns
  lu.assertEquals(times.dot, 1 + 256 + 1024 + 64)
  lu.assertEquals(times.cycles, 1 + 100)
  -- fetch 4000 B at 512 GB/s = 7.8125 ns, rounded up to 7.813; ceil(1000 / 32) = 32 vectors * 4
  -- cycles; store 7.813 ns
  lu.assertAlmostEquals(times.exp, 1 + 7.813 + 128 + 7.813, 1e-9)
  torch.close()
end

-- ---- timing does not depend on data mode ----

function TestKernels:test_timing_only_and_data_runs_have_the_same_timing()
  local function run(data)
    local torch = runtime("small_1cube_8pe", data)
    torch.manual_seed(3)
    local dp = torch.DPPolicy { pe = "row_wise" }
    local x = torch.to_device(torch.randn({ 8 * 16, 64 }, { dtype = "f16" }), dp)
    local y = torch.empty({ 8 * 16, 64 }, { dtype = "f16", dp = dp })
    local h = torch.launch(function(tl, px, py)
      local off = tl.program_id(0) * 16 * 64 * 2
      local a = tl.load(px + off, { 16, 64 }, "f16")
      local b = tl.dot(a, tl.trans(a))
      tl.cycles(10)
      tl.store(py + off, tl.exp(a) * 2 + tl.softmax(a, 1) - tl.sum(a, 1) / 64 + tl.dot(b, a))
    end, 8, x, y)
    local r = { elapsed = h:elapsed_ns(), events = torch.stats().events }
    for _, pe in ipairs(h.result.pes) do r[#r + 1] = { pe.pe_exec_ns, pe.dma_ns, pe.compute_ns, pe.calls } end
    torch.close()
    return r
  end
  lu.assertEquals(run(false), run(true))
end

-- ---- errors ----

local function launch_error(topo, kernel, grid, data)
  local torch = runtime(topo, data)
  local ok, err = pcall(torch.launch, kernel, grid or 1)
  torch.close()
  lu.assertFalse(ok)
  return tostring(err)
end

function TestKernels:test_a_kernel_error_names_kernel_pe_time_and_traceback()
  local err = launch_error("small_1cube_8pe", { name = "broken", fn = function(tl)
    tl.cycles(3)
    if tl.program_id(0) == 2 then error("boom") end
  end }, 4)
  lu.assertStrContains(err, "kernel broken on sip0.cube0.pe2")
  lu.assertStrContains(err, "failed at t=")
  lu.assertStrContains(err, "boom")
  lu.assertStrContains(err, "stack traceback")
end

function TestKernels:test_program_id_axis_out_of_range()
  lu.assertStrContains(launch_error("small_1cube_1pe", function(tl) tl.program_id(2) end),
    "tl.program_id: axis must be 0 (the PE within its cube) or 1 (the cube), got 2")
end

function TestKernels:test_store_to_an_unmapped_address()
  local err = launch_error("small_1cube_1pe", { name = "bad_store", fn = function(tl)
    tl.store(0x200000000, tl.zeros({ 4 }))
  end })
  lu.assertStrContains(err, "tl.store: virtual address 0x200000000 is not mapped on sip0.cube0.pe0 "
                            .. "(kernel 'bad_store' at t=")
end

-- PE_MMU translates in the command's mmu stage: the fault ends the command
-- after its dispatch and is raised when the kernel resumes, so the error
-- names the kernel, the PE, the address and the time of that stage, and
-- the traceback points at the tl.load line.
function TestKernels:test_a_load_from_an_unmapped_address_names_kernel_pe_address_and_time()
  local line
  local err = launch_error("small_1cube_1pe", { name = "bad_load", fn = function(tl)
    tl.cycles(5)
    line = debug.getinfo(1, "l").currentline + 1
    tl.load(0x300000000, { 4 }, "f16")
  end })
  lu.assertStrContains(err, "tl.load: virtual address 0x300000000 is not mapped on sip0.cube0.pe0 "
                            .. "(kernel 'bad_load' at t=")
  local fault = err:match("%(kernel 'bad_load' at t=([%d.]+) ns%)")
  local failed = err:match("failed at t=([%d.]+) ns:")
  lu.assertEquals(fault, failed)
  lu.assertStrContains(err, "stack traceback")
  lu.assertStrContains(err, "test_kernels.lua:" .. line .. ":")
end

function TestKernels:test_a_fault_comes_after_the_dispatch_and_the_tlb_cost_is_not_paid()
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe",
    { "cube.pe_template.components.pe_mmu.attrs.tlb_overhead_ns=7" }) }
  local t0
  local ok, err = pcall(torch.launch, { name = "late_fault", fn = function(tl)
    t0 = torch.sim:now()
    tl.load(0x300000000, { 4 }, "f16")
  end }, 1)
  torch.close()
  lu.assertFalse(ok)
  local fault = tonumber(tostring(err):match("%(kernel 'late_fault' at t=([%d.]+) ns%)"))
  lu.assertAlmostEquals(fault - t0, 1, 1e-9) -- the 1 ns dispatch, then the fault
end

function TestKernels:test_pa_fallback_loads_from_an_unmapped_address_as_physical()
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe"), pa_fallback = true }
  local pa = torch.empty({ 4 }, { dtype = "f16", dp = torch.DPPolicy {} }).shards[1].pa
  torch.synchronize()
  local h = torch.launch(function(tl, p) tl.store(p, tl.load(p, { 4 }, "f16")) end, 1, pa)
  lu.assertTrue(h.result.dma_ns > 0)
  torch.close()
end

-- Kernel instances are reference counted: when a kernel fails, another
-- PE's command still in flight and the instances' contexts are released
-- whatever the order (checked for leaks and stale pointers under ASan).
function TestKernels:test_a_failing_kernel_with_commands_in_flight_elsewhere_releases_its_instances()
  local torch = runtime("small_1cube_8pe")
  local d = torch.empty({ 2, 65536 }, { dtype = "f16", dp = torch.DPPolicy { pe = "row_wise", num_pes = 2 } })
  local ok, err = pcall(torch.launch, { name = "half", fn = function(tl, p)
    if tl.program_id(0) == 1 then
      tl.cycles(10)
      error("pe1 gives up")
    end
    tl.load(p, { 65536 }, "f16") -- still in flight when PE 1 fails
  end }, 2, d)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "pe1 gives up")
  torch.close()
  collectgarbage()
  collectgarbage()
end

function TestKernels:test_scratch_overflow()
  local err = launch_error("small_1cube_1pe", function(tl) tl.zeros({ 1024, 1024 }, "f32") end)
  lu.assertStrContains(err, "tl.zeros: scratch overflow on sip0.cube0.pe0")
  -- a result whose scratch was reused cannot be used again
  err = launch_error("small_1cube_1pe", function(tl)
    local first = tl.zeros({ 256, 1024 }, "f16")
    for _ = 1, 3 do tl.zeros({ 256, 1024 }, "f16") end
    return first + 1
  end)
  lu.assertStrContains(err, "tl.add: argument 1 (a tl.zeros result) was overwritten")
  lu.assertStrContains(err, "scratch overflow")
end

function TestKernels:test_reading_values_in_timing_only_mode()
  local err = launch_error("small_1cube_1pe", function(tl) return tl.zeros({ 4 })[0] end)
  lu.assertStrContains(err, "tensor values exist only in data mode: run with --data (or --verify-data)")
end

function TestKernels:test_dot_shape_mismatch_names_both_shapes()
  local err = launch_error("small_1cube_1pe", function(tl) tl.dot(tl.zeros({ 2, 3 }), tl.zeros({ 4, 5 })) end)
  lu.assertStrContains(err, "tl.dot: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)")
  err = launch_error("small_1cube_1pe", function(tl) return tl.zeros({ 2, 3 }) + tl.zeros({ 4 }) end)
  lu.assertStrContains(err, "tl.add: shapes [2, 3] and [4] cannot be broadcast together")
end

function TestKernels:test_concurrent_launches_of_one_name_run_their_own_functions()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe", { "system.sips.count=2" }) }
  local ran, hs = {}, {}
  for sip = 0, 1 do
    torch.ahbm.set_device(sip)
    local mine = sip * 10
    -- the same source line (the kernel's name) with a different closure per SIP
    hs[#hs + 1] = torch.launch_async(function() ran[#ran + 1] = mine end, 1)
  end
  for _, h in ipairs(hs) do torch.wait(h) end
  table.sort(ran)
  lu.assertEquals(ran, { 0, 10 })
  torch.close()
end

function TestKernels:test_queues_without_an_install_say_so()
  local err = launch_error("small_1cube_1pe", function(tl) tl.send("E", tl.zeros({ 4 })) end)
  lu.assertStrContains(err, "tl.send: no IPCQ is installed on sip0.cube0.pe0 (torch.install_ipcq{...} first)")
end

function TestKernels:test_a_kernel_that_never_finishes_is_reported_with_its_pe()
  local torch = runtime("small_1cube_8pe")
  local never = torch.sim:event("never")
  local ok, err = pcall(torch.launch, { name = "stuck", fn = function(tl)
    if tl.program_id(0) == 1 then never:wait() end
  end }, 2)
  torch.close()
  lu.assertFalse(ok)
  err = tostring(err)
  lu.assertStrContains(err, "deadlock")
  lu.assertStrContains(err, "kernel stuck on sip0.cube0.pe1")
  lu.assertStrContains(err, "never")
end

function TestKernels:test_launch_argument_errors()
  local torch = runtime("small_1cube_8pe")
  lu.assertErrorMsgContains("grid asks for 9 PEs per cube, the topology has 8",
    torch.launch, function() end, 9)
  lu.assertErrorMsgContains("argument 1 is a host tensor", torch.launch, function() end, 1, torch.zeros({ 2 }))
  lu.assertErrorMsgContains("cannot load kernel module 'kernels.nope'", torch.launch, "kernels.nope", 1)
  torch.close()
end

-- ---- long kernels run in constant memory ----

local function rss_kib()
  local f = io.open("/proc/self/statm")
  if not f then return nil end
  local pages = f:read("n") and f:read("n")
  f:close()
  return pages * 4
end

function TestKernels:test_thousands_of_yields_do_not_grow_memory()
  local torch = runtime("small_1cube_1pe")
  local d = torch.empty({ 64, 512 }, { dtype = "f16", dp = torch.DPPolicy {} })
  local function loop(n)
    torch.launch(function(tl, p)
      for i = 0, n - 1 do
        local x = tl.load(p + (i % 64) * 1024, { 512 }, "f16")
        tl.store(p + ((i + 1) % 64) * 1024, x)
      end
    end, 1, d)
    torch.synchronize()
    collectgarbage()
    collectgarbage()
    return collectgarbage("count"), rss_kib()
  end
  loop(2000) -- warm up: pools, caches
  local lua1, rss1 = loop(2000)
  local lua2, rss2 = loop(20000)
  lu.assertTrue(lua2 - lua1 < 64, ("Lua heap grew by %.0f KiB"):format(lua2 - lua1))
  -- nothing per operation stays behind in C either: no records, nothing pending
  lu.assertEquals(#torch.sim:op_log().records, 0)
  lu.assertEquals(torch.sim:stats().pending, 0)
  -- the resident size says the same, except under AddressSanitizer, whose
  -- quarantine keeps freed memory resident by design
  if rss1 and not os.getenv("ASAN_OPTIONS") then
    lu.assertTrue(rss2 - rss1 < 2048, ("RSS grew by %d KiB"):format(rss2 - rss1))
  end
  torch.close()
end
