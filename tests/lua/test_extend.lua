--- Hardware extended from Lua: latency models replacing builtin formulas,
-- whole components written in Lua (ZeroRouter, the FR-FCFS HBM controller),
-- their errors, dropped transactions, determinism and load failures.
local lu = require "luaunit"

TestExtend = {}

local ROUTER_OFF = "cube.components.router.attrs.overhead_ns=0"
local ZERO = "cube.components.router.impl=lua:models.zero_router"

-- Latency of a PE DMA write from sip0.cube0.pe0 to cube 1's HBM (crossing
-- routers, UCIe) and of a host write into cube 1 (PCIe, io_noc, UCIe,
-- routers). One flit each: with more, a decode behind the path's slowest
-- link hides behind the flits queued there (docs/decisions.md).
local function latencies(sets)
  local t = kb.topology.load("small_2x2", sets)
  local s = sim.new { topology = t }
  local dma = s:pe_dma { sip = 0, cube = 0, pe = 0, dst = { sip = 0, cube = 1, pe = 3, offset = 0 }, nbytes = 256 }
  s:run()
  local host = s:memory_write { sip = 0, cube = 1, pe = 2, offset = 0, nbytes = 256 }
  s:run()
  return dma:value(), host:value(), t
end

local function routers_on(path)
  local n = 0
  for _, id in ipairs(path) do
    if id:match("%.r%d+c%d+$") then n = n + 1 end
  end
  return n
end

function TestExtend:test_zero_router_removes_exactly_the_router_overheads()
  local dma_b, host_b, t = latencies {}
  local dma_z, host_z = latencies { ZERO, ROUTER_OFF }
  local oh = t:node("sip0.cube0.r0c0").attrs.overhead_ns
  lu.assertTrue(oh > 0)
  -- a write's data leg crosses the routers of its path, its acknowledgement the same routers back
  lu.assertAlmostEquals(dma_b.latency_ns - dma_z.latency_ns, oh * 2 * routers_on(dma_b.path), 1e-9)
  -- host writes complete at the controller: one leg; io_noc and UCIe (other impls) keep their overheads
  lu.assertAlmostEquals(host_b.latency_ns - host_z.latency_ns, oh * routers_on(host_b.path), 1e-9)
  -- and the Lua router is exactly the builtin with overhead 0
  local dma_0, host_0 = latencies { ROUTER_OFF }
  lu.assertEquals(dma_0.latency_ns, dma_z.latency_ns)
  lu.assertEquals(host_0.latency_ns, host_z.latency_ns)
end

function TestExtend:test_zero_router_insists_on_no_overhead()
  local s = sim.new { topology = kb.topology.load("small_2x2", { ZERO }) }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "component sip0.cube0.r")
  lu.assertStrContains(tostring(err), "a ZeroRouter has no overhead")
end

function TestExtend:test_systolic_model_lengthens_gemm_by_its_formula()
  local function dot_ns(sets)
    local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe", sets) }
    local t
    torch.launch(function(tl)
      local a, b = tl.zeros({ 128, 256 }), tl.zeros({ 256, 128 })
      local t0 = torch.now_ns()
      tl.dot(a, b)
      t = torch.now_ns() - t0
    end, 1)
    torch.close()
    return t
  end
  local builtin = dot_ns {}
  local systolic = dot_ns { "cube.pe_template.components.pe_gemm.latency_model=lua:models.systolic_gemm" }
  -- 16 blocks of 32 x 32: builtin 16 * 64 cycles; systolic 16 * (64 + 4) + (32 + 32 - 2)
  lu.assertEquals(systolic - builtin, 16 * 4 + 62)
end

function TestExtend:test_a_latency_model_error_names_node_query_and_traceback()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute("mkdir -p " .. dir .. "/lm")
  local f = assert(io.open(dir .. "/lm/bad.lua", "w"))
  f:write("return function(q) if q.op == 'gemm' then error('no such array') end return q.builtin_ns end\n")
  f:close()
  package.path = dir .. "/?.lua;" .. package.path
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe",
    { "cube.pe_template.components.pe_gemm.latency_model=lua:lm.bad" }) }
  local ok, err = pcall(torch.launch, function(tl) tl.dot(tl.zeros({ 2, 2 }), tl.zeros({ 2, 2 })) end, 1)
  torch.close()
  os.execute("rm -rf " .. dir)
  lu.assertFalse(ok)
  err = tostring(err)
  lu.assertStrContains(err, "sip0.cube0.pe0.pe_gemm (builtin.pe_gemm)")
  lu.assertStrContains(err, "latency model lm.bad failed on gemm")
  lu.assertStrContains(err, "no such array")
  lu.assertStrContains(err, "stack traceback")
