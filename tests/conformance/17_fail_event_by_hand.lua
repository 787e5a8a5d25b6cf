-- An event failed by hand while processes wait on it: each waiter gets the
-- reason raised, in the order they started waiting, and catches it; the failer
-- waits on the event itself (woken last); waiting later raises at once.
local s = sim.new()
local ev = s:event()

local function msg(e)
  if type(e) == 'table' then return tostring(e.message) end
  return tostring(e)
end

local function waiter(n)
  local ok, v = pcall(ev.wait, ev)
  if ok then
    print(string.format('t=%d %s got %s', s:now(), n, v))
  else
    print(string.format('t=%d %s caught %s', s:now(), n, msg(v)))
  end
end

local function killer()
  s:sleep(2)
  ev:fail('bad')
  print(string.format('t=%d K failed ev (triggered=%s ok=%s processed=%s)', s:now(), tostring(ev:triggered()), tostring(ev:ok()), tostring(ev:processed())))
  local ok, e = pcall(ev.wait, ev)
  if ok then
    print(string.format('t=%d K not reached', s:now()))
  else
    print(string.format('t=%d K caught %s', s:now(), msg(e)))
  end
end

local function bystander()
  s:sleep(2)
  print(string.format('t=%d B at 2', s:now()))
end

local function late()
  s:sleep(4)
  local ok, e = pcall(ev.wait, ev)
  if ok then
    print(string.format('t=%d L not reached', s:now()))
  else
    print(string.format('t=%d L caught %s at once', s:now(), msg(e)))
  end
  print(string.format('t=%d L continues', s:now()))
end

s:spawn(waiter, 'W1')
s:spawn(killer)
s:spawn(waiter, 'W2')
s:spawn(bystander)
s:spawn(late)
s:run()
print('done t=' .. s:now())
