--- Memory lifetimes and values that were never computed (docs/reliability.md,
-- "Memory lifetimes and uncomputed values"): a device tensor cannot be freed
-- while a launch, a copy or a read still uses it; a tl handle or context
-- dies with its kernel instance; host memory operations and MMU maps are
-- checked against the whole range they touch; a timing-only run never hands
-- back values that a kernel or collective was supposed to compute.
local lu = require "luaunit"

TestLifetimes = {}

local function runtime(topo, data)
  return kb.torch { topology = kb.topology.load(topo or "small_1cube_8pe"), data_mode = data and "data" or nil }
end

local function error_of(f, ...)
  local ok, err = pcall(f, ...)
  lu.assertFalse(ok, "the call should fail")
  return tostring(err)
end

local function one(torch) return torch.DPPolicy {} end

-- ---- 1. a kernel's argument freed while the kernel runs ----

function TestLifetimes:test_a_kernel_cannot_free_its_own_argument()
  local torch = runtime(nil, true)
  local d = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch), name = "arg" })
  local err = error_of(torch.launch, { name = "selfish", fn = function(tl, p)
    d:free()
    tl.store(p, tl.full({ 4, 4 }, 7, "f32"))
  end }, 1, d)
  lu.assertStrContains(err, "torch: free of 'arg' refused: launch 'selfish' (launch-1, not complete) still uses it "
    .. "(this free runs in kernel selfish on sip0.cube0.pe0)")
  lu.assertNil(d.freed) -- nothing was freed: no other tensor can be given its memory
  d:free()              -- the launch failed: nothing uses it any more
  torch.close()
end

function TestLifetimes:test_the_host_cannot_free_a_tensor_a_running_kernel_uses()
  local torch = runtime(nil, true)
  local d = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch), name = "arg" })
  local h = torch.launch_async({ name = "slow", fn = function(tl, p)
    tl.cycles(1000)
    tl.store(p, tl.full({ 4, 4 }, 7, "f32"))
  end }, 1, d)
  -- from the main script, before the run
  lu.assertStrContains(error_of(d.free, d), "torch: free of 'arg' refused: launch 'slow' (launch-1, not complete) "
    .. "still uses it; wait for it first")
  -- from a host process while the kernel runs
  local proc = torch.sim:spawn(function()
    torch.sim:sleep(200)
    d:free()
  end)
  lu.assertStrContains(error_of(torch.wait, h), "free of 'arg' refused: launch 'slow'")
  lu.assertFalse(proc:alive())
  torch.synchronize()
  lu.assertTrue(h:done())
  -- once the launch is done the tensor holds the kernel's values and may go
  lu.assertEquals(d:cpu():tolist()[1][1], 7)
  d:free()
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

function TestLifetimes:test_memory_freed_after_the_kernel_is_not_reused_underneath_it()
  local torch = runtime(nil, true)
  local a = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch), name = "a" })
  local h = torch.launch_async({ name = "writer", fn = function(tl, p)
    tl.cycles(500)
    tl.store(p, tl.full({ 4, 4 }, 7, "f32"))
  end }, 1, a)
  torch.wait(h)
  a:free()
  local b = torch.full({ 4, 4 }, 3, { dtype = "f32", dp = one(torch), name = "b" }) -- may take a's memory
  lu.assertEquals(b:cpu():tolist()[1][1], 3)
  torch.cleanup()
  torch.close()
end

-- ---- 2. a tensor freed under an asynchronous operation; stale handles ----

function TestLifetimes:test_a_copy_in_flight_keeps_its_tensor()
  local torch = runtime()
  local d = torch.empty({ 64, 64 }, { dtype = "f16", dp = one(torch), name = "dst" })
  local h = d:copy_(torch.ones({ 64, 64 }, { dtype = "f16" }))
  lu.assertStrContains(error_of(d.free, d),
    "torch: free of 'dst' refused: copy_ into 'dst' (its writes not landed yet) still uses it")
  torch.wait(h)
  d:free()
  torch.close()
end

function TestLifetimes:test_a_tensor_an_integer_argument_points_into_is_in_use()
  -- collectives pass their output as an address (reduce_scatter, all_gather)
  local torch = runtime()
  local d = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch), name = "out" })
  torch.synchronize() -- its writes have landed
  local h = torch.launch_async({ name = "by_address", fn = function(tl, addr)
    tl.store(addr, tl.full({ 2 }, 1, "f32"))
  end }, 1, d.va_base + 16)
  lu.assertStrContains(error_of(d.free, d), "free of 'out' refused: launch 'by_address' (launch-1, not complete)")
  torch.wait(h)
  d:free()
  torch.close()
