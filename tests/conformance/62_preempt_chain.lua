-- Preemption in a chain: each better request takes the slot of the worst user
-- in turn; a preempted user re-requests with a better priority and preempts
-- back; usage_since is when the victim got its slot.
local s = sim.new()
local bus = s:preemptive_resource(1)
local procs = {}

local function name_of(p)
  for n, q in pairs(procs) do
    if q == p then return n end
  end
  return 'main'
end

local function user(name, prios, d, hold)
  s:sleep(d)
  for _, prio in ipairs(prios) do
    local ok, i = pcall(function()
      local req <close> = bus:request(prio)
      req:wait()
      print(string.format('t=%d %s has the bus at prio %d', s:now(), name, prio))
      s:sleep(hold)
      print(string.format('t=%d %s done', s:now(), name))
    end)
    if ok then return end
    print(string.format('t=%d %s lost the bus (prio %d) to %s, held since %d',
      s:now(), name, prio, name_of(i.cause.by), i.cause.usage_since))
  end
end

for _, u in ipairs{{'u1', {5, 0}, 0, 6}, {'u2', {4}, 1, 4}, {'u3', {3, 1}, 2, 3}, {'u4', {2}, 3, 1}} do
  procs[u[1]] = s:spawn(user, u[1], u[2], u[3], u[4])
end
s:run()
print(string.format('done t=%d in_use=%d', s:now(), bus:in_use()))
