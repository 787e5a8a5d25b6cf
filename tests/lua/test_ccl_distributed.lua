--- torch.distributed and torch.multiprocessing.spawn (lua/kernbench/ccl/
-- distributed.lua, spawn.lua): the process group's errors, all-reduce by
-- every rank inside spawn (sum, max, min) exact in data mode, a timed
-- barrier, per-rank devices, errors of ranks collected, determinism.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestDistributed = {}

local function runtime(topo, data)
  local t = type(topo) == "string" and kb.topology.load(topo) or topo
  return torchmod.new { topology = t, data_mode = data and "data" or nil }
end

local function rows_dp(torch) return torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 } end

function TestDistributed:test_calls_before_init_and_bad_inits_are_errors()
  local torch = runtime("default")
  local dist = torch.distributed
  lu.assertFalse(dist.is_initialized())
  for _, f in ipairs { "get_rank", "get_world_size", "get_backend", "barrier" } do
    lu.assertErrorMsgContains("Default process group has not been initialized", dist[f])
  end
  lu.assertErrorMsgContains("unsupported backend 'nccl'", dist.init_process_group, { backend = "nccl" })
  lu.assertErrorMsgContains("world_size 4: a rank is a SIP and the topology has 2", dist.init_process_group,
    { backend = "kernbench", world_size = 4 })
  dist.init_process_group("ahbm") -- the original's backend name
  lu.assertTrue(dist.is_initialized())
  lu.assertEquals(dist.get_backend(), "ahbm")
  lu.assertEquals(dist.get_world_size(), 2)
  lu.assertEquals(dist.get_rank(), 0)
  lu.assertErrorMsgContains("twice", dist.init_process_group, { backend = "kernbench" })
  lu.assertErrorMsgContains("torch.distributed.scatter: not implemented yet", dist.scatter)
  torch.close()
end

-- Every rank all-reduces its [16, n] tensor filled with value(rank); returns
-- each rank's result (a host tensor) and the simulated time.
local function all_reduce(topo, n, value, op)
  local torch = runtime(topo, true)
  local dist = torch.distributed
  dist.init_process_group { backend = "kernbench" }
  local got = {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    lu.assertEquals(torch.ahbm.current_device(), rank)
    lu.assertEquals(dist.get_rank(), rank)
    local t = torch.full({ 16, n }, value(rank), { dtype = "f16", dp = rows_dp(torch) })
    dist.all_reduce(t, op)
    got[rank] = t:cpu()
  end, {}, dist.get_world_size())
  local now = torch.now_ns()
  torch.close()
  return got, now
end

function TestDistributed:test_all_reduce_inside_spawn_is_exact_for_each_op()
  local cases = { { "sum", function(r) return r + 1 end, function(w) return 16 * w * (w + 1) / 2 end },
                  { "max", function(r) return r * 3 end, function(w) return 3 * (w - 1) end },
                  { "min", function(r) return 5 - r end, function(w) return 5 - (w - 1) end } }
  for _, topo in ipairs { "default", "torus_2d_6sip_2x3" } do
    for _, c in ipairs(cases) do
      local got = all_reduce(topo, 64, c[2], c[1])
      local w = #got + 1
      for r = 0, w - 1 do
        local want = torchmod.new { topology = kb.topology.load("small_1cube_1pe") }
        lu.assertTrue(want.equal(got[r], want.full({ 16, 64 }, c[3](w), { dtype = "f16" })),
          ("%s %s rank %d"):format(topo, c[1], r))
        want.close()
      end
    end
  end
end

