-- Several processes join one running worker (one of them spawned before the
-- worker, one arriving later): they wake in the order they started waiting,
-- when the worker's completion is processed, and all get its return value.
local s = sim.new()
local w

local function worker()
  print(string.format('t=%d W starts', s:now()))
  s:sleep(3)
  print(string.format('t=%d W returns', s:now()))
  return 'w-result'
end

local function joiner(n, delay)
  if delay > 0 then
    s:sleep(delay)
  end
  print(string.format('t=%d %s joins (alive=%s)', s:now(), n, tostring(w:alive())))
  local v = w:wait()
  print(string.format('t=%d %s got %s (alive=%s)', s:now(), n, v, tostring(w:alive())))
end

local function observer()
  s:sleep(3)
  print(string.format('t=%d O sees W alive=%s triggered=%s processed=%s', s:now(), tostring(w:alive()), tostring(w:triggered()), tostring(w:processed())))
  s:sleep(0)
  print(string.format('t=%d O sees W processed=%s', s:now(), tostring(w:processed())))
end

s:spawn(joiner, 'J1', 0)
w = s:spawn(worker)
s:spawn(joiner, 'J2', 0)
s:spawn(joiner, 'J3', 1)
s:spawn(observer)
s:spawn(joiner, 'J4', 3)
s:run()
print('done t=' .. s:now())
