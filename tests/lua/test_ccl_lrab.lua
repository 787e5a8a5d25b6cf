--- The LRAB hierarchical all-reduce (lua/kernbench/ccl/algorithms/
-- lrab_hierarchical_allreduce.lua) through kernbench.ccl.run: exact sums in
-- data mode on every SIP topology, centre root against corner root, chunks
-- larger than a slot, one slot per ring, one cube per SIP, the SIP grid's
-- errors and the wiring.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"
local run = require "kernbench.ccl.run"
local sfr = require "kernbench.ccl.sfr"

TestLrab = {}

-- An all-reduce of SIP s's rows, all s + 1 (f16, integer sums stay exact),
-- on topology `topo` (a name or a loaded topology); returns the result and
-- whether every row of every SIP holds the sum.
local function allreduce(topo, n_elem, opts)
  local t = type(topo) == "string" and kb.topology.load(topo) or topo
  local torch = torchmod.new { topology = t, data_mode = "data" }
  local P = torch.spec
  local tensors = {}
  local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
  for s = 0, P.sips - 1 do
    torch.ahbm.set_device(s)
    tensors[s + 1] = torch.to_device(torch.full({ P.cubes_per_sip, n_elem }, s + 1,
      { dtype = (opts or {}).dtype or "f16" }), dp)
  end
  torch.synchronize()
  torch.ahbm.set_device(nil)
  local r = run.allreduce(torch, "lrab_hierarchical_allreduce", tensors, opts)
  lu.assertNil(torch.ahbm.current_device(), "the run leaves the current device as it was")
  local want = 0
  for s = 0, P.sips - 1 do want = want + (s + 1) * P.cubes_per_sip end
  local exact = true
  for s = 1, P.sips do
    exact = exact and torch.equal(tensors[s]:cpu(), torch.full({ P.cubes_per_sip, n_elem }, want,
      { dtype = (opts or {}).dtype or "f16" }))
  end
  torch.close()
  return r, exact
end

function TestLrab:test_two_sips_ring_exact_with_centre_and_corner_root()
  for _, root in ipairs { -1, 15, 0, 5 } do
    local r, exact = allreduce("default", 64, { root = root >= 0 and root or nil })
    lu.assertTrue(exact, "root " .. root)
    lu.assertTrue(r.crit_ns > 0)
  end
end

function TestLrab:test_four_sips_on_a_ring()
  local _, exact = allreduce(kb.topology.load("default", { "system.sips.count=4" }), 200)
  lu.assertTrue(exact)
end

function TestLrab:test_centre_root_is_faster_than_the_corner_on_every_sip_topology()
  for _, topo in ipairs { "ring_1d_6sip", "torus_2d_6sip_2x3", "mesh_2d_no_wrap_6sip_2x3" } do
    local centre, ok1 = allreduce(topo, 64)
    local corner, ok2 = allreduce(topo, 64, { root = 15 })
    lu.assertTrue(ok1 and ok2, topo)
    lu.assertTrue(centre.crit_ns < corner.crit_ns,
      ("%s: centre %g ns, corner %g ns"):format(topo, centre.crit_ns, corner.crit_ns))
  end
end

function TestLrab:test_f32_and_bf16_rows()
  -- integer-valued data: exact in f32; bf16 holds these sums (at most 336) exactly too
  local _, f32 = allreduce("torus_2d_6sip_2x3", 1500, { dtype = "f32" }) -- 6000-byte rows: chunks of 1024 f32
  lu.assertTrue(f32)
  local _, bf16 = allreduce("default", 100, { dtype = "bf16" })
  lu.assertTrue(bf16)
end

function TestLrab:test_payloads_larger_than_a_slot_go_in_chunks()
  local _, exact = allreduce("default", 5000) -- 10 000 bytes, slots of 4096
  lu.assertTrue(exact)
  local _, small = allreduce("default", 100, { slot_size = 64 }) -- 200 bytes in 64-byte messages
  lu.assertTrue(small)
end

function TestLrab:test_one_slot_per_ring_does_not_deadlock()
  local _, exact = allreduce("torus_2d_6sip_2x3", 3000, { n_slots = 1, slot_size = 1024 })
  lu.assertTrue(exact)
