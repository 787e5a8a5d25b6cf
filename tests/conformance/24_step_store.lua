-- The main script steps one event at a time and prints the clock, the time of
-- the next event and the store's count after each step: every event (process
-- start, timeout, store put and get, process end) is one step.
local s = sim.new()
local st = s:store(1)

local function T(x)
  if x == math.huge then return 'inf' end
  return string.format('%d', x)
end

local function prod()
  for i = 0, 2 do
    st:put(i)
    print(string.format('  P put %d', i))
    s:sleep(1)
  end
end

local function cons()
  for _ = 1, 3 do
    local x = st:get()
    print(string.format('  C got %d', x))
  end
  return 'C-done'
end

local p = s:spawn(prod)
local c = s:spawn(cons)
print(string.format('start: now=%d peek=%s', s:now(), T(s:peek())))
local k = 0
while s:step() == 1 do
  k = k + 1
  print(string.format('step %d: now=%d peek=%s items=%d P alive=%s C alive=%s', k, s:now(), T(s:peek()), st:count(), tostring(p:alive()), tostring(c:alive())))
end
print(string.format('steps=%d now=%d peek=%s', k, s:now(), T(s:peek())))
