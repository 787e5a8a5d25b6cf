--- PE-to-PE queues (docs/ipcq.md): install checks, FIFO order, credits
-- and backpressure, any-direction and future recvs, the slot tiers, data
-- moving with time, errors and the deadlock report.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestIpcq = {}

local function runtime(topo, data)
  return torchmod.new { topology = kb.topology.load(topo or "small_1cube_8pe"), data_mode = data and "data" or nil }
end

-- Runs fn(tl, rank) on PEs 0..n-1 of cube 0 after a ring_1d install over
-- them (opts: install options); returns the launch's result.
local function ring(torch, n, fn, opts)
  local o = { topology = "ring_1d", grid = { pes = n, cubes = 1 } }
  for k, v in pairs(opts or {}) do o[k] = v end
  torch.install_ipcq(o)
  return torch.launch(function(tl) fn(tl, tl.ipcq_rank()) end, { pes = n, cubes = 1 }).result
end

local function values(h) return h:tolist() end

function TestIpcq:test_messages_of_one_direction_arrive_in_order_with_their_values()
  local torch = runtime(nil, true)
  local got = {}
  ring(torch, 2, function(tl, r)
    if r == 0 then
      for i = 1, 6 do tl.send("E", tl.full({ 8 }, i, "f32")) end
    else
      for i = 1, 6 do got[i] = values(tl.recv("W", { 8 }, "f32"))[1] end
    end
  end)
  lu.assertEquals(got, { 1, 2, 3, 4, 5, 6 })
  torch.close()
end

function TestIpcq:test_the_value_sent_is_the_sources_at_send_time()
  local torch = runtime(nil, true)
  local got
  ring(torch, 2, function(tl, r)
    if r == 0 then
      local h = tl.full({ 4 }, 7, "f32")
      tl.send("E", h)
      h = h + 100 -- a new result; the message already holds 7
      tl.send("E", h)
    else
      tl.cycles(5000) -- both messages are in their slots long before these reads
      got = { values(tl.recv("W", { 4 }, "f32"))[1], values(tl.recv("W", { 4 }, "f32"))[1] }
    end
  end)
  lu.assertEquals(got, { 7, 107 })
  torch.close()
end

function TestIpcq:test_a_full_ring_blocks_the_sender_until_a_credit_returns()
  local torch = runtime()
  local sent, read = {}, nil
  ring(torch, 2, function(tl, r)
    if r == 0 then
      for i = 1, 3 do
        tl.send("E", tl.zeros({ 64 }, "f16"))
        sent[i] = torch.now_ns()
      end
    else
      tl.cycles(20000) -- 20 us at 1 GHz: the ring (2 slots) fills meanwhile
      tl.recv("W", { 64 }, "f16")
      read = torch.now_ns()
      tl.recv("W", { 64 }, "f16")
      tl.recv("W", { 64 }, "f16")
    end
  end, { n_slots = 2 })
  lu.assertTrue(sent[2] < 1000, "two sends fit the ring at once")
  lu.assertTrue(sent[3] >= read, ("the third send (t=%g) waits for the first credit (recv done t=%g)"):format(sent[3], read))
  local ipcq = torch.sim:stats()
  torch.close()
  lu.assertNotNil(ipcq)
end

function TestIpcq:test_poll_resumes_on_the_poll_grid_and_keeps_pe_cpu_busy()
  local function blocked_send(bp)
    local torch = runtime()
    local t = {}
    ring(torch, 2, function(tl, r)
      if r == 0 then
        tl.send("E", tl.zeros({ 64 }, "f16"))
        t.wait_from = torch.now_ns()
        tl.send("E", tl.zeros({ 64 }, "f16"))
        t.resumed = torch.now_ns()
      else
        tl.cycles(3001)
        tl.recv("W", { 64 }, "f16")
        tl.recv("W", { 64 }, "f16")
      end
    end, { n_slots = 1, backpressure = bp })
    local st = torch.sim:stats()
    torch.close()
    return t, st
  end
  local sleep = blocked_send("sleep")
  local poll, st = blocked_send("poll")
  lu.assertTrue(poll.resumed >= sleep.resumed, "polling never resumes earlier than a wake-up")
  lu.assertTrue(poll.resumed - sleep.resumed < 4.001, "at most one poll interval (4 ns) later")
  local cpu
  for _, c in ipairs(st.components) do
    if c.id == "sip0.cube0.pe0.pe_cpu" then cpu = c end
  end
  lu.assertNotNil(cpu, "the spinning PE_CPU is busy")
  lu.assertTrue(cpu.busy_ns >= 2900, ("PE_CPU busy %g ns while polling"):format(cpu.busy_ns))
end

