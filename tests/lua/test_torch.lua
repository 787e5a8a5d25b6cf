--- The torch-like runtime (lua/kernbench/torch.lua): placement, deploy and
-- read-back with real data, allocators, MMU mappings, timing with data.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestTorch = {}

local KINDS = { "replicate", "row_wise", "column_wise" }

function TestTorch:test_every_policy_deploys_and_reads_back_identical_data()
  local torch = torchmod.new { topology = kb.topology.load("small_2x2") }
  local P = torch.spec
  torch.manual_seed(11)
  local x = torch.randn({ 2 * P.cubes_per_sip * P.pes_per_cube + 3, 37 }, { dtype = "f16" })
  for _, cube in ipairs(KINDS) do
    for _, pe in ipairs(KINDS) do
      local d = torch.empty(x.shape, { dtype = "f16", dp = torch.DPPolicy { cube = cube, pe = pe } })
      lu.assertEquals(#d.shards, P.cubes_per_sip * P.pes_per_cube)
      torch.wait(d:copy_(x))
      lu.assertTrue(torch.equal(d:cpu(), x), cube .. "/" .. pe)
      d:free()
    end
  end
  torch.synchronize()
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

function TestTorch:test_zeros_and_tensor_on_the_device()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_8pe") }
  local dp = torch.DPPolicy { pe = "row_wise" }
  local z = torch.zeros({ 16, 4 }, { dtype = "i32", dp = dp })
  lu.assertEquals(z:cpu():tolist()[16], { 0, 0, 0, 0 })
  local t = torch.tensor({ { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 }, { 9, 10 }, { 11, 12 }, { 13, 14 }, { 15, 16 } },
                         { dtype = "f32", dp = dp })
  lu.assertEquals(t:cpu():tolist()[8], { 15.0, 16.0 })
  torch.cleanup()
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

function TestTorch:test_creation_options_nobody_reads_are_errors()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_8pe") }
  local dp = torch.DPPolicy { pe = "row_wise" }
  lu.assertErrorMsgContains("torch.zeros: unknown option 'dtpye'", torch.zeros, { 16, 4 }, { dtpye = "f16", dp = dp })
  lu.assertErrorMsgContains("torch.empty: unknown option 'mapp'", torch.empty, { 16, 4 }, { dp = dp, mapp = "cube" })
  -- name and map describe a device tensor: without dp they would be dropped
  lu.assertErrorMsgContains("torch.ones: map applies to a device tensor", torch.ones, { 16, 4 }, { map = "cube" })
  lu.assertErrorMsgContains("torch.full: name applies to a device tensor", torch.full, { 2 }, 1, { name = "x" })
  local tc = require "kernbench.tensor_c"
  lu.assertErrorMsgContains("torch.tensor: unknown option 'generator'", torch.tensor, { 1 },
                            { generator = tc.new_generator(1) })
  -- a generator given to rand is the one used, not the runtime's
  local a = torch.rand({ 4 }, { generator = tc.new_generator(7) })
  lu.assertTrue(torch.equal(a, tc.rand({ 4 }, nil, tc.new_generator(7))))
  lu.assertFalse(torch.equal(a, torch.rand({ 4 })))
  torch.close()
end

function TestTorch:test_a_failed_kernel_gives_its_pe_back()
  -- as in the REPL: a kernel fails, the user fixes it and launches again
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_8pe"), data = true }
  local d = torch.tensor({ { 1, 2 }, { 3, 4 } }, { dtype = "f32", dp = torch.DPPolicy {} })
  local bad = { name = "bad", fn = function(tl, p)
    local x = tl.load(p, { 2, 2 }, "f32")
    tl.composite { op = "math", math_op = "add", a = tl.ref(p, { 2, 2 }, "f32"), b = tl.ref(p, { 2, 2 }, "f32"),
                   out_ptr = p }
    if x then error("oops") end
  end }
  lu.assertErrorMsgContains("oops", torch.launch, bad, { 1, 1 }, d)
  -- its scratch is the PE's again (the failed instance ended once its
  -- composite had), and the waiter of the failed run stops no later run
  local h = torch.launch({ name = "good", fn = function(tl, p) tl.store(p, tl.load(p, { 2, 2 }, "f32") * 2) end },
                         { 1, 1 }, d)
  lu.assertTrue(h:done())
  lu.assertEquals(d:cpu():tolist(), { { 4, 8 }, { 12, 16 } }) -- the composite's doubling, then good's
  -- the failed launch's handle completes, and waiting on it says it failed
  local h2 = torch.launch_async(bad, { 1, 1 }, d)
  lu.assertErrorMsgContains("oops", torch.synchronize)
  torch.synchronize()
  lu.assertTrue(h2:done())
  lu.assertErrorMsgContains("launch 'bad' failed: its kernel on sip0.cube0.pe0 raised an error", torch.wait, h2)
  torch.close()
