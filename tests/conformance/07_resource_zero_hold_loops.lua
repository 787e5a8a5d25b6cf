-- Five users loop three times over a 3-slot resource: acquire, print, release
-- with no time in between; U1 and U3 also sleep 0 between rounds. Requesting
-- again right after a release queues behind the users already waiting.
local s = sim.new()
local r = s:resource(3)

local function user(n, pause)
  for k = 0, 2 do
    r:acquire()
    print(string.format('t=%d U%d round %d (in_use=%d queued=%d)', s:now(), n, k, r:in_use(), r:queued()))
    r:release()
    if pause then
      s:sleep(0)
    end
  end
  print(string.format('t=%d U%d finished', s:now(), n))
end

for n = 0, 4 do
  s:spawn(user, n, n % 2 == 1)
end
s:run()
print(string.format('done t=%d in_use=%d queued=%d', s:now(), r:in_use(), r:queued()))
