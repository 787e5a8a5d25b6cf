--- The torch-like runtime a bench receives: host tensors (C-backed, from
-- kernbench.tensor_c), device tensors placed over cubes and PEs by a
-- DPPolicy, allocation, MMU mappings, and timed MemoryWrite / MemoryRead
-- transactions that move real bytes through the modelled fabric.
-- Reference: docs/torch.md.
--
--   local torch = require("kernbench.torch").new { topology = t, device = 0 }
--   local x = torch.randn({ 256, 1024 }, { dtype = "f16" })          -- host tensor
--   local d = torch.empty({ 256, 1024 }, { dtype = "f16", dp = torch.DPPolicy { cube = "row_wise" } })
--   d:copy_(x)                -- timed writes into every shard
--   local y = d:cpu()         -- timed reads, gathered into a host tensor
--   torch.synchronize()       -- drain outstanding work
local placement = require "kernbench.placement"
local pe_c = require "kernbench.pe_c"

local M = {}

-- The 0-based index {i, j, ...} of flat element `flat` of a tensor of `shape`.
local function worst_index(shape, flat)
  local idx = {}
  for d = #shape, 1, -1 do
    idx[d] = flat % shape[d]
    flat = flat // shape[d]
  end
  return idx
end

--- "worst |error| 0.5 at [1, 3] (got 2.5, expected 2)" for a record of
-- torch.verified().
function M.describe_worst(r)
  if not r.index then return "no elements" end
  return ("worst |error| %.6g at [%s] (got %.9g, expected %.9g)"):format(r.worst, table.concat(r.index, ", "),
    r.got, r.expected)
end