end

function TestTorch:test_mappings_follow_the_policy_and_unmapped_access_is_an_error()
  local torch = torchmod.new { topology = kb.topology.load("small_2x2") }
  local P = torch.spec
  -- sharded over cubes: every PE that holds a shard can translate every shard
  local d = torch.empty({ P.cubes_per_sip, 64 }, { dtype = "f16",
    dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 } })
  torch.synchronize()
  for _, sh in ipairs(d.shards) do
    for _, other in ipairs(d.shards) do
      lu.assertEquals(torch.translate(other.sip, other.cube, other.pe, d.va_base + sh.offset_bytes + 2),
                      sh.pa + 2)
    end
  end
  -- replicated over cubes: each cube maps only its own copy
  local r = torch.empty({ 4, 64 }, { dtype = "f16", dp = torch.DPPolicy { cube = "replicate", num_pes = 1 } })
  torch.synchronize()
  for _, sh in ipairs(r.shards) do
    lu.assertEquals(torch.translate(sh.sip, sh.cube, sh.pe, r.va_base), sh.pa)
  end
  lu.assertNotEquals(r.shards[1].pa, r.shards[2].pa)
  -- unmapped: an error naming the PE and the address
  lu.assertErrorMsgContains(("torch.translate: virtual address 0x%x is not mapped on sip0.cube0.pe1"):format(d.va_base),
                            torch.translate, 0, 0, 1, d.va_base)
  d:free()
  torch.synchronize()
  lu.assertErrorMsgContains("is not mapped", torch.translate, 0, 0, 0, d.va_base)
  torch.close()
end

function TestTorch:test_mapping_is_installed_only_when_its_message_arrives()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe") }
  local d = torch.empty({ 4, 4 }, { dtype = "f32", dp = torch.DPPolicy {} })
  lu.assertErrorMsgContains("is not mapped", torch.translate, 0, 0, 0, d.va_base)
  torch.wait(d.mapped)
  lu.assertTrue(torch.now_ns() > 0) -- host -> PCIe -> IO_CPU -> M_CPU -> PE_MMU takes time
  lu.assertEquals(torch.translate(0, 0, 0, d.va_base), d.shards[1].pa)
  torch.close()
end

function TestTorch:test_deploy_latency_grows_with_distance_from_the_io_chiplet()
  local t = kb.topology.load("default")
  local P = t:params()
  local function deploy_time(cube)
    local torch = torchmod.new { topology = t }
    local x = torch.ones({ 64, 256 }, { dtype = "f16" })
    local d = torch.empty(x.shape, { dtype = "f16",
      dp = torch.DPPolicy { cube = "replicate", num_cubes = cube + 1, num_pes = 1 } })
    torch.wait(d.mapped)
    local t0 = torch.now_ns()
    -- write only the copy on `cube`
    local sh = d.shards[cube + 1]
    torch.wait(torch.sim:memory_write { pa = sh.pa, nbytes = sh.nbytes, data = x:bytes() })
    local dt = torch.now_ns() - t0
    torch.close()
    return dt
  end
  -- the IO chiplet sits on the north shore: cubes further south are further away
  local near, mid, far = deploy_time(0), deploy_time(P.cube_w), deploy_time(P.cube_w * (P.cube_h - 1))
  lu.assertTrue(near < mid and mid < far, ("%g %g %g"):format(near, mid, far))
