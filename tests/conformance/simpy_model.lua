-- A model of the part of kernbench's `sim` Lua API the conformance scenarios
-- use, written as a literal transcription of SimPy 3.0.11 (environment heap of
-- (time, priority, sequence), events with callback lists, Process._resume,
-- Condition._check, BaseResource with Store and Resource). It is NOT part of
-- kernbench: it only checks that a scenario's .lua is a faithful twin of its
-- .py, independently of kernbench's own scheduling:
--   kernbench -q -e 'sim = dofile("tests/conformance/simpy_model.lua")' \
--     tests/conformance/NN_name.lua | diff tests/conformance/NN_name.log -
-- Blocking calls are coroutine yields; an unhandled failure makes run/step
-- raise {message = reason}; run() without until raises 'deadlock' when a
-- non-daemon process is still blocked, as kernbench does.
local M = {}
local URGENT, NORMAL = 0, 1
local PENDING = setmetatable({}, {__tostring = function() return 'PENDING' end})

local Sim = {}; Sim.__index = Sim
local Event = {}; Event.__index = Event

local function errobj(msg, proc)
  return setmetatable({message = msg, process = proc},
    {__tostring = function(e) return 'error: ' .. tostring(e.message) end})
end

-- heap of {t, prio, eid, ev}
local function less(a, b)
  if a[1] ~= b[1] then return a[1] < b[1] end
  if a[2] ~= b[2] then return a[2] < b[2] end
  return a[3] < b[3]
