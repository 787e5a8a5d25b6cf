-- The value of an event triggered but not yet processed is already there:
-- a timeout's from the start, a hand event's once succeeded, a get request's
-- item once served, a process's return value once it returned; processed is
-- false until the event's turn in the queue.
local s = sim.new()
local st = s:store()
local ev = s:event()

local function quick()
  return 'q'
end

local function observer()
  local t = s:timeout(5, 'five')
  print(string.format('t=%d timeout value=%s triggered=%s processed=%s', s:now(), t:value(), tostring(t:triggered()), tostring(t:processed())))
  ev:succeed('hand')
  print(string.format('t=%d event value=%s processed=%s', s:now(), ev:value(), tostring(ev:processed())))
  st:put_event('item')
  local g = st:get_event()
  print(string.format('t=%d get triggered=%s value=%s processed=%s', s:now(), tostring(g:triggered()), g:value(), tostring(g:processed())))
  local p = s:spawn(quick)
  s:sleep(0)
  print(string.format('t=%d process triggered=%s value=%s processed=%s', s:now(), tostring(p:triggered()), p:value(), tostring(p:processed())))
  p:wait()
  print(string.format('t=%d process processed=%s', s:now(), tostring(p:processed())))
  t:wait()
  print(string.format('t=%d timeout processed=%s', s:now(), tostring(t:processed())))
end

s:spawn(observer)
s:run()
