--- What a user did wrong, said plainly: freeing a device tensor twice,
-- using a freed one (on the host and in a launch), a host tensor where a
-- device tensor is needed and the reverse, a non-tensor where a tensor is
-- needed, methods called with '.' instead of ':', and wrong argument types
-- to the torch and tl functions: each an error naming the function and the
-- argument, never Lua's "attempt to index a nil value"; and a key of an
-- options table that no code reads (a typo), named with the function.
local lu = require "luaunit"

TestMisuse = {}

local function runtime(topo)
  return kb.torch { topology = kb.topology.load(topo or "small_1cube_8pe") }
end

-- No message may be one of Lua's internal ones (Lua's own "bad argument #1
-- to 'f' (... expected)" names the function and argument: it may stay).
local function assert_plain(err)
  for _, internal in ipairs { "attempt to index", "attempt to perform arithmetic", "attempt to call",
                              "attempt to get length", "attempt to compare", "to 'math'" } do
    lu.assertNil(err:find(internal, 1, true), "internal message: " .. err)
  end
end

local function error_of(f, ...)
  local ok, err = pcall(f, ...)
  lu.assertFalse(ok, "the call should fail")
  err = tostring(err)
  assert_plain(err)
  return err
end

function TestMisuse:test_freeing_a_device_tensor_twice_is_an_error()
  local torch = runtime()
  local d = torch.empty({ 2, 2 }, { dp = torch.DPPolicy {}, name = "w" })
  d:free()
  lu.assertStrContains(error_of(d.free, d), "torch: free of w: it was freed already (a device tensor is freed once)")
  torch.synchronize()
  lu.assertTrue(torch.allocators_pristine())
  torch.close()
end

function TestMisuse:test_using_a_freed_tensor_is_an_error_on_the_host_and_in_a_launch()
  local torch = runtime()
  local d = torch.empty({ 2, 2 }, { dp = torch.DPPolicy {}, name = "w" })
  d:free()
  lu.assertStrContains(error_of(d.cpu, d), "torch: cpu of w after it was freed")
  lu.assertStrContains(error_of(d.copy_, d, torch.zeros({ 2, 2 })), "torch: copy_ of w after it was freed")
  local err = error_of(torch.launch, function() end, 1, d)
  lu.assertStrContains(err, "torch.launch: argument 1 (device tensor 'w') was freed: a kernel cannot use it")
  lu.assertNil(err:find("launch.lua", 1, true)) -- the error points at the caller, not the runtime
  torch.close()
end

function TestMisuse:test_host_and_device_tensors_in_each_others_place()
  local torch = runtime()
  local h = torch.zeros({ 2, 2 })
  local d = torch.empty({ 2, 2 }, { dp = torch.DPPolicy {}, name = "w" })
  lu.assertStrContains(error_of(torch.launch, function() end, 1, h),
    "torch.launch: argument 1 is a host tensor (place it on the device first")
  lu.assertStrContains(error_of(d.copy_, d, d),
    "torch: copy_ into w from device tensor 'w': the source must be a host tensor (read a device tensor back with "
    .. ":cpu() first)")
  lu.assertStrContains(error_of(torch.to_device, d, torch.DPPolicy {}),
    "torch.to_device: argument 1 must be a host tensor, got device tensor 'w' (it is on the device already)")
  lu.assertStrContains(error_of(torch.matmul, d, h),
    "a host tensor expected, got a device tensor (read it back with d:cpu() first)")
  lu.assertStrContains(error_of(d.cpu, h), "torch: DeviceTensor:cpu() called on a host tensor")
  lu.assertStrContains(error_of(d.free, h), "torch: DeviceTensor:free() called on a host tensor")
  lu.assertStrContains(error_of(torch.verify, "C", h, d),
    "torch.verify(C): got must be a host or device tensor and expected a host tensor, got a host tensor and "
    .. "device tensor 'w'")
  torch.close()
end

