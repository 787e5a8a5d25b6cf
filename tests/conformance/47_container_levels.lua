-- Container: puts and gets of amounts. Each queue is served from its head for
-- as long as requests fit and stops at the first that does not (a big get at
-- the head holds back smaller ones behind it); a put's processing serves the
-- getters, a get's the putters; requests are cancelled and made by the main
-- script between runs.
local s = sim.new()
local tank = s:container{capacity = 10, init = 4}

local function getter(name, amount, d)
  s:sleep(d)
  print(string.format('t=%d %s wants %d (level=%d)', s:now(), name, amount, tank:level()))
  tank:get(amount)
  print(string.format('t=%d %s got %d (level=%d)', s:now(), name, amount, tank:level()))
end

local function putter(name, amount, d)
  s:sleep(d)
  print(string.format('t=%d %s puts %d (level=%d)', s:now(), name, amount, tank:level()))
  tank:put(amount)
  print(string.format('t=%d %s put %d (level=%d getters=%d putters=%d)', s:now(), name, amount, tank:level(), tank:getters(), tank:putters()))
end

local function impatient(name, amount, d, patience)
  s:sleep(d)
  local req = tank:get_event(amount)
  s:any_of{req, s:timeout(patience)}:wait()
  if req:processed() then
    print(string.format('t=%d %s got %d', s:now(), name, amount))
  else
    req:cancel()
    print(string.format('t=%d %s gave up (level=%d getters=%d)', s:now(), name, tank:level(), tank:getters()))
  end
end

s:spawn(getter, 'G1', 3, 0)
s:spawn(getter, 'G2', 6, 0)
s:spawn(getter, 'G3', 1, 0)
s:spawn(putter, 'P1', 2, 1)
s:spawn(putter, 'P2', 5, 1)
s:spawn(impatient, 'I1', 9, 1, 1)
s:spawn(impatient, 'I2', 9, 2, 3)
s:spawn(putter, 'P3', 8, 3)
s:spawn(putter, 'P4', 7, 3)
s:spawn(getter, 'G4', 4, 6)
s:run(8)
print(string.format('main t=%d level=%d getters=%d putters=%d', s:now(), tank:level(), tank:getters(), tank:putters()))
local g = tank:get_event(2)
local p = tank:put_event(1)
print(string.format('main g=%s p=%s level=%d', tostring(g:triggered()), tostring(p:triggered()), tank:level()))
s:run()
print(string.format('done t=%d level=%d getters=%d putters=%d', s:now(), tank:level(), tank:getters(), tank:putters()))
