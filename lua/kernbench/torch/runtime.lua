--- The torch runtime object (docs/torch.md, "Extending the runtime"): the
-- state of one runtime in the fields of a Runtime, its behaviour in methods.
-- kernbench.torch makes one and gives the bench its public table (rt.api),
-- whose functions are bound to it (rt:bind). The methods by concern:
-- lua/kernbench/torch/memory.lua (allocators, MMU, TCM), device.lua (device
-- tensors), tensors.lua (constructors), verify.lua (checking results).
--
-- Extending it: a module with attach(rt) (lua/kernbench/launch.lua,
-- ccl/install.lua, ccl/spawn.lua, ccl/distributed.lua) reads the fields and
-- calls the methods below, keeps its own state in rt.ext[<its name>] and
-- adds its public functions with rt:export(name, rt:bind(fn)), fn(rt, ...).
--
-- Fields (read only):
--   rt.s, rt.P, rt.topo      the simulation, topology:params(), the topology
--   rt.data, rt.pa_fallback  data mode (values computed); unmapped VA = PA
--   rt.api                   the public table (what the bench calls torch)
--   rt.ext                   the extensions' state, one table each
-- Methods:
--   rt:current_device()      the current SIP, or nil (set_device(nil))
--   rt:sip()                 the current SIP, 0 when none is set
--   rt:current_rank()        the running spawn worker's rank, or nil
--   rt:add_worker(co, rank), rt:remove_worker(co)   spawn's coroutines: a
--                            wait inside one yields to spawn's scheduler
--   rt:count_request()       one more host request (torch.stats)
--   rt:wait(h)               torch.wait: runs until h is done, its value
--   rt:handle(ev, what[, on_value])  a Handle completing with ev
--   rt:tensor_at(va)         the live device tensor holding va, or nil
--   rt:use(dt, what, active[, done]) a user of dt: its free is refused
--                            while active(); done: the handle it waits on
--   rt:slice_allocator(sip, cube, pe)  the HBM slice's allocator
--   rt:on_cleanup(fn)        fn(rt) runs first in torch.cleanup()
--   rt:bind(fn)              function(...) return fn(rt, ...) end
--   rt:export(name, value)   torch.<name> = value (each name once)
-- A public function is fn(rt, ...) bound with rt:bind: the binding is a
-- tail call, so error(msg, 2) in fn names the bench's line.
local tc = require "kernbench.tensor_c"

local M = {}

local Runtime = {}
Runtime.__index = Runtime
M.Runtime = Runtime

-- ---- handles: an operation's completion and its elapsed simulated time ----
-- h:method(...) is Handle.method(rt, h, ...), bound per runtime (rt.Handle).
local Handle = {}

function Handle.done(_, h) return h.end_ns ~= nil end
function Handle.wait(rt, h) return rt:wait(h) end
--- Simulated ns from submission to completion (an error before it completes).
function Handle.elapsed_ns(_, h)
  if not h.end_ns then error(("%s: not complete yet (torch.wait it first)"):format(h.what), 2) end
  return (h.end_ps - h.start_ps) / 1000
end
local function handle_tostring(h)
  return ("Handle(%s, %s)"):format(h.what, h.end_ns and ("%g ns"):format(h:elapsed_ns()) or "pending")
end