function TestMisuse:test_methods_called_with_a_dot_say_so()
  local torch = runtime()
  local d = torch.empty({ 2, 2 }, { dp = torch.DPPolicy {}, name = "w" })
  lu.assertStrContains(error_of(d.cpu), "torch: DeviceTensor:cpu() called on nil: call it as d:cpu(...)")
  lu.assertStrContains(error_of(d.copy_, torch.zeros({ 2, 2 })), "DeviceTensor:copy_() called on a host tensor")
  lu.assertStrContains(error_of(d.free), "torch: DeviceTensor:free() called on nil: call it as d:free()")
  torch.close()
end

function TestMisuse:test_wrong_arguments_to_torch_functions_name_the_function_and_argument()
  local torch = runtime()
  local dp = torch.DPPolicy {}
  local cases = {
    { "torch.empty: the shape must be a table of sizes like {64, 128}, got nil", torch.empty, nil, { dp = dp } },
    { "torch.empty: dp must be a DPPolicy{...}, got a table", torch.empty, { 2 }, { dp = {} } },
    { "torch.empty: name must be a string, got number", torch.empty, { 2 }, { dp = dp, name = 5 } },
    { "torch.to_device: argument 1 must be a host tensor, got nil", torch.to_device, nil, dp },
    { "torch.to_device: argument 2 must be a DPPolicy{...} (or nil: replicated), got a string",
      torch.to_device, torch.zeros({ 2 }), "row_wise" },
    { "torch.wait: expected a handle (from copy_, launch_async, d.mapped), an event or a process, got nil",
      torch.wait, nil },
    { "got a table", torch.wait, {} },
    { "torch.manual_seed: the seed must be an integer, got a string", torch.manual_seed, "7" },
    { "torch.alloc_tcm: nbytes must be an integer >= 0, got -1", torch.alloc_tcm, 0, 0, 0, -1 },
    { "torch.alloc_tcm: sip must be an integer >= 0, got nil", torch.alloc_tcm },
    { "torch.free_tcm: offset must be an integer >= 0, got 0.5", torch.free_tcm, 0, 0, 0, 0.5 },
    { "torch.translate: no PE sip0.cube0.pe99: the topology has 1 SIP(s) of 1 cube(s) of 8 PE(s)",
      torch.translate, 0, 0, 99, 0 },
    { "torch.verify(x): got must be a host or device tensor and expected a host tensor", torch.verify, "x", nil, nil },
  }
  for _, c in ipairs(cases) do
    lu.assertStrContains(error_of(table.unpack(c, 2)), c[1])
  end
  local d = torch.empty({ 2, 2 }, { dp = dp, name = "w" })
  lu.assertStrContains(error_of(d.copy_, d, nil), "torch: copy_ into w from nil: the source must be a host tensor")
  lu.assertStrContains(error_of(d.copy_, d, 5), "torch: copy_ into w from a number")
  torch.close()
end

-- The tl calls a kernel makes: each wrong argument gets the call's name.
function TestMisuse:test_wrong_arguments_to_tl_calls_name_the_call()
  local cases = {
    { "tl.dot: options must be a table {out_dtype = ...}, got number",
      function(tl) tl.dot(tl.zeros({ 2, 2 }), tl.zeros({ 2, 2 }), 5) end },
    { "tl.softmax: the axis must be an integer, got string", function(tl) tl.softmax(tl.zeros({ 2 }), "x") end },
    { "tl.sum: the axis must be an integer, got 0.5", function(tl) tl.sum(tl.zeros({ 2 }), 0.5) end },
    { "tl.full: the value must be a number or a boolean, got nil", function(tl) tl.full({ 2 }, nil) end },
    { "tl.wait: expected a composite handle (from tl.composite), a tensor handle or nothing, got number",
      function(tl) tl.wait(5) end },
    { "tl.composite: tile_shape must be {tm, tk, tn} (gemm) or {tm, tn} (math)",
      function(tl, p) tl.composite { op = "math", math_op = "exp", a = tl.zeros({ 2, 2 }), out_ptr = p, tile_shape = {} } end },
    { "tl.arange: start must be an integer, got nil", function(tl) tl.arange(nil, 4) end },
    { "tl.load: the pointer must be an integer address", function(tl) tl.load(nil, { 4 }) end },
    { "tl.store: the value must be a tensor handle", function(tl, p) tl.store(p, nil) end },
  }
  for _, c in ipairs(cases) do
    local torch = runtime("small_1cube_1pe")
    local a = torch.empty({ 4, 4 }, { dp = torch.DPPolicy {}, name = "a" })
    local err = error_of(torch.launch, { name = "k", fn = c[2] }, 1, a)
    lu.assertStrContains(err, c[1])
    torch.close()
  end