function TestIpcq:test_recv_from_any_direction_takes_the_earliest_message()
  local torch = runtime(nil, true)
  local order = {}
  ring(torch, 3, function(tl, r)
    if r == 0 then
      tl.cycles(2000)
      tl.send("E", tl.full({ 4 }, 10, "f32")) -- to rank 1 from its W, late
    elseif r == 2 then
      tl.send("W", tl.full({ 4 }, 20, "f32")) -- to rank 1 from its E, early
    else
      for i = 1, 2 do
        local h, from = tl.recv(nil, { 4 }, "f32")
        order[i] = ("%s=%d"):format(from, values(h)[1])
      end
    end
  end)
  lu.assertEquals(order, { "E=20", "W=10" })
  torch.close()
end

function TestIpcq:test_a_future_claims_the_next_message_when_it_is_made()
  local torch = runtime(nil, true)
  local got = {}
  ring(torch, 2, function(tl, r)
    if r == 0 then
      tl.send("E", tl.full({ 4 }, 1, "f32"))
      tl.send("E", tl.full({ 4 }, 2, "f32"))
    else
      local f = tl.recv_async("W", { 4 }, "f32")
      local second = tl.recv("W", { 4 }, "f32") -- the message after the future's
      local first, from = tl.wait(f)
      got = { values(first)[1], values(second)[1], from }
    end
  end)
  lu.assertEquals(got, { 1, 2, "W" })
  torch.close()
end

