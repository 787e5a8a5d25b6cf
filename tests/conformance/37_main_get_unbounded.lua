-- A get by the main script from an unbounded store takes the item at once
-- and queues its completion like any other get (peek and step see it).
local s = sim.new()

local function pk()
  local p = s:peek()
  return p == math.huge and 'inf' or string.format('%d', p)
end

local st = s:store()
st:put('a')
st:put('b')
s:run()
print(string.format('t=%d peek=%s items=%d', s:now(), pk(), st:count()))
local x = st:get()
print(string.format('main got %s peek=%s items=%d', x, pk(), st:count()))
local n = 0
while s:peek() < math.huge do
  s:step()
  n = n + 1
end
print(string.format('steps=%d', n))
