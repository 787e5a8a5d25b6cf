-- Interrupts and requests: a process waiting on its request inside a `with`
-- block is interrupted; leaving the block cancels the waiting request (or
-- releases the granted one), so the next in line is served. A process waiting
-- on any_of over requests is interrupted and withdraws them by hand.
-- Interrupting a process that has ended, or itself, is an error; an interrupt
-- nobody catches fails the process and then the run.
local s = sim.new()
local res = s:resource(1)
local st = s:store()

local function user(name, hold)
  local ok, i = pcall(function()
    local req <close> = res:request()
    req:wait()
    print(string.format('t=%d %s has the slot', s:now(), name))
    s:sleep(hold)
    print(string.format('t=%d %s done', s:now(), name))
  end)
  if not ok then
    print(string.format('t=%d %s interrupted (%s) in_use=%d queued=%d', s:now(), name, i.cause, res:in_use(), res:queued()))
  end
end

local function chooser(name)
  local g1 = st:get_event()
  local g2 = st:get_event()
  local ok, i = pcall(function() return s:any_of{g1, g2}:wait() end)
  if ok then
    print(string.format('t=%d %s got something', s:now(), name))
  else
    g1:cancel()
    g2:cancel()
    print(string.format('t=%d %s interrupted (%s) getters=%d', s:now(), name, i.cause, st:getters()))
  end
end

local function selfish()
  s:sleep(1)
  local me = s:current()
  if not pcall(me.interrupt, me, 'me') then
    print(string.format('t=%d selfish: cannot interrupt itself', s:now()))
  end
end

local function unprotected()
  s:sleep(10)
end

local function boss()
  local u1 = s:spawn(user, 'U1', 10)
  local u2 = s:spawn(user, 'U2', 2)
  local u3 = s:spawn(user, 'U3', 2)
  local c = s:spawn(chooser, 'C')
  s:spawn(selfish)
  s:sleep(1)
  u2:interrupt('u2')     -- waiting: the block cancels its request
  s:sleep(1)
  u1:interrupt('u1')     -- holding: the block releases the slot, U3 gets it
  c:interrupt('c')
  s:sleep(5)
  if not pcall(u1.interrupt, u1, 'again') then
    print(string.format('t=%d boss: U1 has ended', s:now()))
  end
  st:put('late')
  print(string.format('t=%d boss items=%d', s:now(), st:count()))
  local d = s:spawn(user, 'D', 5)
  s:sleep(1)
  d:interrupt(42)        -- caught by user()
  s:sleep(1)
  local e = s:spawn(unprotected)
  s:sleep(1)
  e:interrupt('fatal')
end

s:spawn(boss)
local ok, e = pcall(s.run, s)
if not ok then
  print(string.format('t=%d run failed: interrupt %s', s:now(), e.message.cause))
end
s:run()
print(string.format('done t=%d in_use=%d queued=%d items=%d', s:now(), res:in_use(), res:queued(), st:count()))
