-- A store of capacity 1: two getters wait on the empty store before a producer
-- puts six items with no time in between. Each put completes only when there
-- is room, and every get and put resumes its process in a later event of t=0.
local s = sim.new()
local st = s:store(1)

local function getter(n)
  for _ = 1, 3 do
    local item = st:get()
    print(string.format('%s got %d (items=%d)', n, item, st:count()))
  end
end

local function producer()
  for i = 0, 5 do
    print(string.format('P put %d (items=%d)', i, st:count()))
    st:put(i)
    print(string.format('P put %d done (items=%d)', i, st:count()))
  end
end

s:spawn(getter, 'G1')
s:spawn(getter, 'G2')
s:spawn(producer)
s:run()
print('done t=' .. s:now())