-- The recv's time on rank 1 of a 2-rank ring for one message of n bytes.
local function recv_ns(kind, call, n)
  local torch = runtime()
  local t
  ring(torch, 2, function(tl, r)
    if r == 0 then
      tl.send("E", tl.zeros({ n // 2 }, "f16"))
    else
      tl.cycles(10000) -- the message is in its slot before the recv starts
      local t0 = torch.now_ns()
      tl[call]("W", { n // 2 }, "f16")
      t = torch.now_ns() - t0
    end
  end, { buffer_kind = kind, slot_size = 65536, n_slots = 1 })
  torch.close()
  return t
end

function TestIpcq:test_no_consume_skips_the_slot_read()
  for _, kind in ipairs { "tcm", "sram", "hbm" } do
    local full, diag = recv_ns(kind, "recv", 65536), recv_ns(kind, "recv_no_consume", 65536)
    lu.assertTrue(diag < full, ("%s: recv_no_consume %g ns < recv %g ns"):format(kind, diag, full))
  end
  -- the slot read of 64 KiB from an sram ring: 2 ns + 64 KiB at 512 GB/s + the 128 GB/s bank hop
  local d = recv_ns("sram", "recv", 65536) - recv_ns("sram", "recv_no_consume", 65536)
  lu.assertAlmostEquals(d, 2 + 65536 / 512 + 65536 / 128, 1e-6)
end

function TestIpcq:test_buffer_kinds_order_tcm_hbm_sram_at_64_kib()
  local t = {}
  for _, kind in ipairs { "tcm", "hbm", "sram" } do t[kind] = recv_ns(kind, "recv", 65536) end
  lu.assertTrue(t.tcm < t.hbm and t.hbm < t.sram, ("tcm %g, hbm %g, sram %g ns"):format(t.tcm, t.hbm, t.sram))
end

function TestIpcq:test_rings_live_where_their_kind_says_and_never_overlap_tensors()
  local torch = runtime()
  local before = torch.allocators_pristine()
  local plan = torch.install_ipcq { topology = "ring_1d", grid = { pes = 4, cubes = 1 }, buffer_kind = "hbm" }
  lu.assertTrue(before)
  lu.assertFalse(torch.allocators_pristine(), "hbm rings are reserved in the PEs' slices")
  local d = torch.empty({ 4, 64 }, { dtype = "f16", dp = torch.DPPolicy { pe = "row_wise", num_pes = 4 } })
  for _, sh in ipairs(d.shards) do
    for _, dir in ipairs(plan.ranks[sh.pe + 1].dirs) do
      local lo, hi = dir.rx_pa, dir.rx_pa + plan.n_slots * plan.slot_size
      lu.assertTrue(sh.pa >= hi or sh.pa + sh.nbytes <= lo, "a tensor shard and a ring overlap")
    end
  end
  lu.assertStrContains(kb.ipcq.dump(plan), "rank 3 sip0.cube0.pe3  W          -> rank 2 sip0.cube0.pe2 (E)")
  torch.cleanup()
  lu.assertTrue(torch.allocators_pristine(), "cleanup frees the rings")
  torch.close()
end

-- A hand-made plan for s:ipcq_install: two PEs, one direction each.
local function plan2(torch, rx0, rx1, extra)
  local a = kb.addr.pe_local(0, 0, 0, "IPCQ", rx0)
  local b = kb.addr.pe_local(0, 0, 1, "IPCQ", rx1)
  local p = { buffer_kind = "tcm", backpressure = "sleep", n_slots = 2, slot_size = 256, pes = {
    { sip = 0, cube = 0, pe = 0, dirs = { { name = "E", peer = 1, peer_dir = 0, rx_pa = a } } },
    { sip = 0, cube = 0, pe = 1, dirs = { { name = "W", peer = 0, peer_dir = 0, rx_pa = b } } },
  } }
  if extra then extra(p) end
  return p
end

function TestIpcq:test_the_install_checks_pairing_slots_and_ring_overlap()
  local torch = runtime()
  local s = torch.sim
  torch.wait(s:ipcq_install(plan2(torch, 0, 0))) -- a valid plan installs
  lu.assertErrorMsgContains("overlap (invariant I3.1)", s.ipcq_install, s, plan2(torch, 0, 0, function(p)
    p.pes[1].dirs[2] = { name = "N", peer = 1, peer_dir = 1, rx_pa = kb.addr.pe_local(0, 0, 0, "IPCQ", 256) }
    p.pes[2].dirs[2] = { name = "S", peer = 0, peer_dir = 1, rx_pa = kb.addr.pe_local(0, 0, 1, "IPCQ", 4096) }
  end))
  lu.assertErrorMsgContains("both pair with rank 1's direction 0 (each direction needs its own slot at the peer, "
    .. "invariant I3)", s.ipcq_install, s, plan2(torch, 0, 0, function(p)
    p.pes[1].dirs[2] = { name = "N", peer = 1, peer_dir = 0, rx_pa = kb.addr.pe_local(0, 0, 0, "IPCQ", 4096) }
  end))
  lu.assertErrorMsgContains("a pairing must be mutual", s.ipcq_install, s, plan2(torch, 0, 0, function(p)
    p.pes[2].dirs[2] = { name = "X", peer = 0, peer_dir = 0, rx_pa = kb.addr.pe_local(0, 0, 1, "IPCQ", 4096) }
    p.pes[2].dirs[1].peer_dir = 0
    p.pes[1].dirs[1].peer_dir = 1
  end))
  lu.assertErrorMsgContains("a tcm ring must lie in the PE's IPCQ window", s.ipcq_install, s,
    plan2(torch, 0, 0, function(p) p.pes[1].dirs[1].rx_pa = kb.addr.pe_local(0, 0, 1, "IPCQ", 1024) end))
  lu.assertErrorMsgContains("runs past the end", s.ipcq_install, s, plan2(torch, 256 * 1024 - 256, 0))
  lu.assertErrorMsgContains("ranks 0 and 1 are both sip0.cube0.pe0", s.ipcq_install, s,
    plan2(torch, 0, 0, function(p) p.pes[2].pe = 0 end))
  torch.close()
end

function TestIpcq:test_install_options_are_checked()
  local torch = runtime()
  lu.assertErrorMsgContains("unknown option 'slots'", torch.install_ipcq, { topology = "ring_1d", slots = 4 })
  lu.assertErrorMsgContains("buffer_kind must be", torch.install_ipcq, { topology = "ring_1d", buffer_kind = "dram" })
  lu.assertErrorMsgContains("its IPCQ window (256 KiB) cannot hold another ring", torch.install_ipcq,
    { topology = "ring_1d", grid = { pes = 2, cubes = 1 }, slot_size = 65536, n_slots = 4 })
  lu.assertErrorMsgContains("unknown topology", torch.install_ipcq, { topology = "hypercube" })
  lu.assertErrorMsgContains("n_slots must be an integer from 1 to 1024", torch.install_ipcq,
    { topology = "ring_1d", n_slots = 5000 })
  lu.assertErrorMsgContains("n_slots", torch.sim.ipcq_install, torch.sim, { buffer_kind = "tcm",
    backpressure = "sleep", n_slots = 100000, slot_size = 16, pes = { { sip = 0, cube = 0, pe = 0, dirs = {} } } })
  lu.assertTrue(torch.allocators_pristine(), "a refused install reserves nothing")
  torch.close()
end

local function kernel_error(fn, opts)
  local torch = runtime()
  local ok, err = pcall(ring, torch, 2, fn, opts)
  torch.close()
  lu.assertFalse(ok)
  return tostring(err)
end

function TestIpcq:test_errors_name_the_call_the_pe_and_the_cause()
  lu.assertStrContains(kernel_error(function(tl) tl.send("N", tl.zeros({ 4 })) end),
    "tl.send: direction 'N' is not installed on sip0.cube0.pe0 (rank 0 has: E, W)")
  lu.assertStrContains(kernel_error(function(tl) tl.send("E", tl.zeros({ 4096 })) end, { slot_size = 4096 }),
    "tl.send on sip0.cube0.pe0: the message is 8192 bytes, larger than a slot (slot_size 4096 bytes)")
  lu.assertStrContains(kernel_error(function(tl) tl.recv("E", { 4096 }, "f32") end, { slot_size = 4096 }),
    "the result is 16384 bytes, larger than a slot")
  lu.assertStrContains(kernel_error(function(tl, r)
    if r == 0 then tl.send("E", tl.zeros({ 4 }, "f32")) else tl.recv("W", { 8 }, "f32") end
  end), "has 16 bytes; the recv asks for [8] f32 (32 bytes)")
end

function TestIpcq:test_a_deadlock_lists_each_blocked_pe_its_direction_and_peer()
  local err = kernel_error(function(tl)
    tl.recv("W", { 4 }, "f32")
    tl.send("E", tl.zeros({ 4 }, "f32"))
  end)
  lu.assertStrContains(err, "deadlock")
  lu.assertStrContains(err, "sip0.cube0.pe0 (rank 0, kernel")
  lu.assertStrContains(err, "blocked in tl.recv since t=")
  lu.assertStrContains(err, "waiting for message seq 0 in direction W from rank 1 (sip0.cube0.pe1); 0 received so far")
  lu.assertStrContains(err, "sip0.cube0.pe1 (rank 1")
end

function TestIpcq:test_a_ring_over_two_sips_with_forwarding_is_exact_in_data_mode()
  local torch = runtime("default", true)
  local pes = {}
  for sip = 0, 1 do
    for cube = 0, 1 do
      for pe = 0, 7 do pes[#pes + 1] = { sip = sip, cube = cube, pe = pe } end
    end
  end
  torch.install_ipcq { topology = "ring_1d", pes = pes }
  local sums, hs = {}, {}
  for sip = 0, 1 do
    torch.ahbm.set_device(sip)
    hs[#hs + 1] = torch.launch_async(function(tl)
      local r, n = tl.ipcq_rank(), tl.ipcq_world_size()
      local acc = tl.full({ 8 }, r + 1, "f32")
      local cur = acc
      for _ = 1, n - 1 do
        tl.send("E", cur)
        cur = tl.recv("W", { 8 }, "f32") -- forwarded in the next round
        acc = acc + cur
      end
      sums[r] = acc:tolist()
    end, { pes = 8, cubes = 2 })
  end
  for _, h in ipairs(hs) do torch.wait(h) end
  lu.assertEquals(#pes, 32)
  for r = 0, 31 do
    for _, v in ipairs(sums[r]) do lu.assertEquals(v, 32 * 33 / 2) end
  end
  local st = torch.sim:stats()
  local seen = 0
  for _, c in ipairs(st.components) do
    if c.directions then
      seen = seen + 1
      for _, d in ipairs(c.directions) do
        lu.assertEquals(d.sent, d.direction == "E" and 31 or 0) -- every rank sends E, receives from W
        lu.assertEquals(d.received, d.direction == "W" and 31 or 0)
      end
    end
  end
  lu.assertEquals(seen, 32)
  torch.close()
end

function TestIpcq:test_timing_does_not_depend_on_data_mode()
  local function run(data)
    local torch = runtime(nil, data)
    local r = ring(torch, 8, function(tl)
      local cur = tl.full({ 256 }, 1, "f16")
      for _ = 1, 7 do
        tl.send("E", cur)
        cur = tl.recv("W", { 256 }, "f16")
      end
    end)
    torch.close()
    return r.pe_exec_ns
  end
  lu.assertEquals(run(true), run(false))
end

function TestIpcq:test_a_new_plan_clears_the_pes_it_leaves_out()
  local torch = runtime()
  local function info(pes)
    local out = {}
    torch.launch(function(tl)
      out[tl.program_id(0)] = tl.ipcq_rank() or "none"
    end, { pes = pes, cubes = 1 })
    return out
  end
  torch.install_ipcq { topology = "ring_1d", pes = { { 0, 0, 0 }, { 0, 0, 1 } } }
  lu.assertEquals(info(5), { [0] = 0, [1] = 1, [2] = "none", [3] = "none", [4] = "none" })
  torch.install_ipcq { topology = "ring_1d", pes = { { 0, 0, 0 }, { 0, 0, 4 } } }
  lu.assertEquals(info(5), { [0] = 0, [1] = "none", [2] = "none", [3] = "none", [4] = 1 })
  torch.uninstall_ipcq()
  lu.assertEquals(info(5), { [0] = "none", [1] = "none", [2] = "none", [3] = "none", [4] = "none" })
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

os.exit(lu.LuaUnit.run())
