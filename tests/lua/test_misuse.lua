--- What a user did wrong, said plainly: freeing a device tensor twice,
-- using a freed one (on the host and in a launch), a host tensor where a
-- device tensor is needed and the reverse, a non-tensor where a tensor is
-- needed, methods called with '.' instead of ':', and wrong argument types
-- to the torch and tl functions: each an error naming the function and the
-- argument, never Lua's "attempt to index a nil value".
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
