-- A condition stops watching its members once it is decided: a member of a
-- decided any_of that fails later, or the second member of an all_of to fail
-- in the same instant, has no waiter, so its failure crashes the run (the main
-- script catches it and runs on; the all_of waiter then catches the first).
local s = sim.new()
local a = s:event()
local c1 = s:event()
local c2 = s:event()

local function msg(e)
  if type(e) == 'table' then return tostring(e.message) end
  return tostring(e)
end

local function any_waiter()
  local t1 = s:timeout(1, 't1')
  s:any_of{t1, a}:wait()
  print(string.format('t=%d W any_of woke (a triggered=%s)', s:now(), tostring(a:triggered())))
end

local function all_waiter()
  local c = s:all_of{c1, c2}
  local ok, e = pcall(c.wait, c)
  if ok then
    print(string.format('t=%d V not reached', s:now()))
  else
    print(string.format('t=%d V caught %s', s:now(), msg(e)))
  end
end

local function failer()
  s:sleep(2)
  a:fail('a-failed')
  print(string.format('t=%d F failed a', s:now()))
  s:sleep(1)
  c1:fail('c1-failed')
  c2:fail('c2-failed')
  print(string.format('t=%d F failed c1 and c2', s:now()))
  s:sleep(1)
  print(string.format('t=%d F done', s:now()))
end

s:spawn(any_waiter)
s:spawn(all_waiter)
s:spawn(failer)
for _ = 1, 3 do
  local ok, e = pcall(s.run, s)
  if ok then
    print(string.format('run returned at t=%d', s:now()))
    break
  end
  print(string.format('run failed: %s (t=%d)', msg(e), s:now()))
end
print('done t=' .. s:now())