function TestDistributed:test_broadcast_and_reduce_on_every_sip_topology()
  for _, topo in ipairs { "default", "torus_2d_6sip_2x3", "mesh_2d_no_wrap_6sip_2x3", "ring_1d_6sip" } do
    local torch = runtime(topo, true)
    local dist = torch.distributed
    dist.init_process_group {}
    local n = dist.get_world_size()
    local bc, red = {}, {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local t = torch.full({ 16, 300 }, rank + 1, { dtype = "f32", dp = rows_dp(torch) })
      dist.broadcast(t, 1)
      bc[rank] = t:cpu()
      local u = torch.full({ 16, 300 }, rank + 1, { dtype = "f32", dp = rows_dp(torch) })
      dist.reduce(u, n - 1, "max")
      red[rank] = u:cpu()
    end, {}, n)
    for r = 0, n - 1 do
      lu.assertTrue(torch.equal(bc[r], torch.full({ 16, 300 }, 2, { dtype = "f32" })), topo .. " broadcast " .. r)
      local want = r == n - 1 and n or r + 1 -- dst holds the max, the others keep theirs
      lu.assertTrue(torch.equal(red[r], torch.full({ 16, 300 }, want, { dtype = "f32" })), topo .. " reduce " .. r)
    end
    torch.close()
  end
end

function TestDistributed:test_all_gather_and_reduce_scatter()
  for _, topo in ipairs { "default", "ring_1d_6sip" } do
    local torch = runtime(topo, true)
    local dist = torch.distributed
    dist.init_process_group {}
    local W = dist.get_world_size()
    local gathered, scattered = {}, {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local t = torch.full({ 16, 40 }, rank + 1, { dtype = "f32", dp = rows_dp(torch) })
      local list, ins = {}, {}
      for i = 1, W do
        list[i] = torch.zeros({ 16, 40 }, { dtype = "f32", dp = rows_dp(torch) })
        ins[i] = torch.full({ 16, 40 }, 10 * (rank + 1) + i, { dtype = "f32", dp = rows_dp(torch) })
      end
      dist.all_gather(list, t)
      local out = torch.zeros({ 16, 40 }, { dtype = "f32", dp = rows_dp(torch) })
      dist.reduce_scatter(out, ins)
      gathered[rank], scattered[rank] = {}, out:cpu()
      for i = 1, W do gathered[rank][i] = list[i]:cpu() end
      lu.assertErrorMsgContains("tensor_list must be a list of " .. W .. " tensors", dist.all_gather, { t }, t)
    end, {}, W)
    for r = 0, W - 1 do
      for i = 1, W do
        lu.assertTrue(torch.equal(gathered[r][i], torch.full({ 16, 40 }, i, { dtype = "f32" })), topo .. " gather")
      end
      -- sum over ranks k and 16 cubes of 10 (k + 1) + (r + 1)
      local want = 16 * (10 * W * (W + 1) / 2 + W * (r + 1))
      lu.assertTrue(torch.equal(scattered[r], torch.full({ 16, 40 }, want, { dtype = "f32" })), topo .. " scatter")
    end
    torch.close()
  end
end

function TestDistributed:test_broadcast_checks_its_rank_and_wiring()
  local torch = runtime("default")
  torch.distributed.init_process_group { algorithm = "ring_allreduce" }
  local t = torch.full({ 16, 8 }, 1, { dtype = "f16", dp = rows_dp(torch) })
  lu.assertErrorMsgContains("runs on the LRAB wiring", torch.distributed.broadcast, t, 0)
  torch.close()
  torch = runtime("default")
  torch.distributed.init_process_group {}
  t = torch.full({ 16, 8 }, 1, { dtype = "f16", dp = rows_dp(torch) })
  lu.assertErrorMsgContains("src must be a rank 0 .. 1, got 5", torch.distributed.broadcast, t, 5)
  lu.assertErrorMsgContains("called outside torch.multiprocessing.spawn", torch.distributed.reduce, t, 0)
  torch.close()
end

function TestDistributed:test_a_tensor_on_one_cube_per_sip_takes_the_fast_path()
  local torch = runtime("torus_2d_6sip_2x3", true)
  torch.distributed.init_process_group {}
  local got = {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    local t = torch.full({ 1, 64 }, rank + 1, { dtype = "f32",
      dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1, num_cubes = 1 } })
    torch.distributed.all_reduce(t)
    got[rank] = t:cpu()
  end, {}, 6)
  for r = 0, 5 do lu.assertTrue(torch.equal(got[r], torch.full({ 1, 64 }, 21, { dtype = "f32" }))) end
  torch.close()