end

function TestLifetimes:test_cleanup_waits_for_what_still_runs()
  local torch = runtime()
  local d = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch) })
  torch.launch_async({ name = "k", fn = function(tl, p) tl.cycles(100) tl.store(p, tl.full({ 4, 4 }, 1, "f32")) end },
    1, d)
  torch.cleanup()
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

function TestLifetimes:test_a_handle_kept_past_its_kernel_is_dead()
  local torch = runtime(nil, true)
  local d = torch.full({ 4, 4 }, 2, { dtype = "f32", dp = one(torch), name = "x" })
  local kept, kept_tl, kept_c
  torch.launch({ name = "keeper", fn = function(tl, p)
    kept, kept_tl = tl.load(p, { 4, 4 }, "f32"), tl
    kept_c = tl.composite { op = "math", math_op = "exp", a = kept, out_ptr = p }
    tl.wait(kept_c)
  end }, 1, d)
  local ended = "is a handle of kernel 'keeper' on sip0.cube0.pe0, which has ended"
  -- read on the host after the kernel: its scratch is the PE's again
  lu.assertStrContains(error_of(function() return kept:tolist() end), "tolist: argument 1 (a tl.load result) " .. ended)
  lu.assertStrContains(error_of(function() return kept:item() end), ended)
  lu.assertStrContains(error_of(function() return kept[0] end), ended)
  -- the old tl table
  lu.assertStrContains(error_of(kept_tl.load, d.va_base, { 4, 4 }, "f32"),
    "tl: kernel 'keeper' on sip0.cube0.pe0 has ended")
  -- used in a later kernel on the same PE: not "another PE's kernel"
  local err = error_of(torch.launch, { name = "user", fn = function(tl, p) tl.store(p, tl.exp(kept)) end }, 1, d)
  lu.assertStrContains(err, "tl.exp: argument 1 (a tl.load result) " .. ended)
  lu.assertNil(err:find("another PE", 1, true))
  torch.close()
  torch = runtime(nil, true)
  d = torch.full({ 4, 4 }, 2, { dtype = "f32", dp = one(torch), name = "x" })
  lu.assertStrContains(error_of(torch.launch, { name = "waiter", fn = function(tl) tl.wait(kept_c) end }, 1),
    "tl.wait: the composite handle belongs to kernel 'keeper' on sip0.cube0.pe0, which has ended (this one is "
    .. "'waiter' on sip0.cube0.pe0)")
  torch.close()
end

function TestLifetimes:test_a_handle_of_another_running_instance_is_named()
  local torch = runtime(nil, true)
  local d = torch.full({ 2, 4 }, 2, { dtype = "f32", dp = torch.DPPolicy { pe = "row_wise", num_pes = 2 } })
  local shared
  local err = error_of(torch.launch, { name = "pair", fn = function(tl, p)
    if tl.program_id(0) == 0 then
      shared = tl.load(p, { 1, 4 }, "f32")
      tl.cycles(10000)
    else
      tl.cycles(1000)
      tl.exp(shared)
    end
  end }, 2, d)
  lu.assertStrContains(err, "tl.exp: argument 1 (a tl.load result) belongs to kernel 'pair' on sip0.cube0.pe0, "
    .. "another kernel instance (this one is 'pair' on sip0.cube0.pe1)")
  torch.close()
end

-- ---- 3. host memory operations checked over their whole range ----

function TestLifetimes:test_host_memory_operations_stay_inside_their_memory()
  local t = kb.topology.load("small_1cube_8pe")
  local P = t:params()
  local s = sim.new { topology = t }
  local slice = P.hbm_slice_bytes
  lu.assertStrContains(error_of(s.memory_write, s, { sip = 0, cube = 0, pe = 0, offset = slice - 8, nbytes = 64 }),
    "MemoryWrite: 64 bytes at PA")
  lu.assertStrContains(error_of(s.memory_write, s, { sip = 0, cube = 0, pe = 0, offset = slice - 8, nbytes = 64 }),
    "run 56 bytes past the end of the HBM slice of sip0.cube0.pe0")
  lu.assertStrContains(error_of(s.memory_read, s, { sip = 0, cube = 0, pe = 3, offset = slice - 1, nbytes = 2 }),
    "MemoryRead: 2 bytes")
  lu.assertStrContains(error_of(s.memory_write, s, { pa = kb.addr.cube_sram(0, 0, 32 * 2 ^ 20 - 8), nbytes = 64 }),
    "past the end of the SRAM of sip0.cube0")
  lu.assertStrContains(error_of(s.pe_dma, s, { sip = 0, cube = 0, pe = 0, dst = { sip = 0, cube = 0, pe = 1,
    offset = slice - 32 }, nbytes = 64 }), "PE DMA write: 64 bytes")
  -- the last bytes of a slice are fine
  local ev = s:memory_write { sip = 0, cube = 0, pe = 0, offset = slice - 64, nbytes = 64, data = ("x"):rep(64) }
  s:run()
  lu.assertEquals(ev:value().nbytes, 64)
  s:close()