end
local function hpush(h, x)
  h[#h + 1] = x
  local i = #h
  while i > 1 do
    local p = i // 2
    if less(h[i], h[p]) then h[i], h[p] = h[p], h[i]; i = p else break end
  end
end
local function hpop(h)
  local top = h[1]; local n = #h
  h[1] = h[n]; h[n] = nil; n = n - 1
  local i = 1
  while true do
    local l, r, m = 2 * i, 2 * i + 1, i
    if l <= n and less(h[l], h[m]) then m = l end
    if r <= n and less(h[r], h[m]) then m = r end
    if m == i then break end
    h[i], h[m] = h[m], h[i]; i = m
  end
  return top
end

function M.new()
  return setmetatable({_now = 0, _q = {}, _eid = 0, _active = nil, _procs = {}}, Sim)
end

function Sim:schedule(ev, prio, delay)
  self._eid = self._eid + 1
  hpush(self._q, {self._now + (delay or 0), prio or NORMAL, self._eid, ev})
end

local function new_event(s)
  return setmetatable({s = s, callbacks = {}, _value = PENDING}, Event)
end

function Sim:event() return new_event(self) end
function Sim:now() return self._now end
function Sim:current() return self._active end
function Sim:peek() if #self._q == 0 then return math.huge end return self._q[1][1] end

function Sim:timeout(d, v)
  local ev = new_event(self)
  ev._value = v; ev._ok = true
  self:schedule(ev, NORMAL, d)
  return ev
end

-- blocking: yield the event to the process driver; get (ok, packed values)
local function block(s, ev)
  local p = s._active
  if not p then error('would block outside a process', 2) end
  local ok, v = coroutine.yield(ev)
  if not ok then error(v, 0) end
  return v
end

function Event:succeed(v)
  if self._value ~= PENDING then error('already triggered') end
  self._ok = true; self._value = v
  self.s:schedule(self)
  return self
end
function Event:fail(r)
  if self._value ~= PENDING then error('already triggered') end
  self._ok = false; self._value = r
  self.s:schedule(self)
  return self
end
function Event:triggered() return self._value ~= PENDING end
function Event:processed() return self.callbacks == nil end
function Event:ok() if self._value == PENDING then return nil end return self._ok end
function Event:value()
  if self._value == PENDING then error('not triggered') end
  if not self._ok then error(self._value, 0) end
  if self.rets then return table.unpack(self.rets, 1, self.rets.n) end
  if self.anyidx then return self._value, self.anyidx end
  return self._value
end
function Event:wait()
  local s = self.s
  if s._active == nil then
    if self.callbacks == nil then return self:value() end
    error('would block outside a process')
  end
  block(s, self)
  return self:value()
end
function Event:alive() return self._value == PENDING end
function Event:add_callback(fn)
  if self.callbacks == nil then error('processed') end
  self.callbacks[#self.callbacks + 1] = function(e) fn(e) end
end
function Event:defuse() self._defused = true end
function Event:defused() return self._defused == true end
function Event:name() return self._name end

-- processes
local function resume(p, ev)
  local s = p.s
  s._active = p
  while true do
    local res
    if ev == nil then -- start
      res = table.pack(coroutine.resume(p.co, table.unpack(p.args, 1, p.args.n)))
    elseif ev._ok then
      res = table.pack(coroutine.resume(p.co, true, ev._value))
    else
      ev._defused = true
      res = table.pack(coroutine.resume(p.co, false, ev._value))
    end
    if not res[1] then
      coroutine.close(p.co) -- Python's `with` blocks exit as the exception leaves
      local e = res[2]
      if type(e) ~= 'table' or getmetatable(e) == nil or e.process == nil then e = errobj(e, p) end
      p._ok = false; p._value = e
      s:schedule(p)
      break
    elseif coroutine.status(p.co) == 'dead' then
      p._ok = true; p._value = res[2]
      p.rets = table.pack(table.unpack(res, 2, res.n))
      s:schedule(p)
      break
    end
    ev = res[2]
    if ev.callbacks ~= nil then
      local cb = function(e) resume(p, e) end
      ev.callbacks[#ev.callbacks + 1] = cb
      p._target = ev; p._cb = cb -- what an interrupt withdraws
      break
    end
  end
  s._active = nil
end

function Sim:spawn(a, ...)
  local fn, args, daemon, name
  if type(a) == 'table' then
    fn = a.fn; args = a.args and table.pack(table.unpack(a.args)) or table.pack()
    daemon = a.daemon; name = a.name
  else
    fn = a; args = table.pack(...)
  end
  local p = new_event(self)
  p.co = coroutine.create(fn); p.args = args; p.daemon = daemon; p._name = name
  self._procs[#self._procs + 1] = p
  local init = new_event(self)
  init._ok = true; init._value = nil
  init.callbacks[1] = function() resume(p, nil) end
  self:schedule(init, URGENT)
  return p
end

function Sim:sleep(d) block(self, self:timeout(d)) end

-- interrupts: SimPy's Interruption event (URGENT), which removes the
-- process's resume callback from its target and throws into it
local INTR = {__tostring = function(e) return 'interrupt: ' .. tostring(e.cause) end}
function M.is_interrupt(e) return getmetatable(e) == INTR end
function Event:interrupt(cause)
  local s = self.s
  if self._value ~= PENDING then error('process has terminated and cannot be interrupted') end
  if s._active == self then error('a process is not allowed to interrupt itself') end
  local it = new_event(s)
  it._ok = false; it._defused = true
  it._value = setmetatable({cause = cause}, INTR)
  it.callbacks[1] = function(ev)
    if self._value ~= PENDING then return end
    local t = self._target
    if t and t.callbacks then
      for i, cb in ipairs(t.callbacks) do
        if cb == self._cb then table.remove(t.callbacks, i); break end
      end
    end
    resume(self, ev)
  end
  s:schedule(it, URGENT)
end

-- conditions
local function condition(s, evs, all)
  local c = new_event(s)
  c.events = evs; c.count = 0
  if #evs == 0 then
    c:succeed(all and {} or nil)
    return c
  end
  local function check(ev)
    if c._value ~= PENDING then return end
    c.count = c.count + 1
    if not ev._ok then
      ev._defused = true
      c:fail(ev._value)
    elseif (all and c.count == #evs) or (not all and c.count > 0) then
      if all then
        c:succeed(true)
      else
        for i, m in ipairs(evs) do if m == ev then c.anyidx = i end end
        c:succeed(ev._value)
      end
    end
  end
  c.check = check
  for _, ev in ipairs(evs) do
    if ev.callbacks == nil then check(ev) else ev.callbacks[#ev.callbacks + 1] = check end
  end
  c.callbacks[#c.callbacks + 1] = function(ev)
    -- remove check callbacks (recursively, as SimPy does)
    local function rm(cond)
      for _, m in ipairs(cond.events) do
        if m.callbacks then
          for i = #m.callbacks, 1, -1 do
            if m.callbacks[i] == cond.check then table.remove(m.callbacks, i); break end
          end
        end
        if m.events then rm(m) end
      end
    end
    rm(c)
    if ev._ok and all then
      local vals = {}
      for i, m in ipairs(evs) do vals[i] = m._value end
      c._value = vals
    end
  end
  return c
end
function Sim:all_of(evs) return condition(self, evs, true) end
function Sim:any_of(evs) return condition(self, evs, false) end

-- stores and resources (SimPy's BaseResource: only the head of a queue is tried)
local Store = {}; Store.__index = Store
local function trigger_put(st)
  local e = st.putq[1]
  if e then
    st:do_put(e)
    if e._value ~= PENDING then table.remove(st.putq, 1) end
  end
end
local function trigger_get(st)
  local e = st.getq[1]
  if e then
    st:do_get(e)
    if e._value ~= PENDING then table.remove(st.getq, 1) end
  end
end
local function mk_put(st, init)
  local e = new_event(st.s)
  e.proc = st.s._active
  if init then init(e) end
  st.putq[#st.putq + 1] = e
  e.callbacks[1] = function() trigger_get(st) end
  trigger_put(st)
  return e
end
local function mk_get(st, init)
  local e = new_event(st.s)
  e.proc = st.s._active
  if init then init(e) end
  st.getq[#st.getq + 1] = e
  e.callbacks[1] = function() trigger_put(st) end
  trigger_get(st)
  return e
end

function Sim:store(cap)
  return setmetatable({s = self, cap = cap or math.huge, items = {}, putq = {}, getq = {}}, Store)
end
function Store:do_put(e)
  if #self.items < self.cap then
    self.items[#self.items + 1] = e.item
    e:succeed(nil)
  end
end
function Store:do_get(e)
  if #self.items > 0 then e:succeed(table.remove(self.items, 1)) end
end
function Store:put(v)
  local e = mk_put(self, function(e) e.item = v end)
  if self.s._active then block(self.s, e) end
end
function Store:get()
  local e = mk_get(self)
  if self.s._active then return block(self.s, e) end
  if e.callbacks ~= nil and e._value == PENDING then error('would block') end
  return e._value
end
function Store:count() return #self.items end
function Store:getters() return #self.getq end
function Store:putters() return #self.putq end

-- requests as events: SimPy's Put/Get events, cancel, `with` (close)
local function unqueue(q, e)
  for i, x in ipairs(q) do if x == e then table.remove(q, i); return true end end
  return false
end
function Store:put_event(v)
  local e = mk_put(self, function(e) e.item = v end)
  e.queue = self.putq
  return e
end
function Store:get_event()
  local e = mk_get(self)
  e.queue = self.getq
  return e
end
function Event:cancel()
  if self._value ~= PENDING then return false end
  return unqueue(self.queue, self)
end
function Event:release() self.res:release(self) end
function Event:close()
  if self.queue then self:cancel() end
  if self.res then self.res:release(self) end
end
Event.__close = function(e) e:close() end

local Res = {}; Res.__index = Res
function Sim:resource(cap)
  return setmetatable({s = self, cap = cap or 1, _users = {}, putq = {}, getq = {}}, Res)
end
function Res:do_put(e)
  if #self._users < self.cap then
    self._users[#self._users + 1] = e
    e:succeed(nil)
  end
end
function Res:do_get(e)
  for i, u in ipairs(self._users) do
    if u == e.request then table.remove(self._users, i); break end
  end
  e:succeed(nil)
end
function Res:acquire()
  local e = mk_put(self)
  block(self.s, e)
end
function Res:request()
  local e = mk_put(self)
  e.queue = self.putq; e.res = self
  return e
end
function Res:release(given)
  local p = self.s._active
  local req = given
  if given then
    mk_get(self, function(e) e.request = req end)
    return
  end
  for _, u in ipairs(self._users) do if u.proc == p then req = u; break end end
  if not req then error('release: no slot held') end
  mk_get(self, function(e) e.request = req end)
end
function Res:in_use() return #self._users end
function Res:users() local t = {} for i, u in ipairs(self._users) do t[i] = u end return t end
function Res:queue() local t = {} for i, u in ipairs(self.putq) do t[i] = u end return t end
function Res:queued() return #self.putq end

-- BaseResource's general loop (Container, PriorityStore, FilterStore,
-- PriorityResource, PreemptiveResource): go on while do_* says so
local function trigger_loop(obj, q, fn)
  local idx = 1
  while idx <= #q do
    local e = q[idx]
    local proceed = fn(obj, e)
    if e._value == PENDING then idx = idx + 1 else table.remove(q, idx) end
    if not proceed then break end
  end
end
local Shared = {}; Shared.__index = Shared
local function new_shared(s, kind, fields)
  local o = setmetatable(fields, Shared)
  o.s = s; o.kind = kind; o.putq = {}; o.getq = {}
  return o
end
function Shared:mk(put, init)
  local e = new_event(self.s)
  e.proc = self.s._active
  if init then init(e) end
  local q = put and self.putq or self.getq
  e.queue = q
  if put and self.sorted then
    local pos = #q + 1
    for i, x in ipairs(q) do if self.less(e, x) then pos = i; break end end
    table.insert(q, pos, e)
  else
    q[#q + 1] = e
  end
  if put then
    e.callbacks[1] = function() trigger_loop(self, self.getq, self.do_get) end
    trigger_loop(self, self.putq, self.do_put)
  else
    e.callbacks[1] = function() trigger_loop(self, self.putq, self.do_put) end
    trigger_loop(self, self.getq, self.do_get)
  end
  return e
end
function Shared:blocking(e)
  if self.s._active then return block(self.s, e) end
  if e._value == PENDING then e:cancel(); error('would block') end
  return e._value
end
function Shared:getters() return #self.getq end
function Shared:putters() return #self.putq end

-- Container
function Sim:container(a, b)
  local cap, init = math.huge, 0
  if type(a) == 'table' then cap = a.capacity or cap; init = a.init or 0 else cap = a or cap; init = b or 0 end
  return new_shared(self, 'container', {cap = cap, lvl = init,
    do_put = function(c, e)
      if c.cap - c.lvl >= e.amount then c.lvl = c.lvl + e.amount; e:succeed(nil); return true end
    end,
    do_get = function(c, e)
      if c.lvl >= e.amount then c.lvl = c.lvl - e.amount; e:succeed(nil); return true end
    end})
end
function Shared:level() return self.lvl end
function Shared:put_event(a, b)
  if self.kind == 'container' then return self:mk(true, function(e) e.amount = a end) end
  return self:mk(true, function(e) e.item = a; e.prio = b == nil and a or b end)
end
function Shared:get_event(f)
  if self.kind == 'container' then return self:mk(false, function(e) e.amount = f end) end
  return self:mk(false, function(e) e.filter = f end)
end
function Shared:put(a, b) self:blocking(self:put_event(a, b)) end
function Shared:get(f) return self:blocking(self:get_event(f)) end

-- PriorityStore: Python's heapq on the priorities
local function siftdown(h, start, pos)
  local new = h[pos]
  while pos > start do
    local parent = (pos - 2) // 2 + 1
    if new.prio < h[parent].prio then h[pos] = h[parent]; pos = parent else break end
  end
  h[pos] = new
end
local function siftup(h, pos)
  local n, start, new = #h, pos, h[pos]
  local child = 2 * pos
  while child <= n do
    local right = child + 1
    if right <= n and not (h[child].prio < h[right].prio) then child = right end
    h[pos] = h[child]; pos = child; child = 2 * pos
  end
  h[pos] = new
  siftdown(h, start, pos)
end
function Sim:priority_store(cap)
  return new_shared(self, 'pstore', {cap = cap or math.huge, items = {},
    do_put = function(st, e)
      if #st.items < st.cap then
        st.items[#st.items + 1] = {prio = e.prio, item = e.item}
        siftdown(st.items, 1, #st.items)
        e:succeed(nil)
      end
    end,
    do_get = function(st, e)
      local h = st.items
      if #h > 0 then
        local last = table.remove(h)
        local top = last
        if #h > 0 then top = h[1]; h[1] = last; siftup(h, 1) end
        e:succeed(top.item)
      end
    end})
end
function Sim:filter_store(cap)
  return new_shared(self, 'fstore', {cap = cap or math.huge, items = {},
    do_put = function(st, e)
      if #st.items < st.cap then st.items[#st.items + 1] = {item = e.item}; e:succeed(nil) end
    end,
    do_get = function(st, e)
      for i, it in ipairs(st.items) do
        if not e.filter or e.filter(it.item) then
          table.remove(st.items, i); e:succeed(it.item); break
        end
      end
      return true
    end})
end
function Shared:count() return #self.items end

-- PriorityResource / PreemptiveResource
local function key_less(a, b)
  if a.prio ~= b.prio then return a.prio < b.prio end
  if a.time ~= b.time then return a.time < b.time end
  return a.preempt and not b.preempt
end
local function presource(s, cap, preemptive)
  return new_shared(s, 'pres', {cap = cap or 1, _users = {}, sorted = true, less = key_less,
    do_put = function(r, e)
      if preemptive and #r._users >= r.cap and e.preempt then
        local victim
        for _, u in ipairs(r._users) do if not victim or not key_less(u, victim) then victim = u end end
        if key_less(e, victim) then
          for i, u in ipairs(r._users) do if u == victim then table.remove(r._users, i); break end end
          victim.proc:interrupt({by = e.proc, usage_since = victim.usage_since, resource = r})
        end
      end
      if #r._users < r.cap then
        r._users[#r._users + 1] = e; e.usage_since = r.s._now; e:succeed(nil)
      end
    end,
    do_get = function() end})
end
function Sim:priority_resource(cap) return presource(self, cap, false) end
function Sim:preemptive_resource(cap) return presource(self, cap, true) end
function Shared:request(prio, preempt)
  if type(prio) == 'table' then preempt = prio.preempt; prio = prio.priority end
  local e = self:mk(true, function(e)
    e.prio = prio or 0; e.preempt = preempt ~= false; e.time = self.s._now
  end)
  e.res = self
  return e
end
function Shared:release(req)
  for i, u in ipairs(self._users) do if u == req then table.remove(self._users, i); break end end
  local rel = new_event(self.s)
  rel._ok = true; rel._value = nil
  rel.callbacks[1] = function() trigger_loop(self, self.putq, self.do_put) end
  self.s:schedule(rel)
end
function Shared:in_use() return #self._users end
function Shared:users() local t = {} for i, u in ipairs(self._users) do t[i] = u end return t end
function Shared:queue() local t = {} for i, u in ipairs(self.putq) do t[i] = u end return t end
function Shared:queued() return #self.putq end

-- running
function Sim:step()
  if #self._q == 0 then return 0 end
  local item = hpop(self._q)
  self._now = item[1]
  local ev = item[4]
  local cbs = ev.callbacks; ev.callbacks = nil
  for _, cb in ipairs(cbs) do cb(ev) end
  if ev._ok == false and not ev._defused then
    local v = ev._value
    if type(v) == 'table' and v.process then error(v, 0) end
    error(errobj(v), 0)
  end
  return 1
end

-- An until event stops whichever run processes it (SimPy raises
-- StopSimulation from its callback), so one left queued by a run that
-- crashed stops a later run at that time.
function Sim:run(untl)
  self._stop = false
  if type(untl) == 'table' then -- run(until=event): SimPy's StopSimulation
    local ev = untl
    if ev.callbacks == nil then -- SimPy returns until.value, a failure's too
      if not ev._ok then return ev._value end
      return ev:value()
    end
    local STOP = {}
    local stopcb = function() error(STOP, 0) end
    ev.callbacks[#ev.callbacks + 1] = stopcb
    -- a run that ends before ev is processed takes its callback back
    -- (kernbench's choice; SimPy leaves it, to stop a later run)
    local function unhook()
      if ev.callbacks then
        for i, cb in ipairs(ev.callbacks) do
          if cb == stopcb then table.remove(ev.callbacks, i); break end
        end
      end
    end
    local hit, stopped = false, false
    while true do
      local ok, r = pcall(self.step, self)
      if not ok then
        if r == STOP then hit = true; break end
        self._stop = false
        unhook()
        error(r, 0)
      end
      if r == 0 then break end
      if self._stop then stopped = true; break end -- a stale until event
    end
    self._stop = false
    if not hit then unhook() end
    if not hit then
      if stopped then return 'until' end
      error('no events left but the until event was not triggered')
    end
    return ev:value()
  end
  if untl then
    if untl <= self._now then error('until must be > now') end
    local u = new_event(self); u._ok = true; u._value = nil
    u.callbacks[1] = function() self._stop = true end
    self._eid = self._eid + 1
    hpush(self._q, {untl, URGENT, self._eid, u})
  end
  while not self._stop do
    if self:step() == 0 then break end
  end
  if self._stop then self._stop = false; return 'until' end
  for _, p in ipairs(self._procs) do
    if p._value == PENDING and not p.daemon then
      error('deadlock: process still waiting', 0)
    end
  end
  return 'empty'
end

return M
