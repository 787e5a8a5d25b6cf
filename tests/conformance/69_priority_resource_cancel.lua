-- A PriorityResource with two slots and requests that renege: a cancelled
-- request leaves the sorted queue (the others keep their order); a request
-- made later with an equal priority goes behind earlier ones of that priority;
-- the main script requests and releases between runs.
local s = sim.new()
local r = s:priority_resource(2)
local names = {}

local function q()
  local t = {}
  for _, x in ipairs(r:queue()) do t[#t + 1] = names[x] end
  return table.concat(t, ' ')
end

local function user(name, prio, d, patience, hold)
  s:sleep(d)
  local req = r:request(prio)
  names[req] = name
  s:any_of{req, s:timeout(patience)}:wait()
  if req:triggered() then
    print(string.format('t=%d %s in (queue: %s)', s:now(), name, q()))
    s:sleep(hold)
    r:release(req)
  else
    req:cancel()
    print(string.format('t=%d %s leaves (queue: %s)', s:now(), name, q()))
  end
end

for _, args in ipairs{{'a', 2, 0, 9, 4}, {'b', 2, 0, 9, 4}, {'c', 3, 1, 9, 1}, {'d', 1, 1, 2, 1},
                      {'e', 3, 2, 9, 1}, {'f', 1, 2, 9, 2}, {'g', 3, 3, 1, 1}} do
  s:spawn(user, table.unpack(args))
end
s:run(3)
local m = r:request(0)
names[m] = 'main'
print(string.format('main t=%d queue: %s', s:now(), q()))
s:run(9)
print(string.format('main t=%d main in=%s queue: %s', s:now(), tostring(m:processed()), q()))
r:release(m)
s:run()
print(string.format('done t=%d in_use=%d', s:now(), r:in_use()))