end

function TestDistributed:test_the_same_program_gives_the_same_time()
  local _, t1 = all_reduce("default", 3000, function(r) return r end)
  local _, t2 = all_reduce("default", 3000, function(r) return r end)
  lu.assertEquals(t1, t2)
end

function TestDistributed:test_barrier_takes_simulated_time()
  local torch = runtime("default")
  local dist = torch.distributed
  dist.init_process_group {}
  local before, after = {}, {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    before[rank] = torch.now_ns()
    dist.barrier()
    after[rank] = torch.now_ns()
  end, {}, 2)
  lu.assertTrue(after[0] > before[0] and after[1] > before[1])
  torch.close()
end

function TestDistributed:test_all_reduce_outside_spawn_with_several_ranks_is_refused()
  local torch = runtime("default")
  torch.distributed.init_process_group {}
  local t = torch.full({ 16, 8 }, 1, { dtype = "f16", dp = rows_dp(torch) })
  lu.assertErrorMsgContains("called outside torch.multiprocessing.spawn with 2 ranks", torch.distributed.all_reduce, t)
  lu.assertErrorMsgContains("op must be", torch.distributed.all_reduce, t, "avg")
  torch.close()
end

function TestDistributed:test_one_sip_all_reduces_in_the_main_script()
  local torch = runtime("small_1cube_8pe", true)
  torch.distributed.init_process_group {}
  local t = torch.full({ 1, 32 }, 7, { dtype = "f16", dp = rows_dp(torch) })
  torch.distributed.all_reduce(t)
  lu.assertTrue(torch.equal(t:cpu(), torch.full({ 1, 32 }, 7, { dtype = "f16" })))
  torch.close()
end

function TestDistributed:test_errors_of_ranks_are_collected_with_their_tracebacks()
  local torch = runtime("ring_1d_6sip")
  torch.distributed.init_process_group {}
  local ok, err = pcall(torch.multiprocessing.spawn, function(rank)
    torch.ahbm.set_device(rank)
    if rank == 1 or rank == 4 then error("rank " .. rank .. " gives up") end
    torch.synchronize()
  end, {}, 6)
  lu.assertFalse(ok)
  local msg = tostring(err)
  lu.assertStrContains(msg, "spawn failed on ranks [1, 4]")
  lu.assertStrContains(msg, "rank 1 raised")
  lu.assertStrContains(msg, "rank 4 gives up")
  lu.assertStrContains(msg, "stack traceback")
  lu.assertEquals(err.ranks, { 1, 4 })
  torch.close()
end

function TestDistributed:test_spawn_arguments_are_checked()
  local torch = runtime("default")
  local mp = torch.multiprocessing
  lu.assertErrorMsgContains("nprocs must be 1 .. 2", mp.spawn, function() end, {}, 3)
  lu.assertErrorMsgContains("join = false is not modelled", mp.spawn, function() end, {}, 2, false)
  lu.assertErrorMsgContains("fn must be a function", mp.spawn, 42, {}, 2)
  local seen = {}
  mp.spawn(function(rank, a, b) seen[rank] = a + b end, { 2, 3 }, 2)
  lu.assertEquals(seen, { [0] = 5, [1] = 5 })
  torch.close()
end

function TestDistributed:test_a_rank_waiting_on_a_rank_that_never_joins_is_reported()
  local torch = runtime("default")
  torch.distributed.init_process_group {}
  local ok, err = pcall(torch.multiprocessing.spawn, function(rank)
    torch.ahbm.set_device(rank)
    if rank == 0 then
      torch.distributed.all_reduce(torch.full({ 16, 8 }, 1, { dtype = "f16", dp = rows_dp(torch) }))
    end
  end, {}, 2)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "no rank can go on")
  lu.assertStrContains(tostring(err), "rank 0 waits for")
  torch.close()
end

