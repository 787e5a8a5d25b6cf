-- A pseudo-random model (an integer LCG written identically in both languages):
-- three producers put into a capacity-2 store after random sleeps (often 0);
-- three consumers take items and hold a 2-slot resource for random times.
-- A few hundred events; any ordering difference changes the random stream.
local s = sim.new()
local seed = 12345

local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed // 65536) % n
end

local st = s:store(2)
local r = s:resource(2)

local function producer(n)
  for i = 0, 11 do
    s:sleep(rnd(3))
    local item = n * 100 + i
    st:put(item)
    print(string.format('t=%d P%d put %d (items=%d)', s:now(), n, item, st:count()))
  end
  print(string.format('t=%d P%d finished', s:now(), n))
end

local function consumer(n)
  while true do
    local item = st:get()
    print(string.format('t=%d C%d got %d (items=%d)', s:now(), n, item, st:count()))
    r:acquire()
    local h = rnd(4)
    print(string.format('t=%d C%d holds r for %d (in_use=%d queued=%d)', s:now(), n, h, r:in_use(), r:queued()))
    s:sleep(h)
    r:release()
  end
end

for n = 1, 3 do
  s:spawn{fn = consumer, args = {n}, daemon = true}
end
for n = 1, 3 do
  s:spawn(producer, n)
end
s:run()
print(string.format('done t=%d items=%d seed=%d', s:now(), st:count(), seed))