end

function TestExtend:test_a_module_that_does_not_load_names_its_path_and_error()
  local ok, err = pcall(kb.topology.load, "small_2x2", { "cube.components.router.impl=lua:models.nope" })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "implementation lua:models.nope does not load")
  lu.assertStrContains(tostring(err), "models/nope.lua")
  ok, err = pcall(kb.topology.load, "small_2x2", { "cube.pe_template.components.pe_math.latency_model=lua:models.nope" })
  lu.assertTrue(ok) -- a latency model loads with a simulation
  ok, err = pcall(sim.new, { topology = err })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "latency model 'models.nope' does not load")
end

-- A registered Lua component on every router: `body` is its loop's step.
local function with_router(name, body, attrs)
  kb.components.register(name, { flit_aware = true, kinds = "noc_router", attrs = attrs or { overhead_ns = 0 },
                                 run = function(self) while true do body(self, self:receive()) end end })
  return kb.topology.load("small_2x2", { "cube.components.router.impl=" .. name, ROUTER_OFF })
end

-- Message kinds a Lua definition declares: one component sends them, another
-- receives them by name; a builtin with no use for them says so.
function TestExtend:test_lua_components_send_their_own_message_kinds()
  local got = {}
  kb.components.register("pinger", { kinds = "m_cpu", messages = { "Ping", "Pong" }, attrs = { overhead_ns = 0 },
    run = function(self)
      self:sleep(10)
      for i = 1, 3 do self:send { kind = "Ping", dst = "sip0.cube0.sram", view = "all", nbytes = 64 * i, tag = i } end
      self:send { kind = "Pong", dst = "sip0.cube0.sram", view = "all" }
      while true do self:receive() end
    end })
  kb.components.register("ponger", { kinds = "sram", attrs = { overhead_ns = 0, size_mb = 32 },
    run = function(self)
      while true do
        local m = self:receive()
        got[#got + 1] = { m.kind, m.tag, m.nbytes, m.src, self:now() }
        m:finish()
      end
    end })
  local t = kb.topology.load("small_1cube_8pe", { "cube.components.m_cpu.impl=pinger",
                                                  "cube.components.sram.impl=ponger" })
  local s = sim.new { topology = t }
  s:run()
  lu.assertEquals(#got, 4)
  for i = 1, 3 do
    lu.assertEquals({ got[i][1], got[i][2], got[i][3], got[i][4] }, { "Ping", i, 64 * i, "sip0.cube0.m_cpu" })
  end
  lu.assertEquals(got[4][1], "Pong")
  lu.assertTrue(got[1][5] > 10)
  -- undeclared kinds, and a message no builtin takes
  kb.components.register("bad_pinger", { kinds = "m_cpu", messages = { "Ping" }, attrs = { overhead_ns = 0 },
    run = function(self) self:send { kind = "Hello", dst = "sip0.cube0.sram", view = "all" } end })
  s = sim.new { topology = kb.topology.load("small_1cube_8pe", { "cube.components.m_cpu.impl=bad_pinger" }) }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "declares no message kind 'Hello'")
  kb.components.register("hbm_pinger", { kinds = "m_cpu", messages = { "Ping" }, attrs = { overhead_ns = 0 },
    run = function(self)
      self:send { kind = "Ping", dst = "sip0.cube0.hbm_ctrl.pe0", view = "all" }
      while true do self:receive() end
    end })
  s = sim.new { topology = kb.topology.load("small_1cube_8pe", { "cube.components.m_cpu.impl=hbm_pinger" }) }
  ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "sip0.cube0.hbm_ctrl.pe0 (builtin.hbm_ctrl)")
  lu.assertStrContains(tostring(err), "received a Ping (transaction #1 from sip0.cube0.m_cpu), which is not a memory access")
  ok, err = pcall(kb.components.register, "dup", { messages = { "A", "A" }, run = function() end })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "messages[2] must be a new message kind name")
end

