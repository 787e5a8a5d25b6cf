-- A pipeline through bounded stores: a producer puts 1..8 into q1 (capacity 1,
-- pausing after every third item), stage A moves q1 -> q2 (capacity 2), stage
-- workers B1 and B2 move q2 -> q3 (B2 spends 1 per item) and two consumers take
-- from q3.
local s = sim.new()
local q1 = s:store(1)
local q2 = s:store(2)
local q3 = s:store()

local function counts()
  return string.format('(q1=%d q2=%d q3=%d)', q1:count(), q2:count(), q3:count())
end

local function producer()
  for i = 1, 8 do
    q1:put(i)
    print(string.format('t=%d P put %d %s', s:now(), i, counts()))
    if i % 3 == 0 then
      s:sleep(1)
    end
  end
end

local function stage_a()
  while true do
    local x = q1:get()
    print(string.format('t=%d A took %d %s', s:now(), x, counts()))
    q2:put(x)
    print(string.format('t=%d A passed %d %s', s:now(), x, counts()))
  end
end

local function stage_b(n, d)
  while true do
    local x = q2:get()
    print(string.format('t=%d %s took %d %s', s:now(), n, x, counts()))
    if d > 0 then
      s:sleep(d)
    end
    q3:put(x * 10)
    print(string.format('t=%d %s passed %d %s', s:now(), n, x * 10, counts()))
  end
end

local function consumer(n)
  while true do
    local x = q3:get()
    print(string.format('t=%d %s got %d %s', s:now(), n, x, counts()))
  end
end

s:spawn{fn = consumer, args = {'C1'}, daemon = true}
s:spawn{fn = stage_b, args = {'B1', 0}, daemon = true}
s:spawn{fn = stage_b, args = {'B2', 1}, daemon = true}
s:spawn{fn = stage_a, daemon = true}
s:spawn(producer)
s:spawn{fn = consumer, args = {'C2'}, daemon = true}
s:run()
print(string.format('done t=%d %s', s:now(), counts()))
