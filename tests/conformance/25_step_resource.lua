-- Stepping a resource model one event at a time: two users of a one-slot
-- resource with zero-length holds, and an event the main script succeeds after
-- step 4. Requests, releases, timeouts and process ends are each one step.
local s = sim.new()
local r = s:resource(1)
local ev = s:event()

local function T(x)
  if x == math.huge then return 'inf' end
  return string.format('%d', x)
end

local function user(n)
  for k = 0, 1 do
    r:acquire()
    print(string.format('  %s acquired (round %d)', n, k))
    r:release()
    print(string.format('  %s released', n))
  end
  local v = ev:wait()
  print(string.format('  %s got %s', n, v))
end

s:spawn(user, 'U1')
s:spawn(user, 'U2')
local k = 0
while s:step() == 1 do
  k = k + 1
  print(string.format('step %d: now=%d peek=%s in_use=%d queued=%d', k, s:now(), T(s:peek()), r:in_use(), r:queued()))
  if k == 4 then
    print('main succeeds ev')
    ev:succeed('go')
  end
end
print(string.format('steps=%d now=%d', k, s:now()))