--- A new runtime on a new simulation of `opts.topology` (default: the
-- command line's); `opts.device` is the SIP that torch.ahbm.current_device()
-- starts on (nil: none, tensors go to SIP 0); `opts.pa_fallback = true`
-- uses an unmapped VA as a PA (a compatibility option, docs/decisions.md).
function M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("kb.torch: argument 1 (opts) must be a table such as {topology = ...} or nil, got %s"):format(type(opts)), 3)
  end
  opts = opts or {}
  local tc = require "kernbench.tensor_c"
  local ac = require "kernbench.alloc_c"
  local topo = opts.topology or kb.topology.load()
  local P = topo:params()
  -- data mode (--data / --verify-data): kernels compute values
  local mode = opts.data_mode or (kb and kb.data_mode)
  local data = opts.data or mode == "data" or mode == "verify" or false
  local s = sim.new { topology = topo, op_log = opts.op_log }
  local torch = {}
  -- The current device: the main script's, or each spawn worker's own
  -- (torch.multiprocessing.spawn: a rank sets its SIP with set_device).
  local main_device = opts.device
  local worker_device = setmetatable({}, { __mode = "k" }) -- coroutine -> SIP (false: none)
  local workers = setmetatable({}, { __mode = "k" })       -- coroutines that are spawn workers
  local function current_device()
    local co = coroutine.running()
    if workers[co] then return worker_device[co] or nil end
    return main_device
  end
  local requests = 0
  local live = {}          -- device tensors not freed, in creation order
  local by_va = {}         -- the same, sorted by va_base (tensor_at)
  local serial = 0

  --- The live device tensor whose VA range holds va, or nil.
  local function tensor_at(va)
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
  local function use(dt, what, active, done)
    local u = { what = what, active = active, done = done }
    dt.users[#dt.users + 1] = u
    return u
  end
  local function active_users(dt)
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

  -- ---- allocators: an HBM-slice allocator per (sip, cube, pe), made when
  -- first used, and one VA allocator (kernbench.alloc_c's named kinds); each
  -- PE's TCM space is its PE_TCM's (pe_c.tcm_*) ----
  local function pe0_node(kind)
    local id = topo:node_at { kind = kind, sip = 0, cube = 0, pe = 0 }
    return id and topo:node(id)
  end
  local mmu_node = pe0_node("pe_mmu")
  local page_size = mmu_node and mmu_node.attrs.page_size or 4096
  local tcm_node = pe0_node("pe_tcm")
  local tcm_bytes = tcm_node and math.floor(tcm_node.attrs.size_mb * 1024 * 1024) or 0
  local tcm_reserved = tcm_node and math.floor(tcm_node.attrs.scheduler_reserved_kb * 1024) or 0
  local function per_pe(make)
    local set = {}
    return set, function(sip, cube, pe)
      local key = (sip * P.cubes_per_sip + cube) * P.pes_per_cube + pe
      set[key] = set[key] or make()
      return set[key]
    end
  end
  local hbm_alloc, slice_allocator = per_pe(function() return ac.hbm_slice(P.hbm_slice_bytes) end)
  local va_alloc = ac.va(page_size)

  --- Sends a map (or unmap) of `entries` to the PEs of `targets` (a list of
  -- {sip, cube, pe}): one MmuMap / MmuUnmap message from the host, which
  -- IO_CPU and M_CPU carry to each PE_MMU (src/comp/device). Returns an
  -- event that succeeds when the completion is back at the host.
  local function mmu_message(kind, entries, targets, label)
    requests = requests + 1
    local msg = { targets = targets, entries = entries, label = label }
    if kind == "map" then return s:mmu_map(msg) end
    return s:mmu_unmap(msg)
  end

  -- ---- handles: an operation's completion and its elapsed simulated time ----
  local Handle = {}
  Handle.__index = Handle
  Handle.__name = "Handle"

  local function handle(ev, what, on_value)
    -- times kept in integer ps so that a duration is exact (ns = ps / 1000 once)
    local h = setmetatable({ event = ev, what = what, start_ps = s:now_ps(), start_ns = s:now(),
                             finished = s:event(what) }, Handle)
    s:spawn(function()
      local v = ev:wait()
      h.end_ps, h.end_ns = s:now_ps(), s:now()
      if on_value then on_value(v) end
      h.finished:succeed(h)
    end, what)
    return h
  end

  function Handle:done() return self.end_ns ~= nil end
  function Handle:wait() return torch.wait(self) end
  --- Simulated ns from submission to completion (an error before it completes).
  function Handle:elapsed_ns()
    if not self.end_ns then error(("%s: not complete yet (torch.wait it first)"):format(self.what), 2) end
    return (self.end_ps - self.start_ps) / 1000
  end
  function Handle:__tostring()
    return ("Handle(%s, %s)"):format(self.what, self.end_ns and ("%g ns"):format(self:elapsed_ns())
                                                  or "pending")
  end

  -- ---- device tensors ----
  local Device = {}
  Device.__index = Device
  Device.__name = "DeviceTensor"

  -- Host memory requests go through a per-SIP queue of system.host.max_outstanding
  -- slots: a request starts when a slot is free and holds it until it completes.
  local host_slots = {}
  local function host_request(sip, start, after)
    local slots = host_slots[sip]
    if not slots then
      slots = s:resource(P.host_max_outstanding, ("sip%d host queue"):format(sip))
      host_slots[sip] = slots
    end
    requests = requests + 1
    return s:spawn(function()
      for _, ev in ipairs(after or {}) do ev:wait() end -- launches still using the tensor come first
      slots:acquire()
      local r = start():wait()
      slots:release()
      return r
    end, "host request")
  end

  local function shard_pa(sh)
    return kb.addr.pe_hbm(sh.sip, sh.cube, sh.pe, sh.hbm_offset, P.hbm_slice_bytes)
  end

  local function write_shard(sh, host, after)
    return host_request(sh.sip, function()
      return s:memory_write { pa = shard_pa(sh), nbytes = sh.nbytes, src = host,
                              block = { sh.row0, sh.rows, sh.col0, sh.cols } }
    end, after)
  end

  --- What a value is, for messages: "nil", "a host tensor", "a number" ...
  local function describe(v)
    if v == nil then return "nil" end
    if tc.is_tensor(v) then return "a host tensor" end
    if getmetatable(v) == Device then return ("device tensor '%s'"):format(v.name) end
    return "a " .. type(v)
  end

  --- Places a device tensor: shards, allocations, a VA range and its mapping.
  -- `call` names the torch function in errors.
  local function create(shape, o, call)
    o = o or {}
    if type(o) ~= "table" then error(("%s: options must be a table {dtype =, dp =, name =}, got %s"):format(
      call, type(o)), 3) end
    local itemsize, dtype = tc.itemsize(o.dtype or "f32")
    shape = placement.check_shape(shape, itemsize, dtype, call, 3)
    local dp = o.dp or placement.DPPolicy {}
    if not placement.is_policy(dp) then
      error(("%s: dp must be a DPPolicy{...}, got %s"):format(call, describe(dp)), 3)
    end
    if o.name ~= nil and type(o.name) ~= "string" then
      error(("%s: name must be a string, got %s"):format(call, type(o.name)), 3)
    end
    local sip = current_device() or 0
    if sip >= P.sips then
      error(("torch: current device is SIP %d, the topology has %d"):format(sip, P.sips), 3)
    end
    local shards = placement.resolve(dp, shape, itemsize,
                                     { num_cubes = P.cubes_per_sip, num_pes = P.pes_per_cube, sip = sip })
    local layout = placement.layout_bytes(shape, itemsize)
    serial = serial + 1
    local dt = setmetatable({ shape = shape, dtype = dtype, itemsize = itemsize, dp = dp,
                              name = o.name or ("tensor%d"):format(serial), shards = shards,
                              layout_bytes = layout }, Device)
    local done = {}
    for _, sh in ipairs(shards) do
      local off, err = slice_allocator(sh.sip, sh.cube, sh.pe):alloc(sh.nbytes, 1)
      if not off then
        for _, d in ipairs(done) do slice_allocator(d.sip, d.cube, d.pe):free(d.hbm_offset) end
        error(("torch: %s on sip%d.cube%d.pe%d: %s"):format(dt.name, sh.sip, sh.cube, sh.pe, err), 3)
      end
      sh.hbm_offset = off
      sh.pa = shard_pa(sh)
      done[#done + 1] = sh
    end
    local va, err = va_alloc:alloc(math.max(layout, 1), page_size)
    if not va then error(("torch: %s: virtual address space: %s"):format(dt.name, err), 3) end
    dt.va_base = va
    -- Replicated over cubes: each cube maps only its own copies; sharded:
    -- every shard's mapping goes to every target PE (D-VA3).
    local targets, seen = {}, {}
    for _, sh in ipairs(shards) do
      local key = sh.cube * P.pes_per_cube + sh.pe
      if not seen[key] then
        seen[key] = true
        targets[#targets + 1] = { sip = sh.sip, cube = sh.cube, pe = sh.pe }
      end
    end
    -- PE_MMU names it when a kernel's access leaves one of its mappings
    local label = ("tensor '%s' [%s] %s"):format(dt.name, table.concat(shape, ", "), dtype)
    local maps = {}
    if dp.cube == "replicate" then
      for _, tg in ipairs(targets) do
        local entries = {}
        for _, sh in ipairs(shards) do
          if sh.cube == tg.cube and (dp.pe ~= "replicate" or sh.pe == tg.pe) then
            entries[#entries + 1] = { va = va + sh.offset_bytes, pa = sh.pa, size = sh.nbytes }
          end
        end
        maps[#maps + 1] = mmu_message("map", entries, { tg }, label)
      end
    else
      local entries = {}
      for _, sh in ipairs(shards) do
        entries[#entries + 1] = { va = va + sh.offset_bytes, pa = sh.pa, size = sh.nbytes }
      end
      maps[#maps + 1] = mmu_message("map", entries, targets, label)
    end
    dt.mapped = handle(s:all_of(maps), "map " .. dt.name)
    dt.pending = { dt.mapped } -- what a kernel launch using it waits for
    dt.targets = targets
    dt.users = {}
    live[#live + 1] = dt
    local at = #by_va + 1
    while at > 1 and by_va[at - 1].va_base > va do at = at - 1 end
    table.insert(by_va, at, dt)
    return dt
  end

  function Device:numel()
    if getmetatable(self) ~= Device then
      error(("torch: DeviceTensor:numel() called on %s: call it as d:numel() on a device tensor"):format(
        describe(self)), 2)
    end
    local n = 1
    for _, d in ipairs(self.shape) do n = n * d end
    return n
  end

  function Device:__tostring()
    return ("DeviceTensor(%s, shape=[%s], dtype=%s, %s, %d shard(s), va=0x%x)"):format(self.name,
      table.concat(self.shape, ", "), self.dtype, tostring(self.dp), #self.shards, self.va_base or 0)
  end

  --- Checks that a Device method was called on a device tensor that is
  -- not freed (d:cpu(), not d.cpu() or a host tensor).
  local function check_live(dt, what)
    if getmetatable(dt) ~= Device then
      error(("torch: DeviceTensor:%s() called on %s: call it as d:%s(...) on a device tensor"):format(what,
        describe(dt), what), 3)
    end
    if dt.freed then error(("torch: %s of %s after it was freed"):format(what, dt.name), 3) end
  end

  --- Writes host tensor `src` (same shape and dtype) into every shard; returns
  -- a handle (an event) that succeeds when every write has landed.
  function Device:copy_(src)
    check_live(self, "copy_")
    if not tc.is_tensor(src) then
      error(("torch: copy_ into %s from %s: the source must be a host tensor%s"):format(self.name, describe(src),
        getmetatable(src) == Device and " (read a device tensor back with :cpu() first)" or ""), 2)
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
    for _, sh in ipairs(self.shards) do evs[#evs + 1] = write_shard(sh, src, after) end
    tc.hold(src, 1) -- src cannot change until every write has read it
    local h = handle(s:all_of(evs), "copy_ into " .. self.name, function() tc.hold(src, -1) end)
    self.pending[#self.pending + 1] = h
    -- the host's values replace what a device op wrote, unless a launch
    -- that may still write it is running
    if #active_users(self) == 0 then self.uncomputed = nil end
    use(self, ("copy_ into '%s' (its writes not landed yet)"):format(self.name), function() return not h.end_ns end)
    return h
  end

  --- Waits for the launches still running on dt (their stores land
  -- first, as a stream's work before a read); forgets finished users.
  local function settle(dt)
    for _, u in ipairs(dt.users) do
      if u.done and u.active() then torch.wait(u.done) end
    end
    active_users(dt)
  end

  --- Reads the tensor back: one timed MemoryRead per distinct block (the
  -- first replica of each), gathered into a new host tensor. Blocks until
  -- the data is back (a host-read barrier).
  local function read_back(self)
    local host = tc.zeros(self.shape, { dtype = self.dtype })
    local evs, seen = {}, {}
    for _, sh in ipairs(self.shards) do
      local key = sh.offset_bytes .. ":" .. sh.nbytes
      if not seen[key] then
        seen[key] = true
        evs[#evs + 1] = host_request(sh.sip, function()
          return s:memory_read { pa = sh.pa, nbytes = sh.nbytes, dst = host,
                                 block = { sh.row0, sh.rows, sh.col0, sh.cols } }
        end)
      end
    end
    local all = s:all_of(evs)
    use(self, ("a read of '%s' (d:cpu(), not back yet)"):format(self.name), function() return not all:processed() end)
    torch.wait(all)
    return host
  end

  --- Raises when the tensor holds values a device operation wrote in a
  -- timing-only run (nothing was computed: docs/torch.md, "Lifetimes and
  -- values").
  local function check_computed(dt, call)
    if dt.uncomputed and not data then
      error(("torch: %s of '%s': its values were written by %s in a timing-only run, which computes no "
        .. "values; run with --data (or --verify-data) to read them (torch.verify(name, d, expected) reads a "
        .. "device tensor and compares only in data mode)"):format(call, dt.name, dt.uncomputed), 3)
    end
  end

  function Device:cpu()
    check_live(self, "cpu")
    settle(self)
    check_computed(self, "cpu")
    return read_back(self)
  end
  Device.numpy = Device.cpu

  --- Unmaps and frees the tensor's memory (VA and every shard).
  function Device:free()
    if getmetatable(self) ~= Device then
      error(("torch: DeviceTensor:free() called on %s: call it as d:free() on a device tensor"):format(
        describe(self)), 2)
    end
    if self.freed then
      error(("torch: free of %s: it was freed already (a device tensor is freed once)"):format(self.name), 2)
    end
    local users = active_users(self)
    if #users > 0 then
      local cur = s:current()
      local inside = cur and cur:name():match("^kernel ") and (" (this free runs in %s)"):format(cur:name()) or ""
      error(("torch: free of '%s' refused: %s still uses it%s; wait for it first (torch.wait(h), "
        .. "torch.synchronize())"):format(self.name, table.concat(users, ", "), inside), 2)
    end
    self.freed = true
    local entries = {}
    for _, sh in ipairs(self.shards) do
      entries[#entries + 1] = { va = self.va_base + sh.offset_bytes, size = sh.nbytes }
    end
    mmu_message("unmap", entries, self.targets)
    for _, sh in ipairs(self.shards) do
      local ok, err = slice_allocator(sh.sip, sh.cube, sh.pe):free(sh.hbm_offset)
      if not ok then error(("torch: free %s: %s"):format(self.name, err), 2) end
    end
    local ok, err = va_alloc:free(self.va_base)
    if not ok then error(("torch: free %s: %s"):format(self.name, err), 2) end
    for i, d in ipairs(live) do
      if d == self then table.remove(live, i) break end
    end
    for i, d in ipairs(by_va) do
      if d == self then table.remove(by_va, i) break end
    end
  end

  -- ---- the torch namespace ----
  torch.DPPolicy = placement.DPPolicy
  torch.topology = topo
  torch.sim = s
  torch.spec = P

  -- Host tensor constructors and math come from the C module; those that
  -- create tensors accept {dp = DPPolicy} to place the result on the device.
  local generator = tc.new_generator(0)
  function torch.manual_seed(n)
    if math.type(n) ~= "integer" then
      error(("torch.manual_seed: the seed must be an integer, got %s"):format(
        type(n) == "number" and tostring(n) or describe(n)), 2)
    end
    generator = tc.new_generator(n)
  end

  local function maybe_device(host, o, init, call)
    if not (type(o) == "table" and o.dp) then return host end
    local dt = create(host.shape, o, call)
    if init then dt:copy_(host) end
    return dt
  end

  function torch.empty(shape, o)
    if type(o) == "table" and o.dp then return create(shape, o, "torch.empty") end
    return tc.empty(shape, o)
  end
  function torch.zeros(shape, o) return maybe_device(tc.zeros(shape, o), o, true, "torch.zeros") end
  function torch.ones(shape, o) return maybe_device(tc.ones(shape, o), o, true, "torch.ones") end
  function torch.full(shape, v, o) return maybe_device(tc.full(shape, v, o), o, true, "torch.full") end
  function torch.tensor(data, o) return maybe_device(tc.tensor(data, o), o, true, "torch.tensor") end
  function torch.arange(...) return tc.arange(...) end
  function torch.rand(shape, o) return maybe_device(tc.rand(shape, o, generator), o, true, "torch.rand") end
  function torch.randn(shape, o) return maybe_device(tc.randn(shape, o, generator), o, true, "torch.randn") end
  for _, name in ipairs { "allclose", "isclose", "equal", "matmul", "add", "sub", "mul", "div", "neg", "exp",
                          "log", "sqrt", "abs", "relu", "sigmoid", "tanh", "softmax", "sum", "max", "min",
                          "mean", "transpose", "narrow", "cat", "reshape", "clone", "zeros_like", "ones_like",
                          "is_tensor", "from_bytes" } do
    torch[name] = assert(tc[name], name)
  end

  --- Places host tensor `t` on the device with policy dp (a timed deploy).
  function torch.to_device(t, dp, o)
    if not tc.is_tensor(t) then
      error(("torch.to_device: argument 1 must be a host tensor, got %s%s"):format(describe(t),
        getmetatable(t) == Device and " (it is on the device already)" or ""), 2)
    end
    if dp ~= nil and not placement.is_policy(dp) then
      error(("torch.to_device: argument 2 must be a DPPolicy{...} (or nil: replicated), got %s"):format(describe(dp)), 2)
    end
    if o ~= nil and type(o) ~= "table" then
      error(("torch.to_device: options must be a table {name =}, got %s"):format(type(o)), 2)
    end
    o = o or {}
    local dt = create(t.shape, { dtype = t.dtype, dp = dp, name = o.name }, "torch.to_device")
    dt:copy_(t)
    return dt
  end

  torch.ahbm = {
    set_device = function(rank) -- nil: no current device again (SIP 0 by default)
      if rank ~= nil and (math.type(rank) ~= "integer" or rank < 0 or rank >= P.sips) then
        error(("torch.ahbm.set_device(%s): the topology has SIPs 0 .. %d"):format(tostring(rank), P.sips - 1), 2)
      end
      local co = coroutine.running()
      if workers[co] then worker_device[co] = rank or false else main_device = rank end
    end,
    current_device = function() return current_device() end,
    device_count = function() return P.sips end,
  }
  torch.accelerator = { set_device_index = torch.ahbm.set_device,
                        current_device_index = torch.ahbm.current_device }

  --- Runs the simulation until `h` (a handle or an event) has completed;
  -- returns its value.
  function torch.wait(h)
    if getmetatable(h) == Handle then return torch.wait(h.finished) end
    if workers[coroutine.running()] then -- a spawn worker: the scheduler drains, then resumes it
      coroutine.yield { wait = h }
      return h:value()
    end
    local mt = type(h) == "userdata" and getmetatable(h)
    local kind = type(mt) == "table" and mt.__name
    if kind ~= "kernbench.event" and kind ~= "kernbench.process" then
      error(("torch.wait: expected a handle (from copy_, launch_async, d.mapped), an event or a process, got %s"):format(
        describe(h)), 2)
    end
    if not h:processed() then
      s:spawn(function()
        h:wait()
        s:stop()
      end, "torch.wait")
      s:run()
      if not h:processed() then
        error("torch.wait: the simulation ran out of work but the handle is not done", 2)
      end
    end
    return h:value()
  end

  --- Drains every outstanding operation.
  function torch.synchronize()
    if workers[coroutine.running()] then
      coroutine.yield { synchronize = true }
      return
    end
    s:run()
  end
  torch.wait_all = torch.synchronize

  --- Simulated time now, in ns (the runtime starts at 0: the bench's elapsed time).
  function torch.now_ns() return s:now() end
  torch.elapsed_ns = torch.now_ns

  --- Frees every live device tensor and drains; the allocators are back to
  -- their initial state afterwards.
  function torch.cleanup()
    torch.uninstall_ipcq()
    for _, d in ipairs(live) do -- what still runs on a tensor ends first
      if #active_users(d) > 0 then torch.synchronize() break end
    end
    for i = #live, 1, -1 do live[i]:free() end
    torch.synchronize()
  end

  --- Allocates nbytes of PE (sip, cube, pe)'s TCM (16-byte aligned); returns
  -- the physical address and the TCM offset. Errors name the PE and sizes.
  -- Integer arguments of the PE functions, named in errors.
  -- The first three are a PE's sip, cube, pe: checked against the topology.
  local function check_ints(call, names, ...)
    for i, name in ipairs(names) do
      local v = select(i, ...)
      if math.type(v) ~= "integer" or v < 0 then
        error(("%s: %s must be an integer >= 0, got %s"):format(call, name,
          type(v) == "number" and tostring(v) or describe(v)), 3)
      end
    end
    local sip, cube, pe = ...
    if sip >= P.sips or cube >= P.cubes_per_sip or pe >= P.pes_per_cube then
      error(("%s: no PE sip%d.cube%d.pe%d: the topology has %d SIP(s) of %d cube(s) of %d PE(s)"):format(call, sip,
        cube, pe, P.sips, P.cubes_per_sip, P.pes_per_cube), 3)
    end
  end

  function torch.alloc_tcm(sip, cube, pe, nbytes)
    check_ints("torch.alloc_tcm", { "sip", "cube", "pe", "nbytes" }, sip, cube, pe, nbytes)
    local off, err = pe_c.tcm_alloc(s, sip, cube, pe, nbytes)
    if not off then error("torch.alloc_tcm: " .. err, 2) end
    return kb.addr.pe_tcm(sip, cube, pe, off), off
  end

  function torch.free_tcm(sip, cube, pe, off)
    check_ints("torch.free_tcm", { "sip", "cube", "pe", "offset" }, sip, cube, pe, off)
    local ok, err = pe_c.tcm_free(s, sip, cube, pe, off)
    if not ok then error("torch.free_tcm: " .. err, 2) end
  end

  -- ---- kernel launches (kernbench.launch) ----
  torch.data = data
  torch.verify_data = mode == "verify"
  require("kernbench.launch").attach(torch, {
    s = s, P = P, data = torch.data,
    sip = function() return current_device() or 0 end,
    pa_fallback = opts.pa_fallback or false,
    count_request = function() requests = requests + 1 end,
    wait = function(ev) return torch.wait(ev) end,
    handle = handle,
    tensor_at = tensor_at,
    use = use,
  })

  -- ---- PE-to-PE queues (kernbench.ccl.install) ----
  require("kernbench.ccl.install").attach(torch, {
    s = s, P = P, topo = topo, slice_allocator = slice_allocator,
    sip = function() return current_device() or 0 end,
    count_request = function() requests = requests + 1 end,
    wait = function(ev) return torch.wait(ev) end,
  })

  -- ---- ranks: torch.multiprocessing and torch.distributed (kernbench.ccl) ----
  require("kernbench.ccl.spawn").attach(torch, { s = s, P = P, workers = workers })
  require("kernbench.ccl.distributed").attach(torch, { P = P, rank = torch.multiprocessing.current_rank })

  torch.tcm_reserved_bytes = tcm_reserved
  torch.tcm_bytes = tcm_bytes

  --- Whether every allocator is back to its initial state.
  function torch.allocators_pristine()
    if not va_alloc:is_pristine() or not pe_c.tcm_pristine(s) then return false end
    for _, a in pairs(hbm_alloc) do
      if not a:is_pristine() then return false end
    end
    return true
  end

  --- Translates a VA on PE (sip, cube, pe) through its page table: the PA
  -- and the translation's cost in ns (that PE's PE_MMU tlb_overhead_ns).
  function torch.translate(sip, cube, pe, va)
    check_ints("torch.translate", { "sip", "cube", "pe", "va" }, sip, cube, pe, va)
    local pa, cost = pe_c.mmu_translate(s, sip, cube, pe, va, opts.pa_fallback, "torch.translate")
    if not pa then error(cost, 2) end
    return pa, cost
  end

  -- ---- checking results against a CPU reference (--verify-data) ----
  local TOL = { f32 = 1e-5, f16 = 1e-3, bf16 = 1e-2 } -- rtol = atol per dtype (docs/decisions.md); integers exact
  local verified = {}

  --- Compares `got` (a host tensor, e.g. from d:cpu()) with `expected`
  -- using the dtype's tolerance: |got - expected| <= tol + tol * |expected|
  -- (exact for integers). Returns the worst absolute error, or nil in
  -- timing-only runs (values are not computed; nothing to compare). A
  -- mismatch raises an error naming the tensor and the worst element.
  function torch.verify(name, got, expected, o)
    if getmetatable(got) == Device then -- read back (timed) in both modes; compared in data mode only
      check_live(got, "verify")
      settle(got)
      if not data then
        read_back(got)
        got = nil
      else
        got = read_back(got)
      end
    end
    if (got ~= nil and not tc.is_tensor(got)) or (got == nil and data) or not tc.is_tensor(expected) then
      error(("torch.verify(%s): got must be a host or device tensor and expected a host tensor, "
             .. "got %s and %s"):format(tostring(name), describe(got), describe(expected)), 2)
    end
    if o ~= nil and type(o) ~= "table" then
      error(("torch.verify(%s): options must be a table {tol =}, got %s"):format(tostring(name), type(o)), 2)
    end
    if not data then return nil end
    local dt = got.dtype
    local tol = (o and o.tol) or TOL[dt] or 0
    local diff = tc.abs(tc.sub(got:float(), expected:float()))
    local r = { name = name, dtype = dt, worst = 0, tol = tol }
    if diff:numel() > 0 then -- the element with the largest |got - expected|
      local v, flat = tc.max(diff:flatten(), 0)
      r.worst, r.index = v:item(), worst_index(got:size(), flat:item())
      r.got, r.expected = got:float():flatten():get(flat:item()), expected:float():flatten():get(flat:item())
    end
    r.ok = tc.allclose(got:float(), expected:float(), tol, tol)
    verified[#verified + 1] = r
    if not r.ok then
      error(("verify %s: %s result differs from the reference beyond rtol = atol = %g: %s"):format(
        name, dt, tol, M.describe_worst(r)), 2)
    end
    return r.worst
  end

  --- What torch.verify checked so far: a list of {name, dtype, tol, ok, worst
  -- (the largest |got - expected|), index (0-based, of that element), got, expected}.
  function torch.verified() return verified end

  function torch.stats()
    local st = s:stats()
    return { requests = requests, sim_ns = st.sim_ns, events = st.events, live_tensors = #live }
  end

  function torch.close() s:close() end

  return torch
end

return M