end

function TestTorch:test_data_does_not_change_timing()
  local t = kb.topology.load("small_2x2")
  local function run(with_data)
    local s = sim.new { topology = t }
    local payload = string.rep("\7", 4096)
    local w = s:memory_write { sip = 0, cube = 3, pe = 1, nbytes = 4096, data = with_data and payload or nil }
    local r = s:memory_read { sip = 0, cube = 3, pe = 1, nbytes = 4096, data = with_data }
    s:run()
    return w:value().latency_ns, r:value().latency_ns, r:value().data
  end
  local w1, r1, d1 = run(true)
  local w2, r2, d2 = run(false)
  lu.assertEquals(w1, w2)
  lu.assertEquals(r1, r2)
  lu.assertEquals(d1, string.rep("\7", 4096))
  lu.assertNil(d2)
end

function TestTorch:test_device_selection_and_errors()
  local torch = torchmod.new { topology = kb.topology.load("default"), device = 1 }
  lu.assertEquals(torch.ahbm.current_device(), 1)
  local d = torch.empty({ 2, 8 }, { dtype = "f16", dp = torch.DPPolicy { num_cubes = 1, num_pes = 1 } })
  lu.assertEquals(d.shards[1].sip, 1)
  lu.assertErrorMsgContains("the topology has SIPs 0 .. 1", torch.ahbm.set_device, 2)
  lu.assertErrorMsgContains("dp must be a DPPolicy", torch.empty, { 2 }, { dp = { cube = "row_wise" } })
  local x = torch.zeros({ 2, 8 }, { dtype = "f32" })
  lu.assertErrorMsgContains("convert with :to(\"f16\") first", d.copy_, d, x)
  d:free()
  lu.assertErrorMsgContains("cpu of tensor1 after it was freed", d.cpu, d)
  torch.close()
end

function TestTorch:test_exhaustion_names_the_pe_and_the_sizes()
  local t = kb.topology.load("small_1cube_1pe", { "cube.memory_map.hbm_total_gb_per_cube=9.5367431640625e-07" })
  local torch = torchmod.new { topology = t }
  lu.assertErrorMsgContains("on sip0.cube0.pe0: out of memory: 4096 bytes requested", torch.empty, { 1024 },
                            { dtype = "f32", dp = torch.DPPolicy {} })
  torch.close()
end

function TestTorch:test_handles_report_elapsed_time()
  local torch = torchmod.new { topology = kb.topology.load("small_2x2") }
  local x = torch.ones({ 64, 64 }, { dtype = "f16" })
  local d = torch.empty(x.shape, { dtype = "f16", dp = torch.DPPolicy { cube = "row_wise" } })
  local h = d:copy_(x)
  lu.assertFalse(h:done())
  lu.assertErrorMsgContains("not complete yet", h.elapsed_ns, h)
  torch.wait(h)
  lu.assertTrue(h:done())
  lu.assertTrue(h:elapsed_ns() > 0)
  lu.assertEquals(h.start_ns + h:elapsed_ns(), h.end_ns)
  lu.assertTrue(torch.elapsed_ns() >= h.end_ns)
  torch.close()
end