end

function TestLrab:test_one_cube_per_sip_takes_the_fast_path()
  local t = kb.topology.load("small_1cube_1pe", { "system.sips.count=4" })
  local r, exact = allreduce(t, 32)
  lu.assertTrue(exact)
  lu.assertTrue(r.crit_ns > 0)
end

function TestLrab:test_sip_grid_errors_are_the_specs()
  lu.assertEquals({ sfr.sip_grid { sips = 6, sip_topology = "ring_1d" } }, { 0, 0 })
  lu.assertEquals({ sfr.sip_grid { sips = 6, sip_topology = "torus_2d", sip_grid_w = 2, sip_grid_h = 3 } }, { 2, 3 })
  lu.assertEquals({ sfr.sip_grid { sips = 4, sip_topology = "torus_2d", sip_grid_w = 0, sip_grid_h = 0 } }, { 2, 2 })
  lu.assertErrorMsgContains("sip layout 2x2 != sips.count (6)", sfr.sip_grid,
    { sips = 6, sip_topology = "torus_2d", sip_grid_w = 2, sip_grid_h = 2 })
  lu.assertErrorMsgContains("non-square sips.count requires explicit sips.w/h", sfr.sip_grid,
    { sips = 6, sip_topology = "mesh_2d_no_wrap", sip_grid_w = 0, sip_grid_h = 0 })
end

function TestLrab:test_the_wiring_is_pe0_of_every_cube()
  local P = kb.topology.load("torus_2d_6sip_2x3"):params()
  local w = sfr.intercube_multisip(P)
  lu.assertEquals(w.world, 6 * 16)
  lu.assertEquals(w.pes[17], { sip = 1, cube = 0, pe = 0 })
  -- cube 5 of SIP 0 (x 1, y 1 in the 4x4 mesh): four mesh neighbours; SIP 0 at (0, 0) of
  -- the 2x3 torus: E and W both SIP 1, N SIP 4 (wrapped), S SIP 2
  lu.assertEquals(w.neighbors(5), { E = 6, W = 4, N = 1, S = 9, global_E = 21, global_W = 21, global_N = 69,
                                    global_S = 37 })
  -- a corner cube has no mesh neighbour past the edge (no wrap inside a SIP)
  local corner = w.neighbors(0)
  lu.assertNil(corner.W)
  lu.assertNil(corner.N)
end

function TestLrab:test_a_bad_algorithm_or_tensor_is_a_clear_error()
  lu.assertErrorMsgContains("cannot load algorithm 'nope'", run.algorithm, "nope")
  lu.assertErrorMsgContains("an algorithm is named by its module", run.algorithm, "../x")
  local torch = torchmod.new { topology = kb.topology.load("default") }
  lu.assertErrorMsgContains("expected one device tensor per SIP (2)", run.allreduce, torch,
    "lrab_hierarchical_allreduce", {})
  torch.close()
end

function TestLrab:test_the_prediction_is_close_and_below_the_simulation()
  for _, c in ipairs { { "default", 8 }, { "torus_2d_6sip_2x3", 4096 }, { "mesh_2d_no_wrap_6sip_2x3", 2048 } } do
    local t = kb.topology.load(c[1])
    local r, exact = allreduce(t, c[2])
    lu.assertTrue(exact)
    local p = kb.ccl.predict { algorithm = "lrab_hierarchical_allreduce", topology = t, nbytes = 2 * c[2] }
    -- the model has no queueing: never above the simulation, and within 20% of it
    lu.assertTrue(p.predicted_ns <= r.crit_ns and p.predicted_ns >= 0.8 * r.crit_ns,
      ("%s %d: predicted %g, simulated %g"):format(c[1], c[2], p.predicted_ns, r.crit_ns))
  end
  lu.assertErrorMsgContains("no model for algorithm 'butterfly' yet", kb.ccl.predict,
    { algorithm = "butterfly", topology = kb.topology.load("default"), nbytes = 64 })
  lu.assertErrorMsgContains("nbytes must be an integer >= 2", kb.ccl.predict, { nbytes = 1 })
end

os.exit(lu.LuaUnit.run())
