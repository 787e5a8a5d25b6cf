-- Interrupts during blocking store and resource calls: the request goes on
-- without its process (SimPy removes only the process's callback). A get
-- interrupted while waiting keeps its place and takes a later item; one
-- interrupted after being served (before its processing) keeps its item; a
-- put interrupted while the store is full still puts its item later; an
-- acquire interrupted while queued is granted later and keeps the slot.
local s = sim.new()
local st = s:store(1)
local res = s:resource(2)
local sig = {}

local function getter(name, pre)
  if pre then sig[name]:succeed() end
  local ok, x = pcall(st.get, st)
  if ok then
    print(string.format('t=%d %s got %s', s:now(), name, x))
  else
    print(string.format('t=%d %s interrupted (%s) items=%d getters=%d', s:now(), name, x.cause, st:count(), st:getters()))
  end
end

local function putter(name, x)
  local ok, i = pcall(st.put, st, x)
  if ok then
    print(string.format('t=%d %s put %s', s:now(), name, x))
  else
    print(string.format('t=%d %s interrupted (%s) putters=%d', s:now(), name, i.cause, st:putters()))
  end
end

local function acquirer(name, pre, hold)
  if pre then sig[name]:succeed() end
  local ok, i = pcall(function()
    res:acquire()
    print(string.format('t=%d %s has a slot (in_use=%d)', s:now(), name, res:in_use()))
    s:sleep(hold)
    res:release()
    print(string.format('t=%d %s released (in_use=%d queued=%d)', s:now(), name, res:in_use(), res:queued()))
  end)
  if not ok then
    print(string.format('t=%d %s interrupted (%s) in_use=%d queued=%d', s:now(), name, i.cause, res:in_use(), res:queued()))
  end
end

local function boss()
  local g1 = s:spawn(getter, 'G1', false)
  s:sleep(1)
  g1:interrupt('g1')                       -- waiting: its get stays queued
  local g2 = s:spawn(getter, 'G2', false)
  s:sleep(1)
  st:put('i1')                             -- taken by G1's orphaned get
  print(string.format('t=%d boss put i1 items=%d getters=%d', s:now(), st:count(), st:getters()))
  st:put('i2')                             -- G2 gets it
  s:sleep(1)
  st:put('i3')
  sig['G3'] = s:event()
  local g3 = s:spawn(getter, 'G3', true)   -- served at once, interrupted before its processing
  sig['G3']:wait()
  g3:interrupt('g3')
  s:sleep(1)
  print(string.format('t=%d boss items=%d', s:now(), st:count()))
  st:put('i4')
  local p1 = s:spawn(putter, 'P1', 'i5')   -- the store is full: waits
  s:sleep(1)
  p1:interrupt('p1')
  s:sleep(1)
  local x = st:get()
  print(string.format('t=%d boss got %s items=%d', s:now(), x, st:count()))
  x = st:get()
  print(string.format('t=%d boss got %s items=%d', s:now(), x, st:count()))
  local a1 = s:spawn(acquirer, 'A1', false, 10)
  local a2 = s:spawn(acquirer, 'A2', false, 3)
  local a3 = s:spawn(acquirer, 'A3', false, 1)
  s:sleep(1)
  a3:interrupt('a3')                       -- queued: granted later, holds the slot
  s:sleep(5)
  print(string.format('t=%d boss in_use=%d queued=%d', s:now(), res:in_use(), res:queued()))
  s:sleep(5)
  sig['A4'] = s:event()
  local a4 = s:spawn(acquirer, 'A4', true, 1)  -- granted at once, interrupted before its processing
  sig['A4']:wait()
  a4:interrupt('a4')
  s:sleep(5)
  print(string.format('t=%d boss in_use=%d queued=%d', s:now(), res:in_use(), res:queued()))
end

s:spawn(boss)
s:run()
print(string.format('done t=%d items=%d in_use=%d queued=%d', s:now(), st:count(), res:in_use(), res:queued()))
