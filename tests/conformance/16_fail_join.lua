-- A process that raises fails its own event; processes joining it get the error
-- raised and catch it: J1 and J1b join F1 while it runs, J2 joins F2 in the
-- instant F2 failed (before the failure is processed), J3 joins F1 long after.
local s = sim.new()

local function msg(e)
  if type(e) == 'table' then return tostring(e.message) end
  return tostring(e)
end

local function failer(n, d)
  if d > 0 then
    s:sleep(d)
  end
  print(string.format('t=%d %s raises', s:now(), n))
  error('boom-' .. n, 0)
end

local function joiner(n, p, d)
  if d > 0 then
    s:sleep(d)
  end
  print(string.format('t=%d %s joins (alive=%s)', s:now(), n, tostring(p:alive())))
  local ok, v = pcall(p.wait, p)
  if ok then
    print(string.format('t=%d %s got %s', s:now(), n, v))
  else
    print(string.format('t=%d %s caught %s (alive=%s ok=%s)', s:now(), n, msg(v), tostring(p:alive()), tostring(p:ok())))
  end
end

local function bystander()
  s:sleep(2)
  print(string.format('t=%d B at 2', s:now()))
end

local f1 = s:spawn(failer, 'F1', 2)
s:spawn(joiner, 'J1', f1, 0)
local f2 = s:spawn(failer, 'F2', 0)
s:spawn(joiner, 'J2', f2, 0)
s:spawn(bystander)
s:spawn(joiner, 'J1b', f1, 1)
s:spawn(joiner, 'J3', f1, 5)
s:run()
print('done t=' .. s:now())
