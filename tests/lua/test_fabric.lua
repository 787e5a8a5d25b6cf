--- Fabric operations from Lua: memory reads and writes, PE DMA, transfers,
-- per-hop timestamps, errors, and determinism of whole traffic mixes.
local lu = require "luaunit"

TestFabric = {}

local function mixed_traffic(topo)
  -- Host writes and reads, PE DMA in both directions and to the SRAM, all
  -- overlapping; returns every result flattened into one string.
  local s = sim.new{ topology = topo }
  local p = topo:params()
  local evs = {}
  for c = 0, p.cubes_per_sip - 1 do
    evs[#evs + 1] = s:memory_write{ sip = 0, cube = c, pe = c % p.pes_per_cube, offset = 256 * c, nbytes = 8192 + c }
    evs[#evs + 1] = s:memory_read{ sip = 0, cube = c, pe = 0, offset = 0, nbytes = 4096, hops = true }
  end
  for pe = 0, p.pes_per_cube - 1 do
    evs[#evs + 1] = s:pe_dma{ sip = 0, cube = 0, pe = pe, dst = { sip = 0, cube = p.cubes_per_sip - 1, pe = pe },
                              nbytes = 16384, hops = true }
    evs[#evs + 1] = s:pe_dma{ sip = 0, cube = 0, pe = pe, write = false, dst = { sip = 0, cube = 0, pe = 0 },
                              nbytes = 2048 }
    evs[#evs + 1] = s:pe_dma{ sip = 0, cube = 0, pe = pe, dst_sram = { sip = 0, cube = 0, offset = 0 },
                              nbytes = 1024 }
  end
  s:run()
  local out = {}
  for i, e in ipairs(evs) do
    local r = e:value()
    out[#out + 1] = string.format("%d %s %.3f %.3f %d", i, r.kind, r.start_ns, r.end_ns, #r.path)
    for _, h in ipairs(r.hops or {}) do
      out[#out + 1] = string.format("  %s %.3f %.3f", h.node, h.first_ns, h.last_ns)
    end
  end
  return table.concat(out, "\n"), s:stats().events
end

function TestFabric:test_same_traffic_gives_identical_results_and_event_counts()
  local a, ea = mixed_traffic(kb.topology.load("small_2x2"))
  local b, eb = mixed_traffic(kb.topology.load("small_2x2"))
  lu.assertEquals(a, b)
  lu.assertEquals(ea, eb)
  lu.assertTrue(#a > 1000)
end

function TestFabric:test_two_simulations_share_one_topology()
  local t = kb.topology.load("small_1cube_8pe")
  local a = mixed_traffic(t)
  local b = mixed_traffic(t)
  lu.assertEquals(a, b)
end

function TestFabric:test_write_latency_and_hops_are_reported()
  local t = kb.topology.load("small_1cube_1pe")
  local s = sim.new{ topology = t }
  local ev = s:memory_write{ sip = 0, cube = 0, pe = 0, offset = 0, nbytes = 32768, hops = true }
  lu.assertFalse(ev:triggered())
  s:run()
  local r = ev:value()
  lu.assertEquals(r.kind, "MemoryWrite")
  lu.assertEquals(r.nbytes, 32768)
  lu.assertEquals(r.path[1], "sip0.io0.pcie_ep")
  lu.assertEquals(r.path[#r.path], "sip0.cube0.hbm_ctrl.pe0")
  lu.assertEquals(#r.hops, #r.path)
  -- First-flit times never decrease along the path.
  for i = 2, #r.hops do lu.assertTrue(r.hops[i].first_ns >= r.hops[i - 1].first_ns) end
  -- 32 KiB through a 128 GB/s connection takes at least 256 ns.
  lu.assertTrue(r.latency_ns >= 256)
  lu.assertAlmostEquals(r.latency_ns, r.end_ns - r.start_ns, 1e-9)
end

function TestFabric:test_operations_can_be_awaited_inside_processes()
  local t = kb.topology.load("small_1cube_8pe")
  local s = sim.new{ topology = t }
  local seen = {}
  for pe = 0, 3 do
    s:spawn(function()
      local r = s:pe_dma{ sip = 0, cube = 0, pe = pe, dst = { sip = 0, cube = 0, pe = pe }, nbytes = 4096 }:wait()
      seen[#seen + 1] = r.latency_ns
      -- A second transfer after the first completed starts at that time.
      local r2 = s:pe_dma{ sip = 0, cube = 0, pe = pe, dst = { sip = 0, cube = 0, pe = pe }, nbytes = 4096 }:wait()
      lu.assertAlmostEquals(r2.start_ns, r.end_ns, 1e-9)
    end)
  end
  s:run()
  lu.assertEquals(#seen, 4)
  -- Local transfers of different PEs do not interfere.
  for i = 2, 4 do lu.assertAlmostEquals(seen[i], seen[1], 1e-9) end
end

function TestFabric:test_nodes_are_found_by_place()
  local t = kb.topology.load("small_2x2")
  lu.assertEquals(t:node_at{ kind = "pe_dma", sip = 0, cube = 3, pe = 5 }, "sip0.cube3.pe5.pe_dma")
  lu.assertEquals(t:node_at{ kind = "m_cpu", sip = 0, cube = 2 }, "sip0.cube2.m_cpu")
  lu.assertEquals(t:node_at{ kind = "hbm_ctrl", sip = 0, cube = 1, pe = 7 }, "sip0.cube1.hbm_ctrl.pe7")
  lu.assertEquals(t:node_at{ kind = "io_cpu", sip = 0, io = 0 }, "sip0.io0.io_cpu")
  -- and back: the node's own fields
  local n = t:node(t:node_at{ kind = "pe_mmu", sip = 0, cube = 1, pe = 2 })
  lu.assertEquals({ n.kind, n.sip, n.cube, n.pe }, { "pe_mmu", 0, 1, 2 })
  lu.assertNil(t:node_at{ kind = "pe_cpu", sip = 0, cube = 9, pe = 0 })
  lu.assertNil(t:node_at{ kind = "m_cpu", sip = 0, cube = 0, pe = 0 })
  local ok, err = pcall(t.node_at, t, { kind = "noc_router", sip = 0, cube = 0 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "several noc_router nodes share that place")
  ok, err = pcall(t.node_at, t, { sip = 0 })
  lu.assertStrContains(err, "field 'kind'")
  ok, err = pcall(t.node_at, t, { kind = "pe_cpu", sip = -1 })
  lu.assertStrContains(err, "field 'sip' must be >= 0")
end

-- An integer field too large for a coordinate does not wrap round to a
-- small one, and a fraction is not an integer.
function TestFabric:test_coordinates_out_of_range_or_fractional_are_refused()
  local t = kb.topology.load("small_2x2")
  local ok, err = pcall(t.node_at, t, { kind = "pe_dma", sip = 2 ^ 32 // 1, cube = 0, pe = 0 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "topology:node_at: field 'sip' must be >= 0 and <= 2147483647, got 4294967296")
  local s = sim.new { topology = t }
  ok, err = pcall(s.pe_dma, s, { sip = 0, cube = 0, pe = 4294967296, dst_pa = 0, nbytes = 64 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "s:pe_dma{}: field 'pe' must be >= 0 and <= 2147483647, got 4294967296")
  ok, err = pcall(s.memory_write, s, { sip = 0, cube = 1.5, pe = 0, nbytes = 64 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "s:memory_write{}: field 'cube' must be an integer >= 0 and <= 2147483647, got 1.5")
  ok, err = pcall(s.memory_write, s, { pa = 0, nbytes = "64" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "field 'nbytes' must be an integer >= 1 and <= 70368744177664, got string")
  lu.assertEquals(#s:in_flight(), 0) -- nothing was sent
end

function TestFabric:test_bad_targets_are_errors_that_say_why()
  local t = kb.topology.load("small_1cube_8pe")
  local s = sim.new{ topology = t }
  local ok, err = pcall(s.memory_write, s, { sip = 0, cube = 3, pe = 0, nbytes = 64 })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "no hbm_ctrl node at sip0.cube3 pe 0 in topology small_1cube_8pe")
  ok, err = pcall(s.pe_dma, s, { sip = 0, cube = 0, pe = 9, dst = { pe = 0 }, nbytes = 64 })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "pe9")
  ok, err = pcall(s.memory_read, s, { sip = 0, cube = 0, pe = 0, nbytes = 0 })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "s:memory_read{}: field 'nbytes' must be >= 1 and <= 70368744177664, got 0")
  ok, err = pcall(s.memory_read, s, { pa = 0, nbytes = 1 << 62 }) -- its time on a link would pass int64 ps
  lu.assertStrContains(tostring(err), "got 4611686018427387904")
  ok, err = pcall(s.memory_write, s, { pa = kb.addr.pe_tcm(0, 0, 1, 0), nbytes = 64 })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "not modelled")
  local plain = sim.new()
  ok, err = pcall(plain.memory_write, plain, { nbytes = 64 })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "has no topology")
end

function TestFabric:test_transfer_on_a_chain()
  local t = kb.topology.load("chain")
  local s = sim.new{ topology = t }
  local ev = s:transfer{ src = "n0", dst = "n7", nbytes = 256 }
  s:run()
  -- One flit, 7 links of 1 ns propagation + 1 ns serialisation, 2 ns
  -- header decode at each of the 8 nodes: 7 x 2 + 8 x 2 = 30 ns.
  lu.assertAlmostEquals(ev:value().latency_ns, 30, 1e-9)
end

function TestFabric:test_a_result_built_when_first_read_is_the_same_table_after()
  -- The result table is built from a C record when its value is first read
  -- (src/lua/lfabric.c): it must read the same through every way in and
  -- keep its identity; an unread one goes with its event (ASan checks it).
  local s = sim.new{ topology = kb.topology.load("chain") }
  local a = s:transfer{ src = "n0", dst = "n7", nbytes = 512, hops = true }
  local b = s:transfer{ src = "n0", dst = "n7", nbytes = 256 }
  local c = s:transfer{ src = "n0", dst = "n3", nbytes = 256 }
  local both = s:all_of{ a, b }
  local seen
  s:spawn(function() seen = c:wait() end)
  local dropped = s:transfer{ src = "n0", dst = "n7", nbytes = 256 }
  s:run()
  lu.assertEquals(seen.path, { "n0", "n1", "n2", "n3" })
  lu.assertIs(c:value(), seen)
  local va = both:wait()[1]
  lu.assertIs(a:value(), va)
  lu.assertEquals(#va.hops, 8)
  lu.assertEquals(va.hops[8].node, "n7")
  local r = b:value() -- its first read
  lu.assertEquals(r.kind, "Transfer")
  lu.assertEquals(r.nbytes, 256)
  lu.assertEquals(#r.path, 8)
  lu.assertEquals(r.path[8], "n7")
  lu.assertAlmostEquals(r.latency_ns, r.end_ns - r.start_ns, 1e-9)
  lu.assertTrue(dropped:ok())
  dropped = nil -- never read
  collectgarbage()
  collectgarbage()
  s:close()
  lu.assertErrorMsgContains("is closed", function() return a:value() end)
end

function TestFabric:test_cli_overrides_reach_the_default_topology()
  local saved = kb.topology.default_overrides
  kb.topology.default_overrides = { "system.sips.count=1" }
  local t = kb.topology.load()
  kb.topology.default_overrides = saved
  lu.assertEquals(t:params().sips, 1)
  local t2 = kb.topology.load("default", { ["sip.cube_mesh"] = "{w: 2, h: 1}" })
  lu.assertEquals(t2:params().cubes_per_sip, 2)
end


function TestFabric:test_data_fields_of_the_wrong_direction_are_errors()
  local s = sim.new { topology = kb.topology.load("small_1cube_1pe") }
  local tc = require "kernbench.tensor_c"
  local t = tc.zeros({ 4 }, { dtype = "u8" })
  lu.assertErrorMsgContains("'dst' is for reads; use 'src'", s.memory_write, s,
                            { sip = 0, cube = 0, pe = 0, nbytes = 4, dst = t })
  lu.assertErrorMsgContains("'src' is for writes; use 'dst'", s.memory_read, s,
                            { sip = 0, cube = 0, pe = 0, nbytes = 4, src = t })
  lu.assertErrorMsgContains("the tensor block holds 4 bytes, nbytes is 8", s.memory_write, s,
                            { sip = 0, cube = 0, pe = 0, nbytes = 8, src = t })
end

function TestFabric:test_a_relay_does_not_charge_the_source_overhead_again()
  local t = kb.topology.load("small_1cube_1pe")
  local function latency(relay)
    local s = sim.new { topology = t }
    local e = s:transfer { src = "sip0.io0.io_cpu", dst = "sip0.cube0.m_cpu", nbytes = 0, view = "all",
                           relay = relay }
    s:run()
    return e:value().latency_ns
  end
  local io_cpu_overhead = t:node(t:node_at { kind = "io_cpu", sip = 0, io = 0 }).attrs.overhead_ns
  lu.assertTrue(io_cpu_overhead > 0)
  lu.assertAlmostEquals(latency(false) - latency(true), io_cpu_overhead, 1e-9)
end
