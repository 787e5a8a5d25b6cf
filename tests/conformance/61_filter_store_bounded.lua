-- A bounded FilterStore: putters wait for room, and a get taking an item from
-- the middle makes room for the first waiting putter; a get request with a
-- filter nothing matches waits while others are served past it; get requests
-- made by the main script between runs.
local s = sim.new()
local fs = s:filter_store(2)

local function putter(name, list)
  for _, x in ipairs(list) do
    fs:put(x)
    print(string.format('t=%d %s put %d (n=%d)', s:now(), name, x, fs:count()))
  end
end

local function getter(name, m, d)
  s:sleep(d)
  local x = fs:get(function(v) return v % m == 0 end)
  print(string.format('t=%d %s took %d (n=%d)', s:now(), name, x, fs:count()))
end

s:spawn(putter, 'P', {3, 5, 4, 9, 10, 7})
s:spawn(getter, 'G7', 7, 1)
s:spawn(getter, 'G2', 2, 1)
s:spawn(getter, 'G5', 5, 2)
s:run(3)
print(string.format('main t=%d n=%d getters=%d putters=%d', s:now(), fs:count(), fs:getters(), fs:putters()))
local g = fs:get_event(function(v) return v % 3 == 0 end)
local h = fs:get_event()
print(string.format('main g=%s h=%s', tostring(g:triggered()), tostring(h:triggered())))
s:run()
print(string.format('done t=%d g=%d h=%d n=%d', s:now(), g:value(), h:value(), fs:count()))
