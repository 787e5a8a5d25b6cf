-- Interrupts of sleeping and waiting processes: the interrupt is thrown into
-- the process, which catches it and goes on (re-waiting on the same event,
-- sleeping again); its old timeout is still processed, waking nobody; an
-- interrupt in the instant a process is spawned runs after its start; two
-- interrupts in one instant reach a process that survives the first; an
-- interrupt of a process that ends in the same instant is ignored.
local s = sim.new()
local gate = s:event()

local function sleeper(name, d)
  local n = 0
  while n < 3 do
    local ok, i = pcall(s.sleep, s, d)
    if ok then
      print(string.format('t=%d %s woke', s:now(), name))
      n = n + 1
    elseif sim.is_interrupt(i) then
      print(string.format('t=%d %s interrupted: %s', s:now(), name, i.cause))
      n = n + 1
    else
      error(i, 0)
    end
  end
  return name
end

local function gatekeeper(name)
  while true do
    local ok, v = pcall(gate.wait, gate)
    if ok then
      print(string.format('t=%d %s passed gate with %s', s:now(), name, v))
      return v
    elseif sim.is_interrupt(v) then
      print(string.format('t=%d %s interrupted at gate: %s', s:now(), name, v.cause))
    else
      error(v, 0)
    end
  end
end

local function quick(name)
  s:sleep(5)
  print(string.format('t=%d %s ends', s:now(), name))
end

local function joiner(p)
  local ok, e = pcall(p.wait, p)
  if not ok and sim.is_interrupt(e.message) then
    print(string.format('t=%d J: Q failed with interrupt %s', s:now(), e.message.cause))
  end
end

local function boss()
  local s1 = s:spawn(sleeper, 'S1', 5)
  local g1 = s:spawn(gatekeeper, 'G1')
  local q = s:spawn(quick, 'Q')
  s:spawn(joiner, q)
  s1:interrupt('early')           -- in the instant S1 was spawned
  s:sleep(1)
  q:interrupt('late1')            -- Q does not catch it and fails ...
  q:interrupt('late2')            -- ... so this one is ignored
  g1:interrupt('one')
  g1:interrupt('two')
  print(string.format('t=%d boss sent (q alive=%s)', s:now(), tostring(q:alive())))
  s:sleep(2)
  s1:interrupt('again')
  s:sleep(1)
  gate:succeed('open')
  local v = g1:wait()
  print(string.format('t=%d boss joined G1: %s', s:now(), v))
  v = s1:wait()
  print(string.format('t=%d boss joined S1: %s', s:now(), v))
end

local function victim()
  local ok, i = pcall(s.sleep, s, 10)
  if not ok then
    print(string.format('t=%d V caught %s', s:now(), i.cause))
  end
end

local v = s:spawn(victim)
s:spawn(boss)

local function late_killer()
  s:sleep(1)
  v:interrupt('k1')
end

s:spawn(late_killer)
s:run()
print(string.format('done t=%d', s:now()))
