--- Device control: MMU map and unmap messages and kernel launches from the
-- host, carried by IO_CPU and M_CPU to each PE and answered back
-- (src/comp/device), and what the builtins refuse to take.
local lu = require "luaunit"
local pe_c = require "kernbench.pe_c"

TestDevice = {}

local function targets(n)
  local t = {}
  for pe = 0, n - 1 do t[#t + 1] = { sip = 0, cube = 0, pe = pe } end
  return t
end

function TestDevice:test_a_map_is_installed_at_every_target_pe_and_answered()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  local pa = kb.addr.hbm(0, 0, 0x1000000) -- a map must lie in one memory (HBM here)
  local ev = s:mmu_map { targets = targets(3), entries = { { va = 0x200000, pa = pa, size = 0x200000 } } }
  lu.assertNil(pe_c.mmu_translate(s, 0, 0, 0, 0x200010)) -- nothing before the message arrives
  s:run()
  lu.assertTrue(ev:value())
  for pe = 0, 2 do lu.assertEquals(pe_c.mmu_translate(s, 0, 0, pe, 0x200010), pa + 0x10) end
  lu.assertNil(pe_c.mmu_translate(s, 0, 0, 3, 0x200010)) -- not a target
  s:mmu_unmap { targets = targets(3), entries = { { va = 0x200000, size = 0x200000 } } }
  s:run()
  for pe = 0, 2 do lu.assertNil(pe_c.mmu_translate(s, 0, 0, pe, 0x200010)) end
end

-- On an idle fabric the answer comes back after each leg's time (a 0-byte
-- transfer's, which pays the overheads at both ends): PCIe EP -> IO_CPU ->
-- M_CPU -> PE_MMU, then M_CPU -> IO_CPU -> PCIe EP, where a node passing a
-- message on (IO_CPU, M_CPU) does not pay its overhead again.
function TestDevice:test_a_map_takes_its_legs_times_with_each_overhead_once()
  local t = kb.topology.load("small_2x2")
  local ep, io = t:node_at { kind = "pcie_ep", sip = 0, io = 0 }, t:node_at { kind = "io_cpu", sip = 0, io = 0 }
  local m = t:node_at { kind = "m_cpu", sip = 0, cube = 3 }
  local mmu = t:node_at { kind = "pe_mmu", sip = 0, cube = 3, pe = 5 }
  local oh_io, oh_m = t:node(io).attrs.overhead_ns, t:node(m).attrs.overhead_ns
  local function L(a, b)
    local s = sim.new { topology = t }
    local e = s:transfer { src = a, dst = b, nbytes = 0, view = "all" }
    s:run()
    return e:value().latency_ns
  end
  local want = L(ep, io) + L(io, m) - oh_io + L(m, mmu) - oh_m + L(m, io) - oh_m + L(io, ep) - oh_io
  local s = sim.new { topology = t }
  local ev = s:mmu_map { targets = { { sip = 0, cube = 3, pe = 5 } }, entries = { { va = 0, pa = 0, size = 4096 } } }
  s:run()
  lu.assertTrue(ev:value())
  lu.assertAlmostEquals(s:now(), want, 1e-9)
end

function TestDevice:test_bad_operations_are_errors_that_say_why()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  local e = { { va = 0, pa = 0, size = 4096 } }
  lu.assertErrorMsgContains("MmuMap: no pe_mmu at sip 0, cube 0, pe 9 in topology small_1cube_8pe",
                            s.mmu_map, s, { targets = { { sip = 0, cube = 0, pe = 9 } }, entries = e })
  lu.assertErrorMsgContains("MmuMap: no m_cpu at sip 0, cube 4 in topology small_1cube_8pe",
                            s.mmu_map, s, { targets = { { sip = 0, cube = 4, pe = 0 } }, entries = e })
  lu.assertErrorMsgContains("MmuMap: no pcie_ep at sip 1, io 0 in topology small_1cube_8pe",
                            s.mmu_map, s, { targets = { { sip = 1, cube = 0, pe = 0 } }, entries = e })
  lu.assertErrorMsgContains("MmuMap: PE sip0.cube0.pe1 is targeted twice",
                            s.mmu_map, s, { targets = { { sip = 0, cube = 0, pe = 1 }, { sip = 0, cube = 0, pe = 1 } },
                                            entries = e })
  lu.assertErrorMsgContains("field 'targets' must be a non-empty list", s.mmu_map, s, { entries = e })
  lu.assertErrorMsgContains("targets[1] has no 'pe'", s.mmu_map, s, { targets = { { sip = 0, cube = 0 } }, entries = e })
  lu.assertErrorMsgContains("entries[1] must be a table {va =, pa =, size =}",
                            s.mmu_map, s, { targets = targets(1), entries = { { va = 0, size = 1 } } })
  lu.assertErrorMsgContains("field 'sip' must be >= 0",
                            s.mmu_map, s, { targets = { { sip = -1, cube = 0, pe = 0 } }, entries = e })
  -- 2^32 would wrap round to SIP 0 as a C int; 0.5 is no PE number
  lu.assertErrorMsgContains("s:mmu_map{}: field 'sip' must be >= 0 and <= 2147483647, got 4294967296",
                            s.mmu_map, s, { targets = { { sip = 4294967296, cube = 0, pe = 0 } }, entries = e })
  lu.assertErrorMsgContains("s:mmu_map{}: field 'pe' must be an integer >= 0 and <= 2147483647, got 0.5",
                            s.mmu_map, s, { targets = { { sip = 0, cube = 0, pe = 0.5 } }, entries = e })
  lu.assertErrorMsgContains("s:mmu_map{}: field 'size' must be an integer >= 0, got 4096.5",
                            s.mmu_map, s, { targets = targets(1), entries = { { va = 0, pa = 0, size = 4096.5 } } })
  lu.assertErrorMsgContains("s:launch{} grid: field 'pes' must be >= 1 and <= 2147483647, got 0",
                            s.launch, s, { name = "k", targets = targets(1), grid = { pes = 0, cubes = 1 },
                                           body = function() end })
  local plain = sim.new()
  lu.assertErrorMsgContains("this simulation has no topology", plain.mmu_map, plain, { targets = targets(1), entries = e })
  s:run() -- nothing was sent
  lu.assertEquals(s:now(), 0)
end

-- A composite that cannot be waited for (here: issued outside a process)
-- is refused before anything starts: no composite is left running.
function TestDevice:test_a_refused_composite_leaves_nothing_running()
  local s = sim.new { topology = kb.topology.load("small_1cube_1pe") }
  local ctx = pe_c.context(s, { sip = 0, cube = 0, pe = 0, scratch_base = 0, scratch_size = 1 << 20,
                                pa_fallback = true })
  local pa = kb.addr.pe_hbm(0, 0, 0, 0, s:topology():params().hbm_slice_bytes)
  local ref = { ptr = pa, shape = { 64, 64 }, dtype = "f16" }
  local ok, err = pcall(ctx.composite, ctx, { op = "gemm", a = ref, b = ref, out_ptr = pa })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "tl.composite would block")
  lu.assertEquals(s:pe_state(0, 0, 0).composites, 0)
  lu.assertEquals(s:run(), "empty")
  lu.assertEquals(s:now(), 0)
