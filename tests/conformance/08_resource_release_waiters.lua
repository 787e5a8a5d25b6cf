-- One slot held by H until t=5 while W1..W4 queue at t=1..4 and N arrives at
-- t=5. At t=5 H releases, prints the state and requests again at once: the slot
-- goes to the queue in arrival order and H waits behind N.
local s = sim.new()
local r = s:resource(1)

local function state()
  return string.format('(in_use=%d queued=%d)', r:in_use(), r:queued())
end

local function holder()
  r:acquire()
  print(string.format('t=%d H acquired %s', s:now(), state()))
  s:sleep(5)
  r:release()
  print(string.format('t=%d H released %s', s:now(), state()))
  r:acquire()
  print(string.format('t=%d H acquired again %s', s:now(), state()))
  r:release()
  print(string.format('t=%d H released again %s', s:now(), state()))
end

local function waiter(n, t, hold)
  s:sleep(t)
  print(string.format('t=%d %s request %s', s:now(), n, state()))
  r:acquire()
  print(string.format('t=%d %s acquired %s', s:now(), n, state()))
  if hold > 0 then
    s:sleep(hold)
  end
  r:release()
  print(string.format('t=%d %s released %s', s:now(), n, state()))
end

s:spawn(holder)
s:spawn(waiter, 'W1', 1, 0)
s:spawn(waiter, 'W2', 2, 1)
s:spawn(waiter, 'W3', 3, 0)
s:spawn(waiter, 'W4', 4, 2)
s:spawn(waiter, 'N', 5, 0)
s:run()
print(string.format('done t=%d %s', s:now(), state()))
