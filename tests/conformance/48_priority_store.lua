-- PriorityStore: a get takes the item of lowest priority; items of equal
-- priority leave in heapq's order (not arrival order); waiting getters are
-- served one per put, in arrival order; a bounded store blocks puts; plain
-- numbers are their own priority.
local s = sim.new()
local ps = s:priority_store()
local nums = s:priority_store(2)

local function filler()
  for _, pn in ipairs{{3, 'c'}, {1, 'a1'}, {2, 'b1'}, {1, 'a2'}, {2, 'b2'}, {1, 'a3'}, {0, 'z'}, {2, 'b3'}} do
    ps:put({item = pn[2], priority = pn[1]}, pn[1])
  end
  print(string.format('t=%d filled %d', s:now(), ps:count()))
  s:sleep(1)
  local out = {}
  for i = 1, 5 do
    local x = ps:get()
    out[#out + 1] = string.format('%s/%d', x.item, x.priority)
  end
  print(string.format('t=%d took %s', s:now(), table.concat(out, ' ')))
  s:sleep(5)
  for _, pn in ipairs{{5, 'late5'}, {4, 'late4'}} do
    ps:put({item = pn[2], priority = pn[1]}, pn[1])
    print(string.format('t=%d put %s', s:now(), pn[2]))
  end
end

local function taker(name, d)
  s:sleep(d)
  local x = ps:get()
  print(string.format('t=%d %s took %s/%d', s:now(), name, x.item, x.priority))
end

local function num_producer()
  for _, v in ipairs{7, 3, 9, 3, 1} do
    nums:put(v)
    print(string.format('t=%d put %d (items=%d putters=%d)', s:now(), v, nums:count(), nums:putters()))
  end
end

local function num_consumer()
  s:sleep(2)
  for i = 1, 5 do
    local v = nums:get()
    print(string.format('t=%d got %d', s:now(), v))
    s:sleep(1)
  end
end

s:spawn(filler)
for i = 0, 5 do
  s:spawn{fn = taker, args = {'T' .. i, 2 + i % 2}, daemon = true}
end
s:spawn(num_producer)
s:spawn(num_consumer)
s:run()
print(string.format('done t=%d items=%d getters=%d', s:now(), ps:count(), ps:getters()))