--- A new runtime (kernbench.torch.new has checked opts).
function M.new(opts)
  local topo = opts.topology or kb.topology.load()
  local P = topo:params()
  -- data mode (--data / --verify-data): kernels compute values
  local mode = opts.data_mode or (kb and kb.data_mode)
  local rt = setmetatable({
    topo = topo, P = P,
    data = opts.data or mode == "data" or mode == "verify" or false,
    verify_data = mode == "verify",
    s = sim.new { topology = topo, op_log = opts.op_log },
    pa_fallback = opts.pa_fallback or false,
    -- The current device: the main script's, or each spawn worker's own
    -- (torch.multiprocessing.spawn: a rank sets its SIP with set_device).
    main_device = opts.device,
    worker_device = setmetatable({}, { __mode = "k" }), -- coroutine -> SIP (false: none)
    workers = setmetatable({}, { __mode = "k" }),       -- spawn worker coroutine -> its rank
    requests = 0,
    live = {},  -- device tensors not freed, in creation order
    by_va = {}, -- the same, sorted by va_base (tensor_at)
    serial = 0,
    cleanups = {},
    ext = {},
    api = {},
  }, Runtime)
  rt.Handle = rt:class("Handle", Handle, handle_tostring)
  for _, part in ipairs(M.parts) do part.init(rt) end
  return rt
end

function Runtime:current_device()
  local co = coroutine.running()
  if self.workers[co] then return self.worker_device[co] or nil end
  return self.main_device
end

function Runtime:sip() return self:current_device() or 0 end

function Runtime:current_rank() return self.workers[coroutine.running()] end
function Runtime:add_worker(co, rank) self.workers[co] = rank end
function Runtime:remove_worker(co) self.workers[co] = nil end

--- torch.ahbm.set_device(rank): nil, no current device again (SIP 0 by default).
function Runtime:set_device(rank)
  local P = self.P
  if rank ~= nil and (math.type(rank) ~= "integer" or rank < 0 or rank >= P.sips) then
    error(("torch.ahbm.set_device(%s): the topology has SIPs 0 .. %d"):format(tostring(rank), P.sips - 1), 2)
  end
  local co = coroutine.running()
  if self.workers[co] then self.worker_device[co] = rank or false else self.main_device = rank end
end

function Runtime:device_count() return self.P.sips end

function Runtime:count_request() self.requests = self.requests + 1 end

--- The live device tensor whose VA range holds va, or nil.
function Runtime:tensor_at(va)
  local by_va = self.by_va
  local lo, hi = 1, #by_va
  while lo <= hi do
    local mid = (lo + hi) // 2
    local d = by_va[mid]
    if va < d.va_base then hi = mid - 1
    elseif va >= d.va_base + math.max(d.layout_bytes, 1) then lo = mid + 1
    else return d end
  end
  return nil
end