function TestTorch:test_tcm_allocator_never_hands_out_the_scheduler_region()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe") }
  lu.assertTrue(torch.tcm_reserved_bytes > 0)
  local offs = {}
  local free = torch.tcm_bytes - torch.tcm_reserved_bytes
  for i = 1, 4 do
    local pa, off = torch.alloc_tcm(0, 0, 0, free // 4)
    lu.assertTrue(off >= torch.tcm_reserved_bytes and off + free // 4 <= torch.tcm_bytes)
    lu.assertEquals(kb.addr.decode(pa).offset, off)
    offs[i] = off
  end
  lu.assertErrorMsgContains("sip0.cube0.pe0: out of memory", torch.alloc_tcm, 0, 0, 0, 16)
  for _, off in ipairs(offs) do torch.free_tcm(0, 0, 0, off) end
  lu.assertErrorMsgContains("no allocation starts there", torch.free_tcm, 0, 0, 0, offs[1])
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

function TestTorch:test_pa_fallback_is_an_explicit_option_and_tlb_cost_comes_from_the_topology()
  local t = kb.topology.load("small_1cube_1pe", { "cube.pe_template.components.pe_mmu.attrs.tlb_overhead_ns=3" })
  local strict = kb.torch { topology = t }
  lu.assertErrorMsgContains("is not mapped", strict.translate, 0, 0, 0, 0x1234)
  strict.close()
  local compat = kb.torch { topology = t, pa_fallback = true }
  local pa, cost = compat.translate(0, 0, 0, 0x1234)
  lu.assertEquals(pa, 0x1234)
  lu.assertEquals(cost, 3)
  compat.close()
end



-- A handle's elapsed time is a difference of integer ps divided once (ns
-- subtracted as doubles gave 1718.0000000000002 in results files).
function TestTorch:test_elapsed_ns_is_exact()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe") }
  local naive_differs = 0
  for n = 1, 40 do
    local h = torch.launch({ name = "busy", fn = function(tl) tl.cycles(n * 7) end }, 1)
    torch.wait(h)
    local exact = (h.end_ps - h.start_ps) / 1000
    lu.assertEquals(("%.17g"):format(h:elapsed_ns()), ("%.17g"):format(exact))
    if h.end_ns - h.start_ns ~= exact then naive_differs = naive_differs + 1 end
  end
  lu.assertTrue(naive_differs > 0, "no launch in this test would catch a subtraction of ns doubles")
  torch.close()
end

-- The extension interface (docs/torch.md, "Extending the runtime"): a bound
-- function reaches the runtime's methods, its errors name the caller's line
-- (as the facade's do), and a name is exported once.
function TestTorch:test_an_extension_exports_bound_functions_whose_errors_name_the_caller()
  local rt = require("kernbench.torch.runtime").new { topology = kb.topology.load("small_1cube_1pe") }
  rt:export("plus_sip", rt:bind(function(r, x)
    if math.type(x) ~= "integer" then error("plus_sip: x must be an integer", 2) end
    return r:sip() + x
  end))
  lu.assertEquals(rt.api.plus_sip(3), 3)
  local line = debug.getinfo(1, "l").currentline + 1
  local ok, err = pcall(function() rt.api.plus_sip("x") end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "test_torch.lua:" .. line .. ": plus_sip: x must be an integer")
  lu.assertErrorMsgContains("torch runtime: 'plus_sip' is exported twice", rt.export, rt, "plus_sip", 1)
  rt:close()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe") }
  line = debug.getinfo(1, "l").currentline + 1
  ok, err = pcall(function() torch.manual_seed(1.5) end)
  lu.assertStrContains(err, "test_torch.lua:" .. line .. ": torch.manual_seed: the seed must be an integer")
  local d = torch.empty({ 2 }, { dp = torch.DPPolicy {}, name = "w" })
  d:free()
  line = debug.getinfo(1, "l").currentline + 1
  ok, err = pcall(function() d:free() end)
  lu.assertStrContains(err, "test_torch.lua:" .. line .. ": torch: free of w: it was freed already")
  lu.assertEquals(d.numpy, d.cpu)
  torch.close()
end
