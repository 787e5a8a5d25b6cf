-- Store hand-off order within one instant: a put into a store with room
-- completes (the putter resumes) before the waiting getter it feeds; a getter
-- arriving while an item sits in the store behind an earlier waiting getter
-- does not jump the queue.
local s = sim.new()
local st = s:store(2)

local function getter(n, d)
  if d > 0 then
    s:sleep(d)
  end
  print(string.format('t=%d %s get (items=%d)', s:now(), n, st:count()))
  local x = st:get()
  print(string.format('t=%d %s got %s (items=%d)', s:now(), n, x, st:count()))
end

local function putter()
  s:sleep(1)
  for _, x in ipairs{'a', 'b', 'c', 'd'} do
    print(string.format('t=%d P put %s (items=%d)', s:now(), x, st:count()))
    st:put(x)
    print(string.format('t=%d P put %s done (items=%d)', s:now(), x, st:count()))
  end
end

s:spawn(getter, 'G1', 0)
s:spawn(putter)
s:spawn(getter, 'G2', 1)
s:spawn(getter, 'G3', 1)
s:spawn(getter, 'G4', 2)
s:run()
print(string.format('done t=%d items=%d', s:now(), st:count()))
