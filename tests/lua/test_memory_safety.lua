--- Kernel memory safety: every kernel access (tl.load, tl.store, the
-- streamed operands and output of tl.composite) must stay inside the
-- allocation its start address lies in (the PE_MMU mapping: a tensor, or
-- one shard of it); leaving it is an error naming the kernel, the PE, the
-- simulated time, the tensor, its extent and the offending bytes, and
-- moves no byte. Other PEs' shards of the same tensor stay reachable.
local lu = require "luaunit"

TestMemorySafety = {}

local function runtime(topo, data)
  return kb.torch { topology = kb.topology.load(topo or "small_1cube_1pe"), data_mode = data and "data" or nil }
end

-- Two 4x4 f32 tensors, a then b, placed on one PE: b's bytes follow a's in
-- the HBM slice (the allocator is first-fit), so an access that runs past
-- a reaches b's values.
local function two_tensors(torch)
  local one = torch.DPPolicy {}
  local a = torch.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 }, { 13, 14, 15, 16 } },
                         { dp = one, name = "a" })
  local b = torch.full({ 4, 4 }, 99, { dp = one, name = "b" })
  lu.assertEquals(b.shards[1].hbm_offset, a.shards[1].hbm_offset + 64)
  return a, b
end

local function launch_error(torch, kernel, grid, ...)
  local ok, err = pcall(torch.launch, kernel, grid or 1, ...)
  lu.assertFalse(ok, "the launch should fail")
  return tostring(err)
end

local VA = 0x100000000 -- the first tensor's virtual address (the VA space's base)

function TestMemorySafety:test_a_load_past_its_tensor_is_an_error_naming_kernel_pe_time_tensor_and_bytes()
  for _, data in ipairs { false, true } do
    local torch = runtime("small_1cube_1pe", data)
    local a = two_tensors(torch)
    lu.assertEquals(a.va_base, VA)
    local err = launch_error(torch, { name = "over", fn = function(tl, p) tl.load(p, { 4, 8 }, "f32") end }, 1, a)
    lu.assertStrContains(err, "tl.load: bytes [0x100000000, 0x100000080) (128 bytes) leave their allocation on "
                              .. "sip0.cube0.pe0 (kernel 'over' at t=")
    lu.assertStrContains(err, "): tensor 'a' [4, 4] f32 is mapped at [0x100000000, 0x100000040) (64 bytes, held "
                              .. "by sip0.cube0.hbm_ctrl.pe0); bytes [0x100000040, 0x100000080) lie past its end")
    -- the time named is the run's failure time (the mmu stage, after the dispatch)
    local at = err:match("%(kernel 'over' at t=([%d.]+) ns%)")
    lu.assertEquals(at, err:match("failed at t=([%d.]+) ns:"))
    torch.close()
  end
end

function TestMemorySafety:test_a_store_past_its_tensor_is_refused_and_the_next_tensor_keeps_its_values()
  local torch = runtime("small_1cube_1pe", true)
  local a, b = two_tensors(torch)
  local err = launch_error(torch, { name = "spill", fn = function(tl, p)
    tl.store(p, tl.full({ 4, 8 }, -1, "f32"))
  end }, 1, a)
  lu.assertStrContains(err, "tl.store: bytes [0x100000000, 0x100000080) (128 bytes) leave their allocation")
  lu.assertStrContains(err, "tensor 'a' [4, 4] f32 is mapped at [0x100000000, 0x100000040)")
  lu.assertTrue(torch.equal(b:cpu(), torch.full({ 4, 4 }, 99)))
  lu.assertEquals(a:cpu():get(0, 0), 1) -- nothing was written at all
  torch.close()
end

function TestMemorySafety:test_an_access_from_inside_the_tensor_that_runs_past_its_end_is_an_error()
  local torch = runtime()
  local a = two_tensors(torch)
  -- rows 2 and 3 are inside a; a 3-row load from row 2 is not
  torch.launch(function(tl, p) tl.load(p + 32, { 2, 4 }, "f32") end, 1, a)
  local err = launch_error(torch, { name = "tail", fn = function(tl, p) tl.load(p + 32, { 3, 4 }, "f32") end }, 1, a)
  lu.assertStrContains(err, "tl.load: bytes [0x100000020, 0x100000050) (48 bytes) leave their allocation")
  lu.assertStrContains(err, "bytes [0x100000040, 0x100000050) lie past its end")
  torch.close()
end

-- The tensor's VA range is whole pages; the bytes after it in its last page
-- belong to no allocation.
function TestMemorySafety:test_an_address_past_the_tensor_in_its_page_is_outside_any_allocation()
  local torch = runtime()
  local a = two_tensors(torch)
  local err = launch_error(torch, { name = "gap", fn = function(tl, p) tl.load(p + 64, { 4 }, "f32") end }, 1, a)
  lu.assertStrContains(err, "tl.load: virtual address 0x100000040 is not mapped on sip0.cube0.pe0 (kernel 'gap' at t=")
  torch.close()
end