end

-- ---- 4. MMU maps checked against the memory they map ----

function TestLifetimes:test_an_mmu_map_must_lie_in_the_memory_it_maps()
  local t = kb.topology.load("small_1cube_8pe")
  local P = t:params()
  local s = sim.new { topology = t }
  local tg = { { sip = 0, cube = 0, pe = 0 } }
  local pa = kb.addr.pe_hbm(0, 0, 0, 0, P.hbm_slice_bytes)
  lu.assertStrContains(error_of(s.mmu_map, s, { targets = tg, entries = { { va = 2 ^ 32, pa = pa, size = 2 ^ 50 } } }),
    "s:mmu_map{}: entries[1] (va 0x100000000): 1125899906842624 bytes at PA")
  lu.assertStrContains(error_of(s.mmu_map, s, { targets = tg, entries = { { va = 2 ^ 32, pa = pa, size = 4096 },
    { va = 2 ^ 33, pa = pa + P.hbm_slice_bytes - 8, size = 16 } } }),
    "entries[2] (va 0x200000000): 16 bytes at PA")
  lu.assertStrContains(error_of(s.mmu_map, s,
    { targets = tg, entries = { { va = 2 ^ 32, pa = 0x1000000, size = 16 } } }),
    "s:mmu_map{}: entries[1] (va 0x100000000): PA 0x1000000")
  -- nothing was installed by a refused map
  lu.assertEquals(require("kernbench.pe_c").mmu_regions(s, 0, 0, 0), 0)
  s:mmu_map { targets = tg, entries = { { va = 2 ^ 32, pa = pa, size = P.hbm_slice_bytes } } }
  s:run()
  s:close()
end

-- ---- 6. timing-only runs never return values they did not compute ----

local function write_kernel(tl, x, y)
  tl.store(y, tl.exp(tl.load(x, { 4, 4 }, "f32")))
end

function TestLifetimes:test_reading_what_a_kernel_wrote_in_a_timing_only_run_is_an_error()
  local torch = runtime()
  local x = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch), name = "x" })
  local y = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch), name = "y" })
  lu.assertEquals(y:cpu():tolist()[1][1], 0) -- host-written: readable
  torch.launch({ name = "expk", fn = write_kernel }, 1, x, y)
  lu.assertEquals(x:cpu():tolist()[1][1], 1) -- only read by the kernel: still the host's values
  local err = error_of(y.cpu, y)
  lu.assertStrContains(err, "torch: cpu of 'y': its values were written by launch 'expk' (launch-1) in a "
    .. "timing-only run, which computes no values; run with --data")
  lu.assertStrContains(error_of(y.numpy, y), "run with --data")
  -- torch.verify reads it (timed, as d:cpu() would) and compares nothing
  local t0 = torch.now_ns()
  lu.assertNil(torch.verify("y", y, torch.exp(torch.ones({ 4, 4 }))))
  lu.assertTrue(torch.now_ns() > t0)
  -- host values written over it are readable again
  torch.wait(y:copy_(torch.full({ 4, 4 }, 5)))
  lu.assertEquals(y:cpu():tolist()[1][1], 5)
  torch.close()
end

function TestLifetimes:test_data_mode_reads_what_kernels_computed()
  local torch = runtime(nil, true)
  local x = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch) })
  local y = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch) })
  torch.launch({ name = "expk", fn = write_kernel }, 1, x, y)
  lu.assertAlmostEquals(y:cpu():tolist()[1][1], math.exp(1), 1e-6)
  lu.assertTrue(torch.verify("y", y, torch.exp(torch.ones({ 4, 4 }))) < 1e-6)
  torch.close()
end

function TestLifetimes:test_a_composite_output_is_marked_too()
  local torch = runtime()
  local x = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch) })
  local y = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch), name = "y" })
  torch.launch({ name = "comp", fn = function(tl, a, b)
    tl.wait(tl.composite { op = "math", math_op = "exp", a = tl.load(a, { 4, 4 }, "f32"), out_ptr = b })
  end }, 1, x, y)
  lu.assertStrContains(error_of(y.cpu, y), "written by launch 'comp'")
  torch.close()
end

