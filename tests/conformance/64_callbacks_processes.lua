-- Callbacks on processes and conditions: a callback on a process that fails
-- defuses the failure (the run goes on); one on a process that returns reads
-- its value; callbacks on an any_of and its member run in the member's order;
-- a callback on a timeout added after a process began to wait runs after it.
local s = sim.new()

local function worker(v, d)
  s:sleep(d)
  return v
end

local function failer(d)
  s:sleep(d)
  error('bad' .. d, 0)
end

local function waiter(name, ev)
  local v = ev:wait()
  print(string.format('t=%d %s woke: %s', s:now(), name, v))
end

local function on_fail(p)
  local _, e = pcall(p.value, p)
  print(string.format('t=%d cb: process failed (%s), defused', s:now(), e.message))
  p:defuse()
end

local w = s:spawn(worker, 'w1', 2)
w:add_callback(function(p) print(string.format('t=%d cb: process returned %s', s:now(), p:value())) end)
local f = s:spawn(failer, 3)
f:add_callback(on_fail)
local t1 = s:timeout(1, 't1')
local t4 = s:timeout(4, 't4')
local c = s:any_of{t1, t4}
c:add_callback(function(e) print(string.format('t=%d cb: any_of', s:now())) end)
t1:add_callback(function(e) print(string.format('t=%d cb: t1 %s', s:now(), e:value())) end)
s:spawn(waiter, 'W', t4)

local function later()
  s:sleep(1)
  t4:add_callback(function(e) print(string.format('t=%d cb: t4 %s (added late)', s:now(), e:value())) end)
end

s:spawn(later)
s:run()
print(string.format('done t=%d f ok=%s', s:now(), tostring(f:ok())))
