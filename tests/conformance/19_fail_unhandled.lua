-- A failure nobody waits on crashes the run when the failed event is processed
-- (not when the process raises): Y, due in the same instant, runs first. The
-- main script catches the error, runs on, and an event failed by hand between
-- runs with no waiter crashes the next run the same way.
local s = sim.new()

local function msg(e)
  if type(e) == 'table' then return tostring(e.message) end
  return tostring(e)
end

local function x()
  s:sleep(1)
  print(string.format('t=%d X raises', s:now()))
  error('boom', 0)
end

local function y()
  s:sleep(1)
  print(string.format('t=%d Y at 1', s:now()))
  s:sleep(2)
  print(string.format('t=%d Y at 3', s:now()))
end

local px = s:spawn(x)
s:spawn(y)
local ok, e = pcall(s.run, s)
if ok then
  print('run returned')
else
  print(string.format('run failed: %s (t=%d)', msg(e), s:now()))
end
print(string.format('X alive=%s ok=%s', tostring(px:alive()), tostring(px:ok())))
s:run()
print(string.format('second run returned at t=%d', s:now()))
local ev = s:event()
ev:fail('lost')
local t = s:timeout(2, 'later')
ok, e = pcall(s.run, s)
if ok then
  print('run returned')
else
  print(string.format('run failed: %s (t=%d)', msg(e), s:now()))
end
print(string.format('t processed=%s', tostring(t:processed())))
s:run()
print(string.format('done t=%d t processed=%s', s:now(), tostring(t:processed())))
