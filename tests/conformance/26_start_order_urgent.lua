-- Process start-up is URGENT: processes spawned inside a process at time t
-- start before ordinary events already due at t (Q's and R's timeouts), in
-- spawn order, and a grandchild spawned by a child starts before P's sleep 0.
local s = sim.new()

local function grandchild()
  print(string.format('t=%d G starts', s:now()))
end

local function child(n, spawn)
  print(string.format('t=%d %s starts', s:now(), n))
  s:sleep(0)
  print(string.format('t=%d %s after sleep 0', s:now(), n))
  if spawn then
    s:spawn(grandchild)
    print(string.format('t=%d %s spawned G', s:now(), n))
  end
end

local function parent()
  print(string.format('t=%d P starts', s:now()))
  s:sleep(1)
  print(string.format('t=%d P spawns C1, C2', s:now()))
  s:spawn(child, 'C1', true)
  s:spawn(child, 'C2', false)
  print(string.format('t=%d P after spawning', s:now()))
  s:sleep(0)
  print(string.format('t=%d P after sleep 0', s:now()))
end

local function other(n)
  print(string.format('t=%d %s starts', s:now(), n))
  s:sleep(1)
  print(string.format('t=%d %s at 1', s:now(), n))
end

local t0 = s:timeout(0, 't0')

local function zero_waiter()
  print(string.format('t=%d Z starts (t0 processed=%s)', s:now(), tostring(t0:processed())))
  local v = t0:wait()
  print(string.format('t=%d Z got %s', s:now(), v))
end

s:spawn(parent)
s:spawn(other, 'Q')
s:spawn(zero_waiter)
s:spawn(other, 'R')
s:run()
print('done t=' .. s:now())
