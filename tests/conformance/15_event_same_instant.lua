-- Events triggered and waited on in the same instant: T succeeds an event W1
-- and W2 wait on, then waits on it itself (woken after them); S succeeds its
-- own event and waits on it; L waits on the processed event and goes on at once.
local s = sim.new()
local ev = s:event()

local function waiter(n)
  local v = ev:wait()
  print(string.format('t=%d %s woke: %s', s:now(), n, v))
end

local function trigger()
  s:sleep(1)
  print(string.format('t=%d T succeeds ev (triggered=%s processed=%s)', s:now(), tostring(ev:triggered()), tostring(ev:processed())))
  ev:succeed('go')
  print(string.format('t=%d T after succeed (triggered=%s processed=%s ok=%s)', s:now(), tostring(ev:triggered()), tostring(ev:processed()), tostring(ev:ok())))
  local v = ev:wait()
  print(string.format('t=%d T woke on ev: %s (processed=%s)', s:now(), v, tostring(ev:processed())))
end

local function self_event()
  s:sleep(1)
  local mine = s:event()
  mine:succeed('own')
  print(string.format('t=%d S succeeded its own event', s:now()))
  local v = mine:wait()
  print(string.format('t=%d S woke on own event: %s', s:now(), v))
end

local function bystander()
  s:sleep(1)
  print(string.format('t=%d B at 1', s:now()))
  s:sleep(0)
  print(string.format('t=%d B after sleep 0', s:now()))
end

local function late()
  s:sleep(2)
  print(string.format('t=%d L waits on processed ev', s:now()))
  local v = ev:wait()
  print(string.format('t=%d L got %s at once', s:now(), v))
  v = ev:wait()
  print(string.format('t=%d L got %s again', s:now(), v))
end

s:spawn(waiter, 'W1')
s:spawn(trigger)
s:spawn(waiter, 'W2')
s:spawn(self_event)
s:spawn(bystander)
s:spawn(late)
s:run()
print('done t=' .. s:now())
