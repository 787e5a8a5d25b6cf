-- Who a preempting request takes the slot from, with two slots: the user of
-- greatest key (priority, then the later request, then non-preempting first);
-- a request of equal key preempts nobody; a request with preempt=False queues
-- even when it is better; a preempting request behind a non-preempting head
-- waits its turn.
local s = sim.new()
local r = s:preemptive_resource(2)
local names = {}

local function user(name, prio, pre, d, hold)
  s:sleep(d)
  local req = r:request{priority = prio, preempt = pre}
  names[req] = name
  local ok, i = pcall(function()
    local _ <close> = req
    req:wait()
    local us = {}
    for _, u in ipairs(r:users()) do us[#us + 1] = names[u] end
    table.sort(us)
    print(string.format('t=%d %s in (prio %d) users=%s', s:now(), name, prio, table.concat(us, ',')))
    s:sleep(hold)
    print(string.format('t=%d %s out', s:now(), name))
  end)
  if not ok then
    print(string.format('t=%d %s preempted, held since %d', s:now(), name, i.cause.usage_since))
  end
end

for _, u in ipairs{{'a', 3, true, 0, 9}, {'b', 3, true, 0, 9}, {'c', 3, true, 1, 2},
                   {'d', 1, false, 2, 2}, {'e', 2, true, 3, 2}, {'f', 0, true, 3, 1}} do
  s:spawn(user, table.unpack(u))
end
s:run()
print(string.format('done t=%d in_use=%d', s:now(), r:in_use()))
