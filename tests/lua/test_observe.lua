--- What a simulation shows about itself: s:stats() (components, links, HBM
-- channels, requests) and s:op_log(). Counts and sizes come from the loaded
-- topology, never from constants about it.
local lu = require "luaunit"
local probe = require "kernbench.probe"

TestObserve = {}

local function link_of(stats, src, dst)
  for _, l in ipairs(stats.links) do
    if l.src == src and l.dst == dst then return l end
  end
end

function TestObserve:test_every_link_of_a_write_carries_exactly_the_bytes_sent()
  local t = kb.topology.load("default")
  local s = sim.new{ topology = t }
  local n = 32768 + 100 -- a partial last flit too
  local ev = s:memory_write{ sip = 0, cube = 5, pe = 3, offset = 0, nbytes = n }
  s:run()
  local r = ev:value()
  local st = s:stats{ requests = true }
  lu.assertEquals(#st.links, #r.path - 1) -- nothing else carried traffic
  for i = 1, #r.path - 1 do
    local l = link_of(st, r.path[i], r.path[i + 1])
    lu.assertNotNil(l, r.path[i] .. " -> " .. r.path[i + 1])
    lu.assertEquals(l.bytes, n)
    lu.assertEquals(l.flits, (n + t:params().flit_bytes - 1) // t:params().flit_bytes)
  end
  lu.assertEquals(#st.requests, 1)
  lu.assertEquals(st.requests[1].latency_ns, r.latency_ns)
  lu.assertEquals(st.requests[1].kind, "MemoryWrite")
end

function TestObserve:test_a_read_moves_its_bytes_on_the_way_back_only()
  local t = kb.topology.load("small_2x2")
  local s = sim.new{ topology = t }
  local n = 4096
  local ev = s:memory_read{ sip = 0, cube = 3, pe = 1, offset = 0, nbytes = n }
  s:run()
  local path = ev:value().path
  local st = s:stats()
  for i = 1, #path - 1 do
    lu.assertEquals(link_of(st, path[i], path[i + 1]).bytes, 0) -- the command
    lu.assertEquals(link_of(st, path[i], path[i + 1]).flits, 1)
    lu.assertEquals(link_of(st, path[i + 1], path[i]).bytes, n) -- the data
  end
end

local function heavy_traffic(t)
  local s = sim.new{ topology = t }
  local p = t:params()
  for c = 0, p.cubes_per_sip - 1 do
    for pe = 0, p.pes_per_cube - 1 do
      s:pe_dma{ sip = 0, cube = c, pe = pe, dst = { sip = 0, cube = 0, pe = 0 }, nbytes = 16384 }
      s:pe_dma{ sip = 0, cube = c, pe = pe, write = false, dst = { sip = 0, cube = c, pe = pe }, nbytes = 8192 }
    end
    s:memory_write{ sip = 0, cube = c, pe = 0, offset = 0, nbytes = 65536 }
  end
  s:run()
  return s
end

function TestObserve:test_utilisations_stay_within_zero_and_one_under_contention()
  local s = heavy_traffic(kb.topology.load("small_2x2"))
  local st = s:stats()
  lu.assertTrue(#st.components > 0)
  local hot = 0
  for _, c in ipairs(st.components) do
    lu.assertTrue(c.util >= 0 and c.util <= 1, c.id .. " util " .. c.util)
    lu.assertTrue(c.busy_ns <= st.sim_ns + 1e-9, c.id)
    if c.pcs then
      lu.assertTrue(c.pc_util >= 0 and c.pc_util <= 1, c.id)
      for _, pc in ipairs(c.pcs) do
        lu.assertTrue(pc.util >= 0 and pc.util <= 1, c.id .. " pc" .. pc.pc)
      end
    end
  end
  for _, l in ipairs(st.links) do
    lu.assertTrue(l.util >= 0 and l.util <= 1, l.src .. " -> " .. l.dst)
    if l.util > 0.5 then hot = hot + 1 end
    lu.assertTrue(l.peak_queue_ns >= 0)
  end
  lu.assertTrue(hot > 0) -- the hotspot on pe0's controller link is visible
end

function TestObserve:test_hbm_channels_report_their_own_utilisation()
  local t = kb.topology.load("small_1cube_1pe")
  local s = sim.new{ topology = t }
  local burst = 256
  -- one burst to channel 0 only: its channel is busy, the others are idle
  s:memory_write{ sip = 0, cube = 0, pe = 0, offset = 0, nbytes = burst }
  s:run()
  local ctrl
  for _, c in ipairs(s:stats().components) do
    if c.pcs then ctrl = c end
  end
  lu.assertNotNil(ctrl)
  lu.assertEquals(#ctrl.pcs, t:params().hbm_channels_per_pe)
  lu.assertTrue(ctrl.pcs[1].busy_ns > 0)
  for i = 2, #ctrl.pcs do lu.assertEquals(ctrl.pcs[i].busy_ns, 0) end
end

function TestObserve:test_request_latency_equals_the_probes()
  local res = probe.run { topology = "default", case = "h2d-2hop" }
  local c = res.cases[1]
  local s = sim.new{ topology = kb.topology.load("default") }
  s:memory_write{ sip = c.target.sip, cube = c.target.cube, pe = c.target.pe, nbytes = res.nbytes }
  s:run()
  lu.assertEquals(s:stats{ requests = true }.requests[1].latency_ns, c.actual_ns)
  lu.assertEquals(s:stats().request_latency.max_ns, c.actual_ns)
  lu.assertNil(s:stats().requests)
end

function TestObserve:test_stats_totals_are_the_full_stats_without_the_tables()
  local s = sim.new{ topology = kb.topology.load("small_2x2") }
  s:memory_write{ sip = 0, cube = 0, pe = 0, offset = 0, nbytes = 1000 }
  s:run()
  local full, totals = s:stats(), s:stats{ totals = true }
  for _, k in ipairs { "sim", "topology", "sim_ns", "events", "pending", "processes", "waiting", "resumes" } do
    lu.assertEquals(totals[k], full[k], k)
  end
  for _, k in ipairs { "components", "links", "request_latency", "op_counts", "requests" } do
    lu.assertNil(totals[k], k)
  end
end

function TestObserve:test_op_log_counts_match_the_script()
  local t = kb.topology.load("small_2x2")
  local s = sim.new{ topology = t, op_log = true }
  local p = t:params()
  local n, m, k = 3, 2, 0
  for i = 1, n do s:memory_write{ sip = 0, cube = i % p.cubes_per_sip, pe = 0, offset = 256 * i, nbytes = 1000 } end
  for i = 1, m do s:memory_read{ sip = 0, cube = 0, pe = i % p.pes_per_cube, nbytes = 512 } end
  for pe = 0, p.pes_per_cube - 1 do
    s:pe_dma{ sip = 0, cube = 1, pe = pe, dst = { sip = 0, cube = 0, pe = pe }, nbytes = 2048 }
    s:pe_dma{ sip = 0, cube = 1, pe = pe, write = false, dst_sram = { sip = 0, cube = 1, offset = 0 }, nbytes = 64 }
    k = k + 2
  end
  s:transfer{ src = "sip0.cube0.r0c0", dst = "sip0.cube1.r0c0", nbytes = 256 } -- not an op-log operation
  s:run()
  local log = s:op_log()
  lu.assertEquals(log.counts.memory_write, n)
  lu.assertEquals(log.counts.memory_read, m)
  lu.assertEquals(log.counts.dma_write, k // 2)
  lu.assertEquals(log.counts.dma_read, k // 2)
  lu.assertEquals(#log.records, n + m + k)
  lu.assertEquals(s:stats().op_counts.dma_read, k // 2)
  local prev = -1
  for _, r in ipairs(log.records) do
    lu.assertTrue(r.t_start_ns >= prev, "records sorted by t_start")
    lu.assertTrue(r.t_end_ns >= r.t_start_ns)
    lu.assertEquals(r.op_kind, "memory")
    prev = r.t_start_ns
    if r.op_name == "dma_write" then
      lu.assertStrMatches(r.component, "sip0%.cube1%.pe%d+%.pe_dma")
      lu.assertEquals(r.params.dst_space, "hbm")
      lu.assertEquals(r.params.nbytes, 2048)
    elseif r.op_name == "dma_read" then
      lu.assertEquals(r.params.src_space, "sram")
      lu.assertEquals(r.params.src, "sip0.cube1.sram")
    else
      lu.assertStrMatches(r.component, "sip0%.cube%d+%.hbm_ctrl%.pe%d+")
      lu.assertEquals(r.params.space, "hbm")
    end
  end
end

function TestObserve:test_stats_of_a_simulation_without_topology()
  local s = sim.new()
  s:spawn(function() s:sleep(5) end)
  s:run()
  local st = s:stats()
  lu.assertEquals(st.sim_ns, 5)
  lu.assertNil(st.components)
  lu.assertEquals(#s:op_log().records, 0)
end

function TestObserve:test_op_log_counts_without_records_unless_asked()
  local t = kb.topology.load("small_2x2")
  local s = sim.new{ topology = t }
  s:memory_write{ sip = 0, cube = 0, pe = 0, offset = 0, nbytes = 1000 }
  s:pe_dma{ sip = 0, cube = 1, pe = 0, dst = { sip = 0, cube = 0, pe = 0 }, nbytes = 2048 }
  s:run()
  local log = s:op_log()
  lu.assertEquals(#log.records, 0)
  lu.assertEquals(log.counts.memory_write, 1)
  lu.assertEquals(log.counts.dma_write, 1)
  lu.assertEquals(s:stats().op_counts.dma_write, 1)
end