end

-- A launch reaches every target PE once, each starts its kernel at the
-- stamped barrier, and the answer comes back after the last has finished.
function TestDevice:test_a_launch_runs_every_target_once_and_answers_after_the_last()
  local t = kb.topology.load("small_2x2")
  local P = t:params()
  local s = sim.new { topology = t }
  local targets, seen = {}, {}
  for c = 0, P.cubes_per_sip - 1 do
    for pe = 0, P.pes_per_cube - 1, 2 do targets[#targets + 1] = { sip = 0, cube = c, pe = pe } end
  end
  local last, starts = 0, {}
  local ev = s:launch { name = "probe", targets = targets, grid = { pes = P.pes_per_cube, cubes = P.cubes_per_sip },
    body = function(ctx, sip, cube, pe)
      local key = sip .. "." .. cube .. "." .. pe
      lu.assertNil(seen[key])
      seen[key] = true
      starts[#starts + 1] = s:now()
      ctx:cycles(10 * (pe + 1)) -- PEs finish at different times
      last = math.max(last, s:now())
      ctx:finish()
    end }
  local finished
  s:spawn(function() ev:wait() finished = s:now() end)
  s:run()
  local n = 0
  for _ in pairs(seen) do n = n + 1 end
  lu.assertEquals(n, #targets)
  local r = ev:value()
  for _, at in ipairs(starts) do lu.assertEquals(at, r.target_start_ns) end
  lu.assertTrue(last > 0 and finished > last)
  lu.assertEquals(#r.pes, #targets)
  for i, pe in ipairs(r.pes) do -- in target order, every figure its own
    lu.assertEquals({ pe.sip, pe.cube, pe.pe }, { targets[i].sip, targets[i].cube, targets[i].pe })
    lu.assertEquals(pe.calls, 1)
    lu.assertTrue(pe.pe_exec_ns <= r.pe_exec_ns)
  end
  lu.assertAlmostEquals(r.pe_exec_ns, r.pes[#r.pes].pe_exec_ns, 1e-9) -- the slowest: pe 2*k+... last
end

-- A body that does not end with ctx:finish() leaves its PE unanswered: the
-- launch never completes and the quiescence report names the launch.
function TestDevice:test_an_unfinished_kernel_leaves_the_launch_waiting()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  local ev = s:launch { name = "forgetful", targets = targets(1), grid = { pes = 1, cubes = 1 },
                        body = function() end }
  s:spawn { name = "host", fn = function() ev:wait() end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "waiting on event 'launch forgetful'")
end

-- A command processor built in C takes only the messages it has a handler for.
function TestDevice:test_a_message_without_a_handler_names_kind_node_and_sender()
  kb.components.register("io_pinger", { kinds = "m_cpu", messages = { "Ping" }, attrs = { overhead_ns = 0 },
    run = function(self)
      self:send { kind = "Ping", dst = "sip0.io0.io_cpu", view = "all" }
      while true do self:receive() end
    end })
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe", { "cube.components.m_cpu.impl=io_pinger" }) }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "sip0.io0.io_cpu (builtin.io_cpu)")
  lu.assertStrContains(tostring(err), "received a Ping (transaction #1 from sip0.cube0.m_cpu), a message it has no handler for")
end

-- The start barrier covers the launch's whole grid: a grid larger than the
-- machine stops the run at IO_CPU, naming the PE it asked for.
function TestDevice:test_a_launch_grid_past_the_topology_fails_at_the_barrier()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  s:launch { name = "wide", targets = targets(1), grid = { pes = 9, cubes = 1 }, body = function(ctx) ctx:finish() end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "sip0.io0.io_cpu (builtin.io_cpu)")
  lu.assertStrContains(tostring(err), "KernelLaunch start barrier: no pe_cpu at sip 0, cube 0, pe 8 in topology "
                                      .. "small_1cube_8pe (the launch's grid is 9 PEs x 1 cubes)")
end

-- Only memory accesses end at the cube SRAM, and only what a PCIe endpoint
-- answers the host with ends there: another message is an error naming its
-- kind, transaction and sender, never a silent completion.
function TestDevice:test_a_message_of_another_kind_ending_at_sram_or_pcie_ep_fails()
  local function run_pinger(name, dst)
    kb.components.register(name, { kinds = "m_cpu", messages = { "Ping" }, attrs = { overhead_ns = 0 },
      run = function(self)
        self:send { kind = "Ping", dst = dst, view = "all" }
        while true do self:receive() end
      end })
    local s = sim.new { topology = kb.topology.load("small_1cube_8pe", { "cube.components.m_cpu.impl=" .. name }) }
    local ok, err = pcall(s.run, s)
    lu.assertFalse(ok)
    return tostring(err)
  end
  local err = run_pinger("sram_pinger", "sip0.cube0.sram")
  lu.assertStrContains(err, "sip0.cube0.sram (builtin.sram)")
  lu.assertStrContains(err, "received a Ping (transaction #1 from sip0.cube0.m_cpu), which is not a memory access")
  err = run_pinger("pcie_pinger", "sip0.io0.pcie_ep")
  lu.assertStrContains(err, "sip0.io0.pcie_ep (builtin.pcie_ep)")
  lu.assertStrContains(err, "received a Ping (transaction #1 from sip0.cube0.m_cpu), a message it has no handler for")
end

-- A Lua component's message kinds may not take a builtin kind's name: traces
-- and errors name messages by kind.
function TestDevice:test_a_lua_message_kind_named_like_a_builtin_is_refused()
  local ok, err = pcall(kb.components.register, "impostor",
                        { messages = { "Ping", "KernelLaunch" }, run = function() end })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "impostor: messages[2] must not be a builtin message kind's name")
end

-- A map needs the builtin command processors: a Lua M_CPU does not carry it.
function TestDevice:test_a_map_through_a_lua_m_cpu_is_refused()
  kb.components.register("idle_m_cpu", { kinds = "m_cpu", attrs = { overhead_ns = 0 },
    run = function(self) while true do self:receive() end end })
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe", { "cube.components.m_cpu.impl=idle_m_cpu" }) }
  lu.assertErrorMsgContains("MmuMap: sip0.cube0.m_cpu is idle_m_cpu, which does not carry MmuMap messages",
                            s.mmu_map, s, { targets = targets(1), entries = { { va = 0, pa = 0, size = 4096 } } })
end

-- Closing a simulation with an operation in flight frees it (ASan checks).
function TestDevice:test_closing_with_a_map_in_flight()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  s:mmu_map { targets = targets(8), entries = { { va = 0, pa = 0, size = 4096 } } }
  s:run(0.05)
  s:close()
end

-- Fabric requests and control messages in flight are listed together: one
-- that completes between the others leaves the rest listed, and closing
-- frees both kinds (ASan checks).
function TestDevice:test_closing_with_requests_and_maps_in_flight()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  local big = s:memory_write { sip = 0, cube = 0, pe = 0, nbytes = 1 << 20 }
  local map = s:mmu_map { targets = targets(8), entries = { { va = 0, pa = 0, size = 4096 } } }
  local small = s:memory_write { sip = 0, cube = 0, pe = 1, nbytes = 64 }
  while not small:triggered() do s:step() end
  lu.assertTrue(small:triggered())
  lu.assertFalse(big:triggered())
  lu.assertFalse(map:triggered())
  s:close()
end