function TestMemorySafety:test_composite_operands_and_output_are_checked_when_submitted()
  local function composite_error(name, kernel)
    local torch = runtime("small_1cube_1pe", true)
    local a, b = two_tensors(torch)
    local err = launch_error(torch, { name = name, fn = kernel }, 1, a, b)
    lu.assertTrue(torch.equal(b:cpu(), torch.full({ 4, 4 }, 99)))
    torch.close()
    return err
  end
  -- a [2, 12] view of a: row 0 is a's first 48 bytes, row 1 leaves a
  local err = composite_error("wide_a", function(tl, pa, pb)
    tl.composite { op = "math", math_op = "exp", a = tl.ref(pa, { 2, 12 }, "f32"), out_ptr = pb }
  end)
  lu.assertStrContains(err, "tl.composite: bytes [0x100000030, 0x100000060) (48 bytes) leave their allocation "
                            .. "on sip0.cube0.pe0 (kernel 'wide_a' at t=")
  lu.assertStrContains(err, "tensor 'a' [4, 4] f32 is mapped at [0x100000000, 0x100000040)")
  -- a [8, 4] view: rows 4 to 7 start past a, in no allocation
  err = composite_error("long_a", function(tl, pa, pb)
    tl.composite { op = "math", math_op = "exp", a = tl.ref(pa, { 8, 4 }, "f32"), out_ptr = pb }
  end)
  lu.assertStrContains(err, "tl.composite: virtual address 0x100000040 is not mapped on sip0.cube0.pe0 "
                            .. "(kernel 'long_a' at t=")
  -- the output: C [4, 4] from 8 bytes into b; its last row runs 8 bytes past b
  err = composite_error("big_out", function(tl, pa, pb)
    local x = tl.load(pa, { 4, 4 }, "f32")
    tl.composite { op = "gemm", a = x, b = tl.ref(pa, { 4, 4 }, "f32"), out_ptr = pb + 8 }
  end)
  lu.assertStrContains(err, "tl.composite: bytes [0x100200038, 0x100200048) (16 bytes) leave their allocation")
  lu.assertStrContains(err, "tensor 'b' [4, 4] f32 is mapped at [0x100200000, 0x100200040) (64 bytes, held by "
                            .. "sip0.cube0.hbm_ctrl.pe0); bytes [0x100200040, 0x100200048) lie past its end")
end

-- A tensor split over two PEs is two mappings on each: an access inside
-- either shard is legal from either PE; one that crosses from a shard into
-- the next would read past the first shard's memory and is an error.
function TestMemorySafety:test_other_pes_shards_are_reachable_but_an_access_may_not_cross_a_shard()
  local torch = runtime("small_1cube_8pe", true)
  local x = torch.tensor({ { 1, 2, 3, 4 }, { 5, 6, 7, 8 }, { 9, 10, 11, 12 }, { 13, 14, 15, 16 } })
  local d = torch.to_device(x, torch.DPPolicy { pe = "row_wise", num_pes = 2 }, { name = "split" })
  lu.assertEquals(#d.shards, 2)
  local got = {}
  torch.launch(function(tl, p)
    local me = tl.program_id(0)
    local other = 1 - me
    got[me] = tl.load(p + other * 32, { 2, 4 }, "f32"):tolist() -- the other PE's shard
  end, 2, d)
  lu.assertEquals(got[0], { { 9, 10, 11, 12 }, { 13, 14, 15, 16 } })
  lu.assertEquals(got[1], { { 1, 2, 3, 4 }, { 5, 6, 7, 8 } })
  -- a composite may stream a matrix over both shards: each row stays in one
  local out = torch.empty({ 4, 4 }, { dp = torch.DPPolicy { num_pes = 1 }, name = "out" })
  torch.launch(function(tl, p, o)
    tl.wait(tl.composite { op = "math", math_op = "neg", a = tl.ref(p, { 4, 4 }, "f32"), out_ptr = o })
  end, 1, d, out)
  lu.assertTrue(torch.equal(out:cpu(), -x))
  -- (a failed launch ends what its runtime can run: the error case comes last)
  local err = launch_error(torch, { name = "cross", fn = function(tl, p) tl.load(p + 16, { 2, 4 }, "f32") end }, 1, d)
  lu.assertStrContains(err, "tl.load: bytes [0x100000010, 0x100000030) (32 bytes) leave their allocation on "
                            .. "sip0.cube0.pe0 (kernel 'cross' at t=")
  lu.assertStrContains(err, "tensor 'split' [4, 4] f32 is mapped at [0x100000000, 0x100000020) (32 bytes, held by "
                            .. "sip0.cube0.hbm_ctrl.pe0)")
  torch.close()
end

function TestMemorySafety:test_a_mapping_without_a_label_is_named_as_such()
  local torch = runtime()
  local a = two_tensors(torch)
  local s = torch.sim
  torch.wait(s:mmu_map { targets = { { sip = 0, cube = 0, pe = 0 } },
                         entries = { { va = 0x300000000, pa = a.shards[1].pa, size = 16 } } })
  local err = launch_error(torch, { name = "raw", fn = function(tl) tl.load(0x300000000, { 8 }, "f32") end })
  lu.assertStrContains(err, "the mapping (no tensor named) is mapped at [0x300000000, 0x300000010)")
  lu.assertErrorMsgContains("s:mmu_map{}: field 'label' must be a string", s.mmu_map, s,
    { targets = { { sip = 0, cube = 0, pe = 0 } }, entries = { { va = 0, pa = 0, size = 16 } }, label = 5 })
  torch.close()
end
