-- Callbacks on events: they run when the event is processed, in the order
-- they and the processes waiting on it were added; a callback sees the value
-- of a timeout, a process, a condition; a failed event whose callback defuses
-- it does not crash the run, one whose callback does not does; the value of
-- an event triggered but not processed yet is there already.
local s = sim.new()

local function cb(name)
  return function(ev)
    print(string.format('t=%d cb %s ok=%s value=%s', s:now(), name, tostring(ev:ok()), ev:ok() and ev:value() or 'err'))
  end
end

local function waiter(name, ev)
  local v = ev:wait()
  print(string.format('t=%d %s woke with %s', s:now(), name, v))
end

local function worker()
  s:sleep(2)
  return 'w-done'
end

local ev = s:event()
ev:add_callback(cb('A'))
s:spawn(waiter, 'P1', ev)
ev:add_callback(cb('B'))
local t = s:timeout(3, 'tmo')
t:add_callback(cb('T'))
local w = s:spawn(worker)
w:add_callback(cb('W'))
local both = s:all_of{t, w}
both:add_callback(function(e) print(string.format('t=%d cb all_of processed', s:now())) end)

local function trigger()
  s:sleep(1)
  ev:succeed('go')
  print(string.format('t=%d triggered ev: value now %s processed=%s', s:now(), ev:value(), tostring(ev:processed())))
  s:spawn(waiter, 'P2', ev)
end

local function defuser(e)
  print(string.format('t=%d defusing %s', s:now(), select(2, pcall(e.value, e))))
  e:defuse()
end

local function failing()
  s:sleep(4)
  local bad = s:event()
  bad:add_callback(defuser)
  bad:fail('quiet')
  s:sleep(1)
  local worse = s:event()
  worse:add_callback(cb('X'))
  worse:fail('loud')
end

s:spawn(trigger)
s:spawn(failing)
local ok, e = pcall(s.run, s)
if not ok then
  print(string.format('t=%d run failed: %s', s:now(), e.message))
end
s:run()
print(string.format('done t=%d', s:now()))