-- ---- lifetimes: who still uses a device tensor ----
-- dt.users lists {what =, active = function() -> bool}: the launches that
-- take it (until their handle completes), its copy_ writes (until they
-- land) and its reads (until they are back). A free while one is active
-- is refused (docs/torch.md, "Lifetimes and values").
function Runtime:use(dt, what, active, done)
  local u = { what = what, active = active, done = done }
  dt.users[#dt.users + 1] = u
  return u
end

--- What still uses dt (the users' names); forgets the finished ones.
function Runtime:active_users(dt)
  local keep, out = {}, {}
  for _, u in ipairs(dt.users) do
    if u.active() then
      keep[#keep + 1] = u
      out[#out + 1] = u.what
    end
  end
  dt.users = keep
  return out
end

--- A handle on event ev: succeeds (h.finished) once ev has, after
-- on_value(ev's value).
function Runtime:handle(ev, what, on_value)
  local s = self.s
  -- times kept in integer ps so that a duration is exact (ns = ps / 1000 once)
  local h = setmetatable({ event = ev, what = what, start_ps = s:now_ps(), start_ns = s:now(),
                           finished = s:event(what) }, self.Handle)
  s:spawn(function()
    local v = ev:wait()
    h.end_ps, h.end_ns = s:now_ps(), s:now()
    if on_value then on_value(v) end
    h.finished:succeed(h)
  end, what)
  return h
end

--- What a value is, for messages: "nil", "a host tensor", "a number" ...
function Runtime:describe(v)
  if v == nil then return "nil" end
  if tc.is_tensor(v) then return "a host tensor" end
  if getmetatable(v) == self.Device then return ("device tensor '%s'"):format(v.name) end
  return "a " .. type(v)
end

--- torch.wait(h): runs the simulation until h (a handle or an event) has
-- completed; returns its value.
function Runtime:wait(h)
  if getmetatable(h) == self.Handle then
    local v = self:wait(h.finished)
    if h.error then error(h.error, 2) end -- a launch whose kernel failed
    return v
  end
  if self.workers[coroutine.running()] then -- a spawn worker: the scheduler drains, then resumes it
    coroutine.yield { wait = h }
    return h:value()
  end
  local mt = type(h) == "userdata" and getmetatable(h)
  local kind = type(mt) == "table" and mt.__name
  if kind ~= "kernbench.event" and kind ~= "kernbench.process" then
    error(("torch.wait: expected a handle (from copy_, launch_async, d.mapped), an event or a process, got %s"):format(
      self:describe(h)), 2)
  end
  if not h:processed() then
    local s = self.s
    -- the waiter stops this run only: if the run fails first (a kernel's
    -- error), a later run must not be stopped when h completes
    local armed = true
    s:spawn(function()
      h:wait()
      if armed then s:stop() end
    end, "torch.wait")
    do
      local _ <close> = setmetatable({}, { __close = function() armed = false end })
      s:run()
    end
    if not h:processed() then
      error("torch.wait: the simulation ran out of work but the handle is not done", 2)
    end
  end
  return h:value()
end

--- torch.synchronize(): drains every outstanding operation.
function Runtime:synchronize()
  if self.workers[coroutine.running()] then
    coroutine.yield { synchronize = true }
    return
  end
  self.s:run()
end

--- Simulated time now, in ns (the runtime starts at 0: the bench's elapsed time).
function Runtime:now_ns() return self.s:now() end

function Runtime:on_cleanup(fn) self.cleanups[#self.cleanups + 1] = fn end

--- torch.cleanup(): frees every live device tensor and drains; the
-- allocators are back to their initial state afterwards.
function Runtime:cleanup()
  for _, fn in ipairs(self.cleanups) do fn(self) end
  local live = self.live
  for _, d in ipairs(live) do -- what still runs on a tensor ends first
    if #self:active_users(d) > 0 then self:synchronize() break end
  end
  for i = #live, 1, -1 do live[i]:free() end
  self:synchronize()
end

function Runtime:stats()
  local st = self.s:stats { totals = true }
  return { requests = self.requests, sim_ns = st.sim_ns, events = st.events, live_tensors = #self.live }
end

function Runtime:close() self.s:close() end

--- A public function over method fn: torch.f(...) is fn(rt, ...) (a tail
-- call, so error levels count from fn as if the bench called it).
function Runtime:bind(fn)
  return function(...) return fn(self, ...) end
end

--- A metatable whose methods (__index) are methods[k](rt, self, ...)
-- bound to this runtime (an alias stays one function): the Handle's here,
-- the device tensor's in device.lua.
function Runtime:class(name, methods, tostring_)
  local index, bound = {}, {}
  for k, f in pairs(methods) do
    bound[f] = bound[f] or self:bind(f)
    index[k] = bound[f]
  end
  return { __index = index, __name = name, __tostring = tostring_ }
end

--- Adds torch.<name> (a bound function, a table of them, or a value).
function Runtime:export(name, value)
  if self.api[name] ~= nil then error(("torch runtime: '%s' is exported twice"):format(name), 2) end
  self.api[name] = value
end

-- The methods of the other concerns, mixed into Runtime; each part's
-- init(rt) sets up its state when a runtime is made.
M.parts = {}
for _, name in ipairs { "memory", "device", "tensors", "verify" } do
  local part = require("kernbench.torch." .. name)
  for k, f in pairs(part.methods) do
    assert(Runtime[k] == nil, k)
    Runtime[k] = f
  end
  M.parts[#M.parts + 1] = part
end

return M