function TestExtend:test_a_component_error_names_node_time_message_and_traceback()
  local t = with_router("exploding_router", function(self, m)
    if m.kind == "DmaWrite" or m.kind == "dma_write" or m.bytes > 0 then error("cannot route " .. m.kind) end
    m:forward()
  end)
  local s = sim.new { topology = t }
  s:pe_dma { sip = 0, cube = 0, pe = 0, dst = { sip = 0, cube = 1, pe = 3, offset = 0 }, nbytes = 512 }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  err = tostring(err)
  lu.assertStrContains(err, "component sip0.cube0.r")
  lu.assertStrContains(err, "exploding_router")
  lu.assertStrContains(err, "at t=")
  lu.assertStrContains(err, "while handling flit 1/2 of transaction #")
  lu.assertStrContains(err, "stack traceback")
end

function TestExtend:test_a_dropped_transaction_shows_in_the_quiescence_report()
  local t = with_router("leaky_router", function(self, m)
    if m.bytes == 0 or m.id ~= 1 then m:forward() end -- swallows transaction #1's data
  end)
  local s = sim.new { topology = t }
  s:spawn { name = "sender", fn = function()
    s:pe_dma { sip = 0, cube = 0, pe = 0, dst = { sip = 0, cube = 1, pe = 3, offset = 0 }, nbytes = 256 }:wait()
  end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "deadlock")
  lu.assertStrContains(tostring(err), "component sip0.cube0.r")
  lu.assertStrContains(tostring(err), "leaky_router")
end

