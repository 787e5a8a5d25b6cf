-- Failures through conditions: an all_of fails when a member failed by hand is
-- processed and its waiter catches the reason (the other members still succeed
-- later); an any_of whose first member to fire fails; an all_of over a process
-- that raises.
local s = sim.new()
local e = s:event()
local f = s:event()

local function msg(x)
  if type(x) == 'table' then return tostring(x.message) end
  return tostring(x)
end

local function st(x)
  if x:processed() then return tostring(x:value()) end
  return '-'
end

local function w_all()
  local t1 = s:timeout(1, 't1')
  local t5 = s:timeout(5, 't5')
  local c = s:all_of{t1, e, t5}
  local ok, x = pcall(c.wait, c)
  if ok then
    print(string.format('t=%d A not reached', s:now()))
  else
    print(string.format('t=%d A caught %s (t1=%s t5=%s)', s:now(), msg(x), st(t1), st(t5)))
  end
  local v = t5:wait()
  print(string.format('t=%d A then got %s', s:now(), v))
end

local function w_any()
  local t3 = s:timeout(3, 't3')
  local c = s:any_of{t3, f}
  local ok, x = pcall(c.wait, c)
  if ok then
    print(string.format('t=%d Y not reached', s:now()))
  else
    print(string.format('t=%d Y caught %s (t3=%s)', s:now(), msg(x), st(t3)))
  end
end

local function failer()
  s:sleep(2)
  e:fail('e-failed')
  f:fail('f-failed')
  print(string.format('t=%d F failed e and f', s:now()))
end

local function raiser()
  s:sleep(4)
  print(string.format('t=%d R raises', s:now()))
  error('r-failed', 0)
end

local function w_proc(r)
  local t6 = s:timeout(6, 't6')
  local c = s:all_of{r, t6}
  local ok, x = pcall(c.wait, c)
  if ok then
    print(string.format('t=%d P not reached', s:now()))
  else
    print(string.format('t=%d P caught %s (t6=%s)', s:now(), msg(x), st(t6)))
  end
end

s:spawn(w_all)
s:spawn(w_any)
s:spawn(failer)
local r = s:spawn(raiser)
s:spawn(w_proc, r)
s:run()
print('done t=' .. s:now())
