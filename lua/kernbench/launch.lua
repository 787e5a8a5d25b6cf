--- Kernel launches (execution-pe-tl.md §1: the host's KernelLaunch message).
--
--   torch.launch(kernel, grid, arg1, arg2, ...) -> handle (after completion)
--   torch.launch_async(kernel, grid, ...)       -> handle (torch.wait it)
--
-- kernel: a function(tl, ...), a module name ("kernels.gemm", loaded with
-- require and returning the function) or {name = , fn = }.
-- grid: N (PEs 0..N-1 of cube 0) or {pes, cubes} (PEs 0..pes-1 of cubes
-- 0..cubes-1) on the current device's SIP; tl.program_id(0) is the PE,
-- tl.program_id(1) the cube, tl.num_programs gives the grid.
-- Arguments: device tensors are passed as their virtual base address (an
-- integer the kernel offsets and loads from); Lua numbers and booleans as
-- scalars. Shapes are not remapped: pass local sizes explicitly.
--
-- The runtime checks the message and sends it (s:launch); the device does
-- the rest (src/comp/device, src/comp/pe/cpu.c): IO_CPU stamps the start
-- barrier (target_start_ns) and fans out to the grid's cubes, each M_CPU to
-- its PEs; every PE_CPU starts the kernel at target_start_ns with a kernel
-- instance, on which the body below runs the kernel function; answers
-- (pe_exec_ns, dma_ns, compute_ns, late_ns) merge by max on the way back.
local options = require "kernbench.options"
local tlmod = require "kernbench.tl"

local M = {}

local SCALAR_DTYPES = { i32 = true, i64 = true, fp16 = true, fp32 = true, bool = true }

--- Why msg is not a valid KernelLaunch message (the spec's schema, and
-- every tensor shard placed on a PE), or nil.
function M.problem(msg)
  if type(msg) ~= "table" then return "the message is not a table" end
  if msg.msg_type ~= "KernelLaunch" then return ("msg_type is %s, not KernelLaunch"):format(tostring(msg.msg_type)) end
  for _, k in ipairs { "correlation_id", "request_id", "target_device" } do
    if type(msg[k]) ~= "string" then return ("envelope field '%s' is missing"):format(k) end
  end
  local kr = msg.kernel_ref
  if type(kr) ~= "table" or type(kr.name) ~= "string" then return "kernel_ref.name is missing" end
  if kr.kind ~= "builtin" and kr.kind ~= "deployed" then return "kernel_ref.kind must be builtin or deployed" end
  if kr.kind == "deployed" and math.type(kr.deploy_pa) ~= "integer" then
    return "kernel_ref.deploy_pa is required for a deployed kernel"
  end
  if type(msg.args) ~= "table" then return "args is missing" end
  for i, a in ipairs(msg.args) do
    if a.arg_kind == "tensor" then
      local shards = a.tensor_pa_map and a.tensor_pa_map.shards
      if type(shards) ~= "table" or #shards == 0 then return ("args[%d]: a tensor without shards"):format(i) end
      for j, sh in ipairs(shards) do
        for _, k in ipairs { "sip", "cube", "pe" } do
          if math.type(sh[k]) ~= "integer" then
            return ("args[%d] shard %d has no placement tag '%s' (every shard needs sip, cube and pe)"):format(i, j, k)
          end
        end
        for _, k in ipairs { "pa", "nbytes", "offset_bytes" } do
          if math.type(sh[k]) ~= "integer" then return ("args[%d] shard %d: field '%s' is missing"):format(i, j, k) end
        end
      end
    elseif a.arg_kind == "scalar" then
      if not SCALAR_DTYPES[a.dtype] then return ("args[%d]: scalar dtype %s is not one of i32, i64, fp16, fp32, bool"):format(i, tostring(a.dtype)) end
    else
      return ("args[%d]: arg_kind must be tensor or scalar"):format(i)
    end
  end
  local fp = msg.failure_policy
  if fp ~= nil and fp ~= "fail_fast" and fp ~= "collect_all" then return "failure_policy must be fail_fast or collect_all" end
  return nil
end

--- The kernel's name and function from what torch.launch was given.
function M.resolve_kernel(kernel)
  if type(kernel) == "function" then
    local info = debug.getinfo(kernel, "S")
    return ("%s:%d"):format(info.short_src, info.linedefined), kernel
  elseif type(kernel) == "string" then
    local ok, v = pcall(require, kernel)
    if not ok then error(("torch.launch: cannot load kernel module '%s': %s"):format(kernel, tostring(v)), 4) end
    if type(v) == "table" then v = v.kernel end
    if type(v) ~= "function" then
      error(("torch.launch: module '%s' must return the kernel function (or a table with field kernel)"):format(kernel), 4)
    end
    return kernel, v
  elseif type(kernel) == "table" and type(kernel.fn) == "function" then
    options.check("torch.launch", kernel, { "name", "fn" }, 4, "the kernel's fields")
    return kernel.name or "kernel", kernel.fn
  end
  error(("torch.launch: the kernel must be a function, a module name or {name=, fn=} (got %s)"):format(type(kernel)), 4)
end

--- The grid {pes=, cubes=} from N or {pes, cubes}, checked against P.
function M.resolve_grid(grid, P, call)
  call = call or "torch.launch"
  local pes, cubes
  if math.type(grid) == "integer" then
    pes, cubes = grid, 1
  elseif type(grid) == "table" then
    options.check(call, grid, { "pes", "cubes" }, 4, "the grid's fields", true)
    pes, cubes = grid[1] or grid.pes, grid[2] or grid.cubes or 1
  end
  if math.type(pes) ~= "integer" or math.type(cubes) ~= "integer" or pes < 1 or cubes < 1 then
    error(("%s: the grid must be N or {pes, cubes} with positive integers (got %s)"):format(call,
      type(grid) == "table" and "{" .. tostring(grid[1]) .. ", " .. tostring(grid[2]) .. "}" or tostring(grid)), 4)
  end
  if pes > P.pes_per_cube then
    error(("%s: grid asks for %d PEs per cube, the topology has %d"):format(call, pes, P.pes_per_cube), 4)
  end
  if cubes > P.cubes_per_sip then
    error(("%s: grid asks for %d cubes, the topology has %d per SIP"):format(call, cubes, P.cubes_per_sip), 4)
  end
  return { pes = pes, cubes = cubes }
end

local function tensor_arg(i, t)
  local shards = {}
  for _, sh in ipairs(t.shards) do
    shards[#shards + 1] = { sip = sh.sip, cube = sh.cube, pe = sh.pe, pa = sh.pa, nbytes = sh.nbytes,
                            offset_bytes = sh.offset_bytes }
  end
  if t.freed then
    error(("torch.launch: argument %d (device tensor '%s') was freed: a kernel cannot use it"):format(i, t.name), 5)
  end
  return { arg_kind = "tensor", tensor_pa_map = { shards = shards }, va_base = t.va_base, name = t.name }
end

--- The message's args, and what the launch must wait for: host
-- operations are ordered, so a launch is submitted once its tensor
-- arguments are mapped and their pending writes have landed.
local function build_args(rt, args)
  local out, pending = {}, {}
  for i = 1, args.n do
    local a = args[i]
    if type(a) == "table" and a.shards and a.va_base then
      out[i] = tensor_arg(i, a)
      for _, h in ipairs(a.pending or {}) do pending[#pending + 1] = h.finished end
      a.pending = {}
    elseif math.type(a) == "integer" then
      out[i] = { arg_kind = "scalar", dtype = "i64", value = a }
      local d = rt:tensor_at(a) -- an address into a tensor: its writes land first too
      if d then
        for _, h in ipairs(d.pending or {}) do pending[#pending + 1] = h.finished end
        d.pending = {}
      end
    elseif math.type(a) == "float" then
      out[i] = { arg_kind = "scalar", dtype = "fp32", value = a }
    elseif type(a) == "boolean" then
      out[i] = { arg_kind = "scalar", dtype = "bool", value = a }
    else
      local what = (type(a) == "userdata" and tostring(a):match("^tensor")) and
        "a host tensor (place it on the device first: torch.to_device(t, dp) or dp= at creation)" or type(a)
      error(("torch.launch: argument %d is %s; arguments are device tensors, numbers and booleans"):format(i, what), 4)
    end
  end
  return out, pending
end

--- torch.submit_launch(msg, fn): submits a checked KernelLaunch message; fn
-- runs on every targeted PE. Returns a handle whose value is the merged
-- answer.
function M.submit_launch(rt, msg, fn)
  local s, P = rt.s, rt.P
  local why = M.problem(msg)
  if why then error("KernelLaunch rejected: " .. why, 2) end
  if msg.failure_policy == "collect_all" then
    error("KernelLaunch: failure_policy collect_all is not implemented: a kernel error stops the run " ..
          "(fail_fast)", 2)
  end
  if msg.kernel_ref.kind == "deployed" then
    error("KernelLaunch: deployed kernels (a binary placed in memory) are not modelled: kernels are Lua " ..
          "functions, kernel_ref.kind = builtin", 2)
  end
  if type(fn) ~= "function" then error("torch.submit_launch: the kernel function is missing", 2) end
  local sip = tonumber(msg.target_device:match("^sip:(%d+)$"))
  if not sip or sip >= P.sips then error(("KernelLaunch rejected: target_device %s"):format(msg.target_device), 2) end
  -- Which PEs: the grid if given, else every (cube, pe) owning a shard on this SIP.
  local grid, targets = msg.grid, {}
  if grid then
    grid = M.resolve_grid({ grid.pes, grid.cubes }, P, "KernelLaunch")
    for cube = 0, grid.cubes - 1 do
      for pe = 0, grid.pes - 1 do targets[#targets + 1] = { sip = sip, cube = cube, pe = pe } end
    end
  else
    local seen, maxpe, maxcube = {}, 0, 0
    for _, a in ipairs(msg.args) do
      for _, sh in ipairs(a.arg_kind == "tensor" and a.tensor_pa_map.shards or {}) do
        local key = sh.cube * P.pes_per_cube + sh.pe
        if sh.sip == sip and not seen[key] then
          seen[key] = true
          targets[#targets + 1] = { sip = sip, cube = sh.cube, pe = sh.pe }
          maxpe, maxcube = math.max(maxpe, sh.pe), math.max(maxcube, sh.cube)
        end
      end
    end
    table.sort(targets, function(x, y) return x.cube * P.pes_per_cube + x.pe < y.cube * P.pes_per_cube + y.pe end)
    grid = { pes = maxpe + 1, cubes = maxcube + 1 }
    if #targets == 0 then error("KernelLaunch rejected: no tensor shard on " .. msg.target_device, 2) end
  end
  local kargs = {}
  for i, a in ipairs(msg.args) do
    kargs[i] = a.arg_kind == "tensor" and a.va_base or a.value
  end
  local nargs = #msg.args
  local name = msg.kernel_ref.name
  rt:count_request()

  -- In timing-only runs a kernel's stores write no values: the tensor
  -- they land in is marked, and reading it back is an error
  -- (lua/kernbench/torch/device.lua).
  local on_write
  if not rt.data then
    local writer = ("launch '%s' (%s)"):format(name, msg.correlation_id)
    on_write = function(va)
      local d = math.type(va) == "integer" and rt:tensor_at(va)
      if d then d.uncomputed = writer end
    end
  end
  local procs = {} -- the kernel processes, once started

  -- what each PE's kernel process runs, with its kernel instance
  local function body(ctx, _, cube, pe)
    -- a body that fails still ends its instance (ctx:abandon: the scratch
    -- goes back to the PE and PE_CPU answers once its commands in flight
    -- have), so the PE runs the next launch and the handle completes
    local _ <close> = setmetatable({}, { __close = function() ctx:abandon() end })
    procs[#procs + 1] = rt.s:current() -- rt, not s: one upvalue shared with on_write
    local tl = tlmod.new(ctx, { pe = pe, cube = cube, num_pes = grid.pes, num_cubes = grid.cubes,
                                on_write = on_write })
    fn(tl, table.unpack(kargs, 1, nargs)) -- this launch's function, whatever else shares its name
    ctx:wait()   -- composites still in flight are the kernel's too (their errors its own)
    ctx:finish() -- PE_CPU answers
  end

  local ev = s:launch { name = name, targets = targets, grid = grid, data = rt.data,
                        pa_fallback = rt.pa_fallback, body = body }
  local h
  h = rt:handle(ev, "launch " .. name, function(answer)
    msg.target_start_ns = answer.target_start_ns
    for _, p in ipairs(procs) do
      if p:triggered() and p:ok() == false then -- its error was the run's when it failed
        h.error = ("launch '%s' failed: its kernel on %s raised an error (reported when it failed)"):format(name,
          p:name():match(" on (%S+)$") or p:name())
        break
      end
    end
  end)
  h.message = msg
  h.grid = grid
  -- The device tensors it may use (its tensor arguments, and those an
  -- integer argument points into) cannot be freed until it completes or
  -- one of its kernels fails.
  local function active()
    if h.end_ns then return false end
    for _, p in ipairs(procs) do
      if p:triggered() and p:ok() == false then return false end
    end
    return true
  end
  local seen = {}
  for _, a in ipairs(kargs) do
    local d = math.type(a) == "integer" and rt:tensor_at(a)
    if d and not seen[d] then
      seen[d] = true
      rt:use(d, ("launch '%s' (%s, not complete)"):format(name, msg.correlation_id), active, h)
    end
  end
  return h
end

local function launch(rt, kernel, grid, ...)
  local name, fn = M.resolve_kernel(kernel)
  local g = M.resolve_grid(grid, rt.P)
  local sip = rt:sip()
  local st = rt.ext.launch
  st.serial = st.serial + 1
  local args, pending = build_args(rt, table.pack(...))
  if #pending > 0 then rt:wait(rt.s:all_of(pending)) end
  local msg = {
    msg_type = "KernelLaunch", correlation_id = ("launch-%d"):format(st.serial), request_id = "0",
    target_device = ("sip:%d"):format(sip),
    kernel_ref = { name = name, kind = "builtin", deploy_sip = sip, deploy_cube = 0, deploy_pe = 0,
                   nbytes_code = 0 },
    args = args, grid = g, failure_policy = "fail_fast",
  }
  return M.submit_launch(rt, msg, fn)
end

--- torch.launch_async(kernel, grid, ...): launches and returns at once with
-- the handle (torch.wait(h) it).
function M.launch_async(rt, kernel, grid, ...)
  return launch(rt, kernel, grid, ...)
end

--- torch.launch(kernel, grid, ...): launches, runs the simulation until
-- every PE has finished, returns the handle: h:elapsed_ns(), h.result =
-- {pe_exec_ns, dma_ns, compute_ns, pes}.
function M.launch(rt, kernel, grid, ...)
  local h = launch(rt, kernel, grid, ...)
  rt:wait(h)
  h.result = h.event:value()
  return h
end

--- Adds torch.submit_launch, launch_async and launch to runtime rt
-- (lua/kernbench/torch/runtime.lua); its state: rt.ext.launch.
function M.attach(rt)
  rt.ext.launch = { serial = 0 } -- launches so far (their correlation ids)
  rt:export("submit_launch", rt:bind(M.submit_launch))
  rt:export("launch_async", rt:bind(M.launch_async))
  rt:export("launch", rt:bind(M.launch))
end

return M