function TestExtend:test_lua_hbm_controller_keeps_every_byte_and_completes_everything()
  local torch = kb.torch { topology = kb.topology.load("small_2x2",
    { "cube.components.hbm_ctrl.impl=lua:models.frfcfs_hbm" }), data_mode = "data" }
  torch.manual_seed(9)
  local x = torch.randn({ 256, 96 }, { dtype = "f16" })
  local dp = torch.DPPolicy { cube = "row_wise", pe = "column_wise" }
  local d = torch.to_device(x, dp)
  lu.assertTrue(torch.equal(d:cpu(), x))
  -- kernels through it too: load, compute, store, read back
  local y = torch.empty({ 256, 96 }, { dtype = "f16", dp = dp })
  torch.launch(function(tl, px, py)
    local n = 256 * 96 * 2 // (4 * 8)
    local off = (tl.program_id(1) * 8 + tl.program_id(0)) * n
    tl.store(py + off, tl.exp(tl.load(px + off, { n // 2 }, "f16")))
  end, { 8, 4 }, d, y)
  torch.verify("exp through the Lua HBM controller", y:cpu(), torch.exp(x:float()):half())
  torch.synchronize()
  lu.assertEquals(torch.sim:stats().pending, 0)
  torch.close()
end

function TestExtend:test_runs_with_lua_components_are_deterministic()
  local function run()
    local t = kb.topology.load("small_2x2", { ZERO, ROUTER_OFF, "cube.components.hbm_ctrl.impl=lua:models.frfcfs_hbm" })
    local s = sim.new { topology = t, op_log = true }
    local out = {}
    for pe = 0, 7 do
      s:pe_dma { sip = 0, cube = pe % 4, pe = pe, dst = { sip = 0, cube = (pe + 1) % 4, pe = 7 - pe, offset = pe * 4096 },
                 nbytes = 4096 + 512 * pe }
    end
    s:run()
    for _, r in ipairs(s:op_log().records) do
      out[#out + 1] = ("%s %s %.3f %.3f"):format(r.component, r.op_name, r.t_start_ns, r.t_end_ns)
    end
    out[#out + 1] = tostring(s:stats().events)
    return table.concat(out, "\n")
  end
  lu.assertEquals(run(), run())
end

function TestExtend:test_the_repl_can_step_and_look_inside()
  local torch = kb.torch { topology = kb.topology.load("small_1cube_8pe") }
  local s = torch.sim
  local d = torch.empty({ 256, 256 }, { dtype = "f16", dp = torch.DPPolicy {} })
  torch.synchronize()
  local h = torch.launch_async(function(tl, p)
    local c = tl.composite { op = "gemm", a = tl.ref(p, { 256, 256 }), b = tl.ref(p, { 256, 256 }), out_ptr = p }
    tl.wait(c)
    tl.load(p, { 64 }, "f16")
  end, 1, d)
  s:run(s:now() + 300) -- part of the way
  local st = s:pe_state(0, 0, 0)
  lu.assertEquals(st.composites, 1)
  lu.assertTrue(st.tiles_left > 0 and st.tiles_left < 8 * 8 * 4) -- some of the 256 tiles done
  lu.assertTrue(st.rf_used_bytes > 0 and st.rf_used_bytes <= st.rf_bytes)
  lu.assertNotNil(st.lanes.DMA_READ)
  local flying = s:in_flight()
  lu.assertTrue(#flying >= 1)
  lu.assertEquals(flying[1].kind, "PeDmaRead")
  lu.assertEquals(#s:in_flight("sip0.cube0.pe0.pe_dma", "sip0.cube0.r0c0"), #flying)
  lu.assertEquals(#s:in_flight("sip0.cube0.pe7.pe_dma", "sip0.cube0.r0c0"), 0)
  lu.assertEquals(s:step(10), 10)
  local c = s:component("sip0.cube0.pe0.pe_dma")
  lu.assertEquals(c.impl, "builtin.pe_dma")
  lu.assertTrue(c.txns > 0)
  lu.assertEquals(c.read.in_flight, 1) -- the composite's next tile read holds the read channel
  lu.assertEquals(c.write.queued, 0)
  torch.wait(h)
  lu.assertEquals(s:pe_state(0, 0, 0).composites, 0)
  lu.assertEquals(#s:in_flight(), 0)
  torch.close()
end

function TestExtend:test_a_lua_component_reports_its_queue()
  kb.components.register("slow_router", { flit_aware = true, kinds = "noc_router", attrs = { overhead_ns = 0, delay_ns = 5 },
    run = function(self)
      while true do
        local m = self:receive()
        self:sleep(self.attrs.delay_ns)
        m:forward()
      end
    end })
  local s = sim.new { topology = kb.topology.load("small_2x2", { "cube.components.router.impl=slow_router", ROUTER_OFF }) }
  s:pe_dma { sip = 0, cube = 0, pe = 0, dst = { sip = 0, cube = 1, pe = 3, offset = 0 }, nbytes = 2048 }
  s:run(12)
  local path = s:topology():path("sip0.cube0.pe0.pe_dma", "sip0.cube1.hbm_ctrl.pe3")
  local r = s:component(path[2])
  lu.assertEquals(r.impl, "slow_router")
  lu.assertTrue(r.held >= 1, "it holds the flit it is delaying")
  lu.assertTrue(r.queued >= 1, "later flits wait in its inbox")
  s:run()
  lu.assertEquals(s:component(path[2]).held, 0)
end

function TestExtend:test_a_pe_engine_cannot_be_a_lua_component()
  kb.components.register("lua_gemm", { kinds = "pe_gemm", attrs = { overhead_ns = 0 },
                                       run = function(self) while true do self:receive():forward() end end })
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe", { "cube.pe_template.components.pe_gemm.impl=lua_gemm" }) }
  local ok, err = pcall(torch.launch, function() end, 1)
  torch.close()
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "sip0.cube0.pe0.pe_gemm is lua_gemm: a PE engine must be its builtin")
end

function TestExtend:test_a_dma_that_cannot_start_fails_its_call_naming_kernel_pe_and_time()
  kb.components.register("lua_dma", { kinds = "pe_dma", attrs = { overhead_ns = 0, rd_engines = 1, wr_engines = 1 },
                                      run = function(self) while true do self:receive():forward() end end })
  local t = kb.topology.load("small_1cube_1pe", { "cube.pe_template.components.pe_dma.impl=lua_dma" })
  local torch = kb.torch { topology = t }
  local one = torch.DPPolicy {}
  local x = torch.empty({ 16 }, { dtype = "f16", dp = one })
  local ok, err = pcall(torch.launch, function(tl, px) tl.load(px, { 16 }, "f16") end, 1, x)
  torch.close()
  lu.assertFalse(ok)
  -- the DMA stage's refusal, raised at the call with where and when it happened
  lu.assertStrContains(tostring(err), "tl.load on sip0.cube0.pe0 (kernel '")
  lu.assertStrContains(tostring(err), "' at t=")
  lu.assertStrContains(tostring(err), "sip0.cube0.pe0.pe_dma is not a PE DMA engine (lua_dma)")
end