end

-- ---- option tables: a key nobody reads is an error ----
-- Each function that takes an options table (the C bindings'
-- lbind_check_keys, the Lua modules' kernbench.options): an unknown key is
-- an error naming the function and the key, never a quiet default
-- (s:store{capcity = 3} made an unbounded store); booleans refuse other
-- types. test_option_keys_documented_keys_still_work passes every
-- documented key.

local pool = require "kernbench.procpool"
local tc = require "kernbench.tensor_c"
local pe_c = require "kernbench.pe_c"

local function refuses(call, key, f, ...)
  local err = error_of(f, ...)
  lu.assertStrContains(err, call .. ": unknown ")
  lu.assertStrContains(err, key)
  return err
end

function TestMisuse:test_option_keys_of_the_simulation_bindings()
  local s = sim.new()
  lu.assertStrContains(refuses("s:store()", "'capcity'", s.store, s, { capcity = 3 }),
    "s:store(): unknown option 'capcity' (its options are {capacity =, name =})")
  refuses("s:resource()", "'capcity'", s.resource, s, { capcity = 3 })
  lu.assertStrContains(refuses("s:container()", "'capcity'", s.container, s, { capcity = 3 }),
    "(its options are {capacity =, init =, name =})")
  refuses("s:priority_resource()", "'capcity'", s.priority_resource, s, { capcity = 3 })
  refuses("s:preemptive_resource()", "'capcity'", s.preemptive_resource, s, { capcity = 3 })
  refuses("s:priority_store()", "'capcity'", s.priority_store, s, { capcity = 3 })
  refuses("s:filter_store()", "'capcity'", s.filter_store, s, { capcity = 3 })
  refuses("s:store()", "[1]", s.store, s, { 3, capacity = 3 }) -- a key that is not a string
  refuses("s:spawn{}", "'deamon'", s.spawn, s, { fn = function() end, deamon = true })
  lu.assertStrContains(error_of(s.spawn, s, { fn = function() end, daemon = "yes" }),
    "s:spawn{}: field 'daemon' must be a boolean, got string")
  local r = s:preemptive_resource(1)
  refuses("r:request()", "'prio'", r.request, r, { prio = 1 })
  lu.assertStrContains(error_of(r.request, r, { preempt = 1 }), "r:request(): field 'preempt' must be a boolean")
  refuses("sim.new", "'topolgy'", sim.new, { topolgy = 1 })
  refuses("procpool.run", "'job'", pool.run, {}, { job = 2 })
  refuses("procpool.run", "'stdot'", pool.run, { { argv = { "true" }, stdot = "x" } })
  refuses("procpool.spawn", "'stout'", pool.spawn, { "true" }, { stout = "x" })
  lu.assertStrContains(error_of(pool.spawn, { "true" }, { group = 1 }), "procpool.spawn: field 'group' must be a boolean")
  s:close()
end

function TestMisuse:test_option_keys_of_the_model_bindings()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe") }
  local t = s:topology()
  lu.assertStrContains(refuses("s:stats", "'extra'", s.stats, s, { extra = 1 }),
    "(its options are {requests =, totals =})")
  lu.assertStrContains(error_of(s.stats, s, { totals = "yes" }), "s:stats: field 'totals' must be a boolean, got string")
  refuses("s:memory_write{}", "'ofset'", s.memory_write, s, { sip = 0, cube = 0, pe = 0, ofset = 64, nbytes = 64 })
  refuses("s:memory_read{}", "'hop'", s.memory_read, s, { pa = 0, nbytes = 64, hop = true })
  lu.assertStrContains(error_of(s.memory_read, s, { sip = 0, cube = 0, pe = 0, nbytes = 64, data = "yes" }),
    "s:memory_read{}: field 'data' must be a boolean")
  lu.assertStrContains(error_of(s.memory_write, s, { sip = 0, cube = 0, pe = 0, nbytes = 64, dst = tc.zeros(16) }),
    "s:memory_write{}: 'dst' is for reads; use 'src'") -- the wrong direction keeps its own message
  refuses("s:pe_dma{}", "'writ'", s.pe_dma, s, { sip = 0, cube = 0, pe = 0, nbytes = 64, writ = false, dst_pa = 0 })
  lu.assertStrContains(refuses("s:pe_dma{}", "'ofset'", s.pe_dma, s,
    { sip = 0, cube = 0, pe = 0, nbytes = 64, dst = { sip = 0, cube = 0, pe = 1, ofset = 0 } }),
    "unknown field 'ofset' (dst's fields are {sip =, cube =, pe =, offset =})")
  lu.assertStrContains(error_of(s.pe_dma, s, { sip = 0, cube = 0, pe = 0, nbytes = 64, dst_pa = 0, write = 0 }),
    "s:pe_dma{}: field 'write' must be a boolean")
  refuses("s:transfer{}", "'relais'", s.transfer, s,
    { src = "sip0.io0.io_cpu", dst = "sip0.cube0.sram", nbytes = 0, relais = true })
  local target = { sip = 0, cube = 0, pe = 0 }
  refuses("s:mmu_map{}", "'lable'", s.mmu_map, s, { targets = { target }, entries = {}, lable = "x" })
  refuses("s:mmu_map{}", "'site'", s.mmu_map, s, { targets = { target }, entries = { { va = 0, pa = 0, site = 64 } } })
  refuses("s:mmu_unmap{}", "'label'", s.mmu_unmap, s, { targets = { target }, entries = { { va = 0, size = 64 } },
                                                        label = "x" })
  lu.assertStrContains(refuses("s:mmu_unmap{}", "'cubes'", s.mmu_unmap, s,
    { targets = { { sip = 0, cubes = 0, pe = 0 } }, entries = { { va = 0, size = 64 } } }),
    "unknown field 'cubes' (a target's fields are {sip =, cube =, pe =})")
  local plan = { buffer_kind = "tcm", backpressure = "sleep", n_slots = 1, slot_size = 16 }
  refuses("s:ipcq_install{}", "'slots'", s.ipcq_install, s,
    { buffer_kind = "tcm", backpressure = "sleep", n_slots = 1, slot_size = 16, pes = { target }, slots = 2 })
  plan.pes = { { sip = 0, cube = 0, pe = 0, dirs = { { name = "E", peer = 0, peer_dir = 0, rx_pa = 0, tx = 1 } } } }
  refuses("s:ipcq_install{}", "'tx'", s.ipcq_install, s, plan)
  refuses("s:launch{}", "'pa_fallbak'", s.launch, s, { name = "k", body = function() end, grid = { pes = 1, cubes = 1 },
                                                        targets = { target }, pa_fallbak = true })
  refuses("s:launch{} grid", "'cube'", s.launch, s, { name = "k", body = function() end, grid = { pes = 1, cube = 1 },
                                                      targets = { target } })
  lu.assertStrContains(error_of(s.launch, s, { name = "k", body = function() end, grid = { pes = 1, cubes = 1 },
    targets = { target }, data = 1 }), "s:launch{}: field 'data' must be a boolean")
  refuses("pe_c.context", "'scratch'", pe_c.context, s, { sip = 0, cube = 0, pe = 0, scratch_base = 0,
                                                          scratch_size = 64, scratch = 1 })
  refuses("topology:node_at", "'kinds'", t.node_at, t, { kind = "pe_dma", kinds = 1 })
  local a = tc.zeros(2)
  refuses("allclose", "'rtl'", tc.allclose, a, a, { rtl = 1 })
  refuses("isclose", "'equalnan'", tc.isclose, a, a, { equalnan = true })
  lu.assertStrContains(error_of(tc.allclose, a, a, { equal_nan = 1 }), "allclose: field 'equal_nan' must be a boolean")
  refuses("sum", "'keep_dim'", tc.sum, a, { dim = 0, keep_dim = true })
  s:close()
end

function TestMisuse:test_option_keys_in_a_kernel()
  local torch = runtime("small_1cube_1pe")
  local d = torch.zeros({ 4, 4 }, { dp = torch.DPPolicy {}, name = "x" })
  local errs = {}
  torch.launch(function(tl, p)
    local function try(f, ...) local ok, e = pcall(f, ...); errs[#errs + 1] = ok and "" or tostring(e) end
    try(tl.load, { ptr = p, shape = { 4, 4 }, dtype = "f32", dtpye = "f16" })
    try(tl.store, { ptr = p, shape = { 4, 4 }, dtype = "f32", stride = 4 }, tl.zeros({ 4, 4 }, "f32"))
    local h = tl.load(p, { 4, 4 }, "f32")
    try(tl.composite, { op = "gemm", a = h, b = h, out_ptr = p, out_dtpye = "f32" })
    try(tl.composite, { op = "gemm", a = h, b = h, out_ptr = p, epilogue = { { op = "relu", factor = 2 } } })
    try(tl.send, "E", { addr = p, nbytes = 16, bytes = 16 })
    try(tl.recv, "E", { 4 }, "f16", { dts = p })
  end, 1, d)
  lu.assertStrContains(errs[1], "tl.load: unknown field 'dtpye' (a tl.ref's fields are {ptr =, shape =, dtype =})")
  lu.assertStrContains(errs[2], "tl.store: unknown field 'stride'")
  lu.assertStrContains(errs[3], "tl.composite: unknown field 'out_dtpye'")
  lu.assertStrContains(errs[4], "tl.composite: unknown field 'factor' (epilogue[1]'s fields are {op =, scope =})")
  lu.assertStrContains(errs[5], "tl.send: unknown field 'bytes'")
  lu.assertStrContains(errs[6], "tl.recv: unknown option 'dts' (its options are {dst =})")
  torch.close()
end

function TestMisuse:test_option_keys_of_the_lua_functions()
  refuses("kb.torch", "'topolgy'", kb.torch, { topolgy = kb.topology.load("small_1cube_8pe") })
  local torch = runtime()
  refuses("torch.zeros", "'dtpye'", torch.zeros, { 2 }, { dtpye = "f16" })
  refuses("DPPolicy", "'cubes'", torch.DPPolicy, { cubes = "replicate" })
  lu.assertStrContains(refuses("torch.launch", "'cube'", torch.launch, function() end, { pes = 1, cube = 1 }),
    "torch.launch: unknown field 'cube' (the grid's fields are {pes =, cubes =})")
  refuses("torch.launch", "'nam'", torch.launch, { fn = function() end, nam = "k" }, 1)
  refuses("torch.install_ipcq", "'slots'", torch.install_ipcq, { topology = "ring_1d", slots = 4 })
  refuses("torch.install_ipcq", "'cube'", torch.install_ipcq, { topology = "ring_1d", grid = { pes = 2, cube = 1 } })
  refuses("torch.distributed.init_process_group", "'rank'", torch.distributed.init_process_group,
    { backend = "kernbench", rank = 0 })
  refuses("kb.pretty", "'dept'", kb.pretty, {}, { dept = 1 })
  refuses("kb.ccl.predict", "'nbyte'", kb.ccl.predict, { topology = torch.topology, nbyte = 1024 })
  refuses("kb.probe.run", "'cases'", kb.probe.run, { topology = "small_1cube_8pe", cases = "x" })
  torch.close()
  local torch2 = runtime("default")
  torch2.distributed.init_process_group("kernbench")
  local tp = require("kernbench.tp").new(torch2)
  tp.initialize_model_parallel(torch2.distributed.get_world_size())
  refuses("kernbench.tp.ColumnParallelLinear", "'bais'", tp.ColumnParallelLinear, 4, 4, { bais = true })
  refuses("kernbench.tp.RowParallelLinear", "'gather_output'", tp.RowParallelLinear, 4, 4, { gather_output = true })
  lu.assertStrContains(error_of(tp.RowParallelLinear, 4, 4, { bias = 1 }),
    "kernbench.tp.RowParallelLinear: option 'bias' must be a boolean")
  refuses("kernbench.tp.VocabParallelEmbedding", "'padding_idx'", tp.VocabParallelEmbedding, 8, 4, { padding_idx = 0 })
  torch2.close()
end

function TestMisuse:test_option_keys_documented_keys_still_work()
  local s = sim.new { topology = kb.topology.load("small_1cube_8pe"), op_log = false, ipcq_trace = false }
  lu.assertEquals(s:store { capacity = 2, name = "st" }:capacity(), 2)
  s:resource { capacity = 2, name = "r" }
  s:container { capacity = 4, init = 1, name = "c" }
  s:priority_resource { capacity = 1, name = "p" }
  local pr = s:preemptive_resource { capacity = 1, name = "q" }
  s:priority_store { capacity = 1, name = "ps" }
  s:filter_store { capacity = 1, name = "fs" }
  s:spawn { fn = function(x) lu.assertEquals(x, 7) pr:request { priority = 0, preempt = false }:wait() end,
            name = "w", args = { 7 }, daemon = false }
  s:memory_write { sip = 0, cube = 0, pe = 0, offset = 0, nbytes = 4, data = "abcd", hops = true }
  local rd = s:memory_read { pa = kb.addr.pe_hbm(0, 0, 0, 0, s:topology():params().hbm_slice_bytes), nbytes = 4,
                             data = true, hops = false }
  s:memory_write { sip = 0, cube = 0, pe = 0, offset = 64, nbytes = 16, src = tc.zeros({ 2, 2 }), block = { 0, 2, 0, 2 } }
  s:pe_dma { sip = 0, cube = 0, pe = 0, nbytes = 64, write = true, hops = false,
             dst = { sip = 0, cube = 0, pe = 1, offset = 0 } }
  s:pe_dma { sip = 0, cube = 0, pe = 0, nbytes = 64, dst_sram = { sip = 0, cube = 0, offset = 0 } }
  s:transfer { src = "sip0.io0.io_cpu", dst = "sip0.cube0.sram", nbytes = 0, view = "all", relay = false, hops = true }
  s:run()
  lu.assertEquals(rd:value().data, "abcd")
  local st = s:stats { requests = true, totals = false }
  lu.assertNotNil(st.events)
  lu.assertNotNil(s:topology():node_at { kind = "pe_dma", sip = 0, cube = 0, pe = 0 })
  s:close()
  local a = tc.zeros(2)
  lu.assertTrue(tc.allclose(a, a, { rtol = 1e-5, atol = 1e-8, equal_nan = true }))
  lu.assertEquals(tc.sum(tc.zeros({ 2, 2 }), { dim = 0, keepdim = true }).shape, { 1, 2 })
  lu.assertEquals(kb.pretty({ 1 }, { depth = 2, items = 5, values = 5, width = 80, string = 40 }), "{1}")
  local torch = kb.torch { topology = kb.topology.load("small_1cube_8pe"), device = 0, data_mode = "data", data = true,
                           op_log = false, pa_fallback = false }
  local dp = torch.DPPolicy { cube = "replicate", pe = "replicate", num_cubes = 1, num_pes = 1 }
  torch.zeros({ 2 }, { dtype = "f32", dp = dp, name = "z" })
  lu.assertNotNil(torch.launch({ name = "k", fn = function() end }, { pes = 2, cubes = 1 }).result)
  lu.assertNotNil(torch.launch(function() end, { 2, 1 }).result)
  local plan = torch.install_ipcq { topology = "ring_1d", grid = { pes = 2, cubes = 1 }, sip = 0, buffer_kind = "tcm",
                                    n_slots = 2, slot_size = 64, backpressure = "sleep" }
  lu.assertEquals(plan.world, 2)
  lu.assertNotNil(kb.ccl.predict { algorithm = "ring_allreduce", topology = torch.topology, nbytes = 4096,
                                   buffer_kind = "tcm", slot_size = 4096, root = 0 }.predicted_ns)
  torch.close()
end
