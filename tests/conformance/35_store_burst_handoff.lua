-- Bursts in one instant: three getters wait on an empty store while main puts
-- m1, succeeds an event and puts m2 and two putters put at t=1; at t=5 two getters
-- meet two putters blocked on the full store. A processed put wakes only the head
-- getter and a processed get only the head putter (W's sleep 0 shows it).
local s = sim.new()
local st = s:store(3)
local ev = s:event()

local function getter(n, d, k)
  if d > 0 then
    s:sleep(d)
  end
  for _ = 1, k do
    local x = st:get()
    print(string.format('t=%d %s got %s (items=%d)', s:now(), n, x, st:count()))
  end
end

local function putter(n, d, xs)
  s:sleep(d)
  for _, x in ipairs(xs) do
    st:put(x)
    print(string.format('t=%d %s put %s (items=%d)', s:now(), n, x, st:count()))
  end
end

local function wake(n, e)
  e:wait()
  print(string.format('t=%d %s wakes (items=%d)', s:now(), n, st:count()))
  s:sleep(0)
  print(string.format('t=%d %s after sleep 0 (items=%d)', s:now(), n, st:count()))
end

s:spawn(getter, 'G1', 0, 2)
s:spawn(getter, 'G2', 0, 2)
s:spawn(getter, 'G3', 0, 2)
s:spawn(putter, 'P1', 1, {'a', 'b'})
s:spawn(putter, 'P2', 1, {'c', 'd'})
s:spawn(wake, 'W', ev)
s:run(1)
print(string.format('main at t=%d puts m1, succeeds ev, puts m2 (items=%d)', s:now(), st:count()))
st:put('m1')
ev:succeed()
st:put('m2')
s:run(4)
print(string.format('main at t=%d (items=%d)', s:now(), st:count()))
s:spawn(putter, 'P3', 0, {'e', 'f', 'g'})
s:spawn(putter, 'P4', 0, {'h', 'i'})
s:spawn(getter, 'G4', 1, 3)
s:spawn(wake, 'X', s:timeout(1))
s:spawn(getter, 'G5', 1, 2)
s:run()
print(string.format('done t=%d items=%d', s:now(), st:count()))