function TestLifetimes:test_an_all_reduce_in_a_timing_only_run_returns_no_values()
  local torch = kb.torch { topology = kb.topology.load("default") }
  local dist = torch.distributed
  dist.init_process_group { backend = "kernbench" }
  local errs = {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
    local t = torch.full({ 16, 64 }, rank + 1, { dtype = "f16", name = "t" .. rank, dp = dp })
    dist.all_reduce(t)
    errs[rank] = select(2, pcall(t.cpu, t))
  end, {}, dist.get_world_size())
  for rank = 0, dist.get_world_size() - 1 do
    lu.assertStrContains(tostring(errs[rank]), ("torch: cpu of 't%d': its values were written by launch "):format(rank))
    lu.assertStrContains(tostring(errs[rank]), "run with --data")
  end
  torch.close()
end

function TestLifetimes:test_a_read_waits_for_the_launches_still_writing_its_tensor()
  for _, data in ipairs { true, false } do
    local torch = runtime(nil, data)
    local x = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch) })
    local y = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch), name = "y" })
    local h = torch.launch_async({ name = "late", fn = function(tl, a, b)
      tl.cycles(5000)
      write_kernel(tl, a, b)
    end }, 1, x, y)
    if data then
      lu.assertAlmostEquals(y:cpu():tolist()[1][1], math.exp(1), 1e-6) -- the kernel's value, not the old 0
    else
      lu.assertStrContains(error_of(y.cpu, y), "written by launch 'late'")
    end
    lu.assertTrue(h:done())
    torch.close()
  end
end

function TestLifetimes:test_a_host_tensor_a_copy_still_reads_cannot_change()
  local torch = runtime(nil, true)
  local x = torch.ones({ 8, 8 }, { dtype = "f32" })
  local d = torch.empty({ 8, 8 }, { dtype = "f32", dp = one(torch), name = "d" })
  local h = d:copy_(x) -- the device write reads x when it is served
  local held = "held by"
  lu.assertStrContains(error_of(x.fill_, x, 0), "fill_: this host tensor (or the tensor it is a view of) is")
  lu.assertStrContains(error_of(x.zero_, x), "zero_: this host tensor")
  lu.assertStrContains(error_of(x.set, x, 0, 0, 5), "set: this host tensor")
  lu.assertStrContains(error_of(function() x[0] = 5 end), "index: this host tensor")
  lu.assertStrContains(error_of(function() x[1]:fill_(5) end), "fill_: this host tensor") -- a view of it
  lu.assertStrContains(error_of(x.copy_, x, torch.zeros({ 8, 8 })), "copy_: this host tensor")
  lu.assertEquals(x:sum(), 64) -- reading it is fine
  torch.wait(h)
  x:fill_(0) -- served: free to change, the device keeps the ones
  lu.assertEquals(d:cpu():sum(), 64)
  lu.assertNotNil(held)
  torch.close()
end

function TestLifetimes:test_a_launch_given_an_address_waits_for_that_tensors_writes()
  local torch = runtime(nil, true)
  local y = torch.zeros({ 1, 4 }, { dtype = "f32", dp = one(torch), name = "y" })
  torch.synchronize()
  local src = torch.full({ 512, 1024 }, 3, { dtype = "f32", dp = one(torch), name = "src" }) -- 2 MiB in flight
  local last = src.va_base + (512 * 1024 - 4) * 4 -- its last row's last 4 values, written last
  torch.launch({ name = "by_address", fn = function(tl, addr, out)
    tl.store(out, tl.load(addr, { 1, 4 }, "f32"))
  end }, 1, last, y)
  lu.assertEquals(y:cpu():tolist()[1], { 3, 3, 3, 3 })
  torch.close()
end

function TestLifetimes:test_a_copy_into_a_tensor_a_running_kernel_uses_lands_after_it()
  local torch = runtime(nil, true)
  local d = torch.full({ 4, 4 }, 1, { dtype = "f32", dp = one(torch), name = "d" })
  local y = torch.zeros({ 4, 4 }, { dtype = "f32", dp = one(torch), name = "y" })
  local h = torch.launch_async({ name = "reader", fn = function(tl, a, b)
    tl.cycles(20000)
    tl.store(b, tl.load(a, { 4, 4 }, "f32"))
  end }, 1, d, y)
  local c = d:copy_(torch.full({ 4, 4 }, 9)) -- queued behind the launch
  torch.wait(c)
  lu.assertTrue(h:done())
  lu.assertEquals(y:cpu():tolist()[1][1], 1) -- the kernel saw the old values
  lu.assertEquals(d:cpu():tolist()[1][1], 9)
  torch.close()
end
