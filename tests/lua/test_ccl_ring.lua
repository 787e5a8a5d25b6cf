--- The ring and tree all-reduces (lua/kernbench/ccl/algorithms/ring_allreduce.lua,
-- tree_allreduce.lua):
-- exact in data mode with rows shorter than the ring, segments larger than
-- a slot, every op, through torch.distributed too; the wiring is a snake.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"
local run = require "kernbench.ccl.run"
local ring = require "kernbench.ccl.algorithms.ring_allreduce"

TestRing = {}

-- Small integers so that every partial sum is exact in f16.
local function val(s, c, j) return (c + j + s) % 4 end

local function check(topo, n, opts, algo)
  local torch = torchmod.new { topology = kb.topology.load(topo), data_mode = "data" }
  local P = torch.spec
  local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
  local ts = {}
  for s = 0, P.sips - 1 do
    local host = torch.zeros({ P.cubes_per_sip, n }, { dtype = (opts or {}).dtype or "f16" })
    for c = 0, P.cubes_per_sip - 1 do
      for j = 0, n - 1 do host:set(c, j, val(s, c, j)) end
    end
    torch.ahbm.set_device(s)
    ts[s + 1] = torch.to_device(host, dp)
  end
  torch.ahbm.set_device(nil)
  torch.synchronize()
  local r = run.allreduce(torch, algo or "ring_allreduce", ts, opts)
  local op = (opts or {}).op or "sum"
  for s = 0, P.sips - 1 do
    local y = ts[s + 1]:cpu():float()
    for j = 0, n - 1 do
      local want = op == "min" and math.huge or (op == "max" and -math.huge or 0)
      for s2 = 0, P.sips - 1 do
        for c = 0, P.cubes_per_sip - 1 do
          local v = val(s2, c, j)
          want = op == "sum" and want + v or (op == "max" and math.max(want, v) or math.min(want, v))
        end
      end
      for c = 0, P.cubes_per_sip - 1 do
        lu.assertEquals(y:get(c, j), want, ("%s n=%d %s: sip %d row %d element %d"):format(topo, n, op, s, c, j))
      end
    end
  end
  torch.close()
  return r
end

function TestRing:test_exact_with_short_rows_long_rows_and_each_op()
  check("default", 10)      -- fewer elements than the 32 ranks: empty segments
  check("default", 300, { slot_size = 64 }) -- segments of several pieces
  check("default", 64, { op = "max" })
  check("default", 64, { op = "min" })
  check("torus_2d_6sip_2x3", 200)
  check("default", 100, { dtype = "f32" })
  check("default", 100, { dtype = "bf16" })
end

function TestRing:test_the_ring_snakes_through_the_cube_mesh()
  local P = kb.topology.load("default"):params()
  local w = ring.wiring(P)
  lu.assertEquals(w.world, 32)
  lu.assertEquals(w.pes[4], { sip = 0, cube = 3, pe = 0 })
  lu.assertEquals(w.pes[5], { sip = 0, cube = 7, pe = 0 }) -- the second row backwards
  lu.assertEquals(w.pes[17], { sip = 1, cube = 0, pe = 0 })
end

function TestRing:test_through_torch_distributed()
  local torch = torchmod.new { topology = kb.topology.load("default"), data_mode = "data" }
  local dist = torch.distributed
  dist.init_process_group { backend = "kernbench", algorithm = "ring_allreduce" }
  local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
  local got = {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    local t = torch.full({ 16, 40 }, rank + 1, { dtype = "f16", dp = dp })
    dist.all_reduce(t)
    got[rank] = t:cpu()
  end, {}, 2)
  for r = 0, 1 do lu.assertTrue(torch.equal(got[r], torch.full({ 16, 40 }, 48, { dtype = "f16" }))) end
  -- a tensor on one cube cannot ride a ring through every cube
  lu.assertErrorMsgContains("the ring runs through every cube", ring.kernel_args, 2, 8,
    { cubes = 1, cubes_per_sip = 16 })
  torch.close()
end

function TestRing:test_the_tree_all_reduce_is_exact_too()
  check("default", 10, nil, "tree_allreduce")
  check("default", 300, { slot_size = 64 }, "tree_allreduce")
  check("default", 64, { op = "max", dtype = "f32" }, "tree_allreduce")
  check("torus_2d_6sip_2x3", 200, { n_slots = 1 }, "tree_allreduce")
end

function TestRing:test_rows_on_any_set_of_pes_the_pes_of_a_cube_or_of_a_sip()
  local torch = torchmod.new { topology = kb.topology.load("default"), data_mode = "data" }
  for _, case in ipairs { { { pe = "row_wise", num_cubes = 1 }, 8, "sum" }, { { cube = "row_wise", pe = "row_wise" }, 128, "max" } } do
    local R = case[2]
    local host = torch.zeros({ R, 100 }, { dtype = "f32" })
    for r = 0, R - 1 do
      for j = 0, 99 do host:set(r, j, r + j % 3) end
    end
    local d = torch.to_device(host, torch.DPPolicy(case[1]))
    local res = run.allreduce_rows(torch, d, { op = case[3] })
    lu.assertTrue(res.crit_ns > 0)
    local y = d:cpu()
    for row = 0, R - 1 do
      for j = 0, 99 do
        local want = case[3] == "sum" and R * (R - 1) / 2 + R * (j % 3) or R - 1 + j % 3
        lu.assertEquals(y:get(row, j), want, ("%d rows, row %d, element %d"):format(R, row, j))
      end
    end
  end
  local one = torch.to_device(torch.zeros({ 4, 8 }, { dtype = "f32" }), torch.DPPolicy {})
  lu.assertErrorMsgContains("each shard must hold one row", run.allreduce_rows, torch, one)
  torch.close()
end

os.exit(lu.LuaUnit.run())