-- init_process_group under a ccl.yaml given as --ccl would (kb.ccl_path).
local function with_ccl(text, fn)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  local saved = kb.ccl_path
  kb.ccl_path = path
  local ok, err = pcall(fn, path)
  kb.ccl_path = saved
  os.remove(path)
  if not ok then error(err, 0) end
end

function TestDistributed:test_ccl_yaml_chooses_the_algorithm_and_the_rings()
  with_ccl([[
defaults:
  algorithm: ring_allreduce
  n_slots: 2
algorithms:
  ring_allreduce:
    module: kernbench.ccl.algorithms.ring_allreduce
    topology: none
    buffer_kind: sram
  lrab_hierarchical_allreduce:
    module: kernbench.ccl.algorithms.lrab_hierarchical_allreduce
    topology: none
    root: corner
]], function(path)
    local torch = runtime("default", true)
    torch.distributed.init_process_group {}
    local c = torch.distributed.get_config()
    lu.assertEquals({ c.algorithm, c.config, c.buffer_kind, c.n_slots, c.slot_size },
      { "ring_allreduce", path, "sram", 2, 4096 })
    local got = {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local t = torch.full({ 16, 24 }, rank + 1, { dtype = "f16", dp = rows_dp(torch) })
      torch.distributed.all_reduce(t)
      got[rank] = t:cpu()
    end, {}, 2)
    lu.assertTrue(torch.equal(got[1], torch.full({ 16, 24 }, 48, { dtype = "f16" })))
    torch.close()
    -- the call's own options win; the entry's root applies
    torch = runtime("default")
    torch.distributed.init_process_group { algorithm = "lrab_hierarchical_allreduce", n_slots = 3 }
    c = torch.distributed.get_config()
    lu.assertEquals({ c.algorithm, c.n_slots, c.buffer_kind, c.root }, { "lrab_hierarchical_allreduce", 3, "tcm", 15 })
    torch.close()
  end)
end

function TestDistributed:test_a_new_algorithm_is_one_lua_file_and_one_ccl_yaml_entry()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. dir))
  local f = assert(io.open(dir .. "/my_allreduce.lua", "w"))
  -- a user's algorithm: here LRAB's kernel with a root of its own choosing (cube 0)
  f:write([[
local lrab = require "kernbench.ccl.algorithms.lrab_hierarchical_allreduce"
return {
  TOPO_NAME_TO_KIND = lrab.TOPO_NAME_TO_KIND,
  kernel_args = function(world, n, o) o.root = 0; return lrab.kernel_args(world, n, o) end,
  kernel = lrab.kernel,
}
]])
  f:close()
  local saved = package.path
  package.path = dir .. "/?.lua;" .. package.path
  local ok, err = pcall(with_ccl, [[
defaults:
  algorithm: mine
algorithms:
  mine:
    module: my_allreduce
]], function()
    local torch = runtime("default", true)
    torch.distributed.init_process_group {}
    lu.assertEquals(torch.distributed.get_config().algorithm, "mine")
    local got = {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local t = torch.full({ 16, 32 }, rank + 1, { dtype = "f16", dp = rows_dp(torch) })
      torch.distributed.all_reduce(t)
      got[rank] = t:cpu()
    end, {}, 2)
    lu.assertTrue(torch.equal(got[0], torch.full({ 16, 32 }, 48, { dtype = "f16" })))
    torch.close()
  end)
  package.path = saved
  package.loaded.my_allreduce = nil
  os.execute("rm -rf " .. dir)
  if not ok then error(err, 0) end
end

function TestDistributed:test_a_ccl_yaml_world_size_other_than_the_sips_is_refused()
  with_ccl([[
defaults:
  algorithm: lrab_hierarchical_allreduce
  world_size: 256
algorithms:
  lrab_hierarchical_allreduce:
    module: kernbench.ccl.algorithms.lrab_hierarchical_allreduce
]], function()
    local torch = runtime("default")
    lu.assertErrorMsgContains("world_size 256: a rank is a SIP and the topology has 2",
      torch.distributed.init_process_group, {})
    torch.close()
  end)
end

os.exit(lu.LuaUnit.run())
