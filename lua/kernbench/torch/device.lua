--- Device tensors (docs/torch.md, "Device tensors and placement"): placed
-- over cubes and PEs by a DPPolicy, written and read back by timed
-- MemoryWrite / MemoryRead transactions, freed once nothing uses them.
-- rt:create is a Runtime method (runtime.lua); d:method(...) is
-- Device.method(rt, d, ...), bound per runtime (rt.Device).
local placement = require "kernbench.placement"
local tc = require "kernbench.tensor_c"

local M = {}
local R = {}      -- the Runtime methods
M.methods = R
local Device = {} -- a device tensor's methods

local function tostring_(self)
  return ("DeviceTensor(%s, shape=[%s], dtype=%s, %s, %d shard(s), va=0x%x)"):format(self.name,
    table.concat(self.shape, ", "), self.dtype, tostring(self.dp), #self.shards, self.va_base or 0)
end

function M.init(rt)
  rt.Device = rt:class("DeviceTensor", Device, tostring_)
  rt.host_slots = {}
end

-- Host memory requests go through a per-SIP queue of system.host.max_outstanding
-- slots: a request starts when a slot is free and holds it until it completes.
local function host_request(rt, sip, start, after)
  local s = rt.s
  local slots = rt.host_slots[sip]
  if not slots then
    slots = s:resource(rt.P.host_max_outstanding, ("sip%d host queue"):format(sip))
    rt.host_slots[sip] = slots
  end
  rt.requests = rt.requests + 1
  return s:spawn(function()
    for _, ev in ipairs(after or {}) do ev:wait() end -- launches still using the tensor come first
    slots:acquire()
    local r = start():wait()
    slots:release()
    return r
  end, "host request")
end

local function write_shard(rt, sh, host, after)
  return host_request(rt, sh.sip, function()
    return rt.s:memory_write { pa = rt:shard_pa(sh), nbytes = sh.nbytes, src = host,
                               block = { sh.row0, sh.rows, sh.col0, sh.cols } }
  end, after)
end

--- Places a device tensor: shards, allocations, a VA range and its mapping.
-- `call` names the torch function in errors.
function R:create(shape, o, call)
  o = o or {}
  if type(o) ~= "table" then error(("%s: options must be a table {dtype =, dp =, name =}, got %s"):format(
    call, type(o)), 3) end
  local itemsize, dtype = tc.itemsize(o.dtype or "f32")
  shape = placement.check_shape(shape, itemsize, dtype, call, 3)
  local dp = o.dp or placement.DPPolicy {}
  if not placement.is_policy(dp) then
    error(("%s: dp must be a DPPolicy{...}, got %s"):format(call, self:describe(dp)), 3)
  end
  if o.name ~= nil and type(o.name) ~= "string" then
    error(("%s: name must be a string, got %s"):format(call, type(o.name)), 3)
  end
  if o.map ~= nil and o.map ~= "holders" and o.map ~= "cube" then
    error(("%s: map must be \"holders\" (the PEs holding a shard; default) or \"cube\" (every PE of their "
      .. "cubes), got %s"):format(call, self:describe(o.map)), 3)
  end
  if o.map == "cube" and dp.cube == "replicate" then
    error(("%s: map = \"cube\" takes a tensor split over the cubes (DPPolicy cube = \"row_wise\" or "
      .. "\"column_wise\"); a replicated one is mapped on each PE holding a copy"):format(call), 3)
  end
  local P = self.P
  local sip = self:current_device() or 0
  if sip >= P.sips then
    error(("torch: current device is SIP %d, the topology has %d"):format(sip, P.sips), 3)
  end
  local shards = placement.resolve(dp, shape, itemsize,
                                   { num_cubes = P.cubes_per_sip, num_pes = P.pes_per_cube, sip = sip })
  local layout = placement.layout_bytes(shape, itemsize)
  self.serial = self.serial + 1
  local dt = setmetatable({ shape = shape, dtype = dtype, itemsize = itemsize, dp = dp,
                            name = o.name or ("tensor%d"):format(self.serial), shards = shards,
                            layout_bytes = layout, map_cube = o.map == "cube" }, self.Device)
  self:map_tensor(dt) -- memory.lua
  dt.users = {}
  self.live[#self.live + 1] = dt
  local by_va, va = self.by_va, dt.va_base
  local at = #by_va + 1
  while at > 1 and by_va[at - 1].va_base > va do at = at - 1 end
  table.insert(by_va, at, dt)
  return dt
end

function Device.numel(rt, self)
  if getmetatable(self) ~= rt.Device then
    error(("torch: DeviceTensor:numel() called on %s: call it as d:numel() on a device tensor"):format(
      rt:describe(self)), 2)
  end
  local n = 1
  for _, d in ipairs(self.shape) do n = n * d end
  return n
end

--- Checks that a Device method was called on a device tensor that is
-- not freed (d:cpu(), not d.cpu() or a host tensor).
local function check_live(rt, dt, what)
  if getmetatable(dt) ~= rt.Device then
    error(("torch: DeviceTensor:%s() called on %s: call it as d:%s(...) on a device tensor"):format(what,
      rt:describe(dt), what), 3)
  end
  if dt.freed then error(("torch: %s of %s after it was freed"):format(what, dt.name), 3) end
end
M.check_live = check_live

--- Writes host tensor `src` (same shape and dtype) into every shard; returns
-- a handle (an event) that succeeds when every write has landed.
function Device.copy_(rt, self, src)
  check_live(rt, self, "copy_")
  if not tc.is_tensor(src) then
    error(("torch: copy_ into %s from %s: the source must be a host tensor%s"):format(self.name, rt:describe(src),
      getmetatable(src) == rt.Device and " (read a device tensor back with :cpu() first)" or ""), 2)
  end
  if src.dtype ~= self.dtype then
    error(("torch: copy_ into %s (%s) from a %s tensor: convert with :to(\"%s\") first"):format(
      self.name, self.dtype, src.dtype, self.dtype), 2)
  end
  local rows, cols = placement.shape_2d(self.shape)
  local srows, scols = placement.shape_2d(src.shape)
  if rows * cols ~= srows * scols or cols ~= scols then
    error(("torch: copy_ into %s of shape [%s] from shape [%s]"):format(self.name,
      table.concat(self.shape, ", "), table.concat(src.shape, ", ")), 2)
  end
  -- ordered after the launches still using the tensor, as on a stream:
  -- their kernels never see the new values land underneath them
  local after = {}
  for _, u in ipairs(self.users) do
    if u.done and u.active() then after[#after + 1] = u.done.finished end
  end
  local evs = {}
  for _, sh in ipairs(self.shards) do evs[#evs + 1] = write_shard(rt, sh, src, after) end
  tc.hold(src, 1) -- src cannot change until every write has read it
  local h = rt:handle(rt.s:all_of(evs), "copy_ into " .. self.name, function() tc.hold(src, -1) end)
  self.pending[#self.pending + 1] = h
  -- the host's values replace what a device op wrote, unless a launch
  -- that may still write it is running
  if #rt:active_users(self) == 0 then self.uncomputed = nil end
  rt:use(self, ("copy_ into '%s' (its writes not landed yet)"):format(self.name), function() return not h.end_ns end)
  return h
end

--- Waits for the launches still running on dt (their stores land
-- first, as a stream's work before a read); forgets finished users.
local function settle(rt, dt)
  for _, u in ipairs(dt.users) do
    if u.done and u.active() then rt:wait(u.done) end
  end
  rt:active_users(dt)
end
M.settle = settle

--- Reads the tensor back: one timed MemoryRead per distinct block (the
-- first replica of each), gathered into a new host tensor. Blocks until
-- the data is back (a host-read barrier).
local function read_back(rt, self)
  local host = tc.zeros(self.shape, { dtype = self.dtype })
  local evs, seen = {}, {}
  for _, sh in ipairs(self.shards) do
    local key = sh.offset_bytes .. ":" .. sh.nbytes
    if not seen[key] then
      seen[key] = true
      evs[#evs + 1] = host_request(rt, sh.sip, function()
        return rt.s:memory_read { pa = sh.pa, nbytes = sh.nbytes, dst = host,
                                  block = { sh.row0, sh.rows, sh.col0, sh.cols } }
      end)
    end
  end
  local all = rt.s:all_of(evs)
  rt:use(self, ("a read of '%s' (d:cpu(), not back yet)"):format(self.name), function() return not all:processed() end)
  rt:wait(all)
  return host
end
M.read_back = read_back

--- Raises when the tensor holds values a device operation wrote in a
-- timing-only run (nothing was computed: docs/torch.md, "Lifetimes and
-- values").
local function check_computed(rt, dt, call)
  if dt.uncomputed and not rt.data then
    error(("torch: %s of '%s': its values were written by %s in a timing-only run, which computes no "
      .. "values; run with --data (or --verify-data) to read them (torch.verify(name, d, expected) reads a "
      .. "device tensor and compares only in data mode)"):format(call, dt.name, dt.uncomputed), 3)
  end
end

function Device.cpu(rt, self)
  check_live(rt, self, "cpu")
  settle(rt, self)
  check_computed(rt, self, "cpu")
  return read_back(rt, self)
end
Device.numpy = Device.cpu

--- Unmaps and frees the tensor's memory (VA and every shard).
function Device.free(rt, self)
  if getmetatable(self) ~= rt.Device then
    error(("torch: DeviceTensor:free() called on %s: call it as d:free() on a device tensor"):format(
      rt:describe(self)), 2)
  end
  if self.freed then
    error(("torch: free of %s: it was freed already (a device tensor is freed once)"):format(self.name), 2)
  end
  local users = rt:active_users(self)
  if #users > 0 then
    local cur = rt.s:current()
    local inside = cur and cur:name():match("^kernel ") and (" (this free runs in %s)"):format(cur:name()) or ""
    error(("torch: free of '%s' refused: %s still uses it%s; wait for it first (torch.wait(h), "
      .. "torch.synchronize())"):format(self.name, table.concat(users, ", "), inside), 2)
  end
  self.freed = true
  rt:unmap_tensor(self) -- memory.lua
  for i, d in ipairs(rt.live) do
    if d == self then table.remove(rt.live, i) break end
  end
  for i, d in ipairs(rt.by_va) do
    if d == self then table.remove(rt.by_va, i) break end
  end
end

return M
