-- Conditions over processes: an all_of over workers returning values (one
-- finished and processed before the condition is built), an any_of over two
-- processes finishing in the same instant, and an any_of between a process
-- spawned in that instant and a zero timeout (the timeout decides it).
local s = sim.new()

local function st(e)
  if e:processed() then return tostring(e:value()) end
  return '-'
end

local function worker(n, d)
  if d > 0 then
    s:sleep(d)
  end
  print(string.format('t=%d %s returns', s:now(), n))
  return n:lower()
end

local function boss()
  local q = s:spawn(worker, 'Q', 0)
  s:sleep(1)
  local ws = {s:spawn(worker, 'A', 2), s:spawn(worker, 'B', 2), q}
  local vals = s:all_of(ws):wait()
  print(string.format('t=%d boss all_of: %s', s:now(), table.concat(vals, ',')))
  local x = s:spawn(worker, 'X', 1)
  local y = s:spawn(worker, 'Y', 1)
  s:any_of{x, y}:wait()
  print(string.format('t=%d boss any_of: %s %s', s:now(), st(x), st(y)))
  local z = s:spawn(worker, 'Z', 0)
  local t0 = s:timeout(0, 't0')
  s:any_of{z, t0}:wait()
  print(string.format('t=%d boss any_of: %s %s (z alive=%s)', s:now(), st(z), st(t0), tostring(z:alive())))
  local v = z:wait()
  print(string.format('t=%d boss joined z: %s', s:now(), v))
end

local function bystander()
  s:sleep(3)
  print(string.format('t=%d bystander at 3', s:now()))
  s:sleep(1)
  print(string.format('t=%d bystander at 4', s:now()))
end

s:spawn(boss)
s:spawn(bystander)
s:run()
print('done t=' .. s:now())
