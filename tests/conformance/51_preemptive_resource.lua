-- PreemptiveResource: a request of better priority takes the slot of the
-- user of worst key (priority, time, not preempt), whose process gets an
-- Interrupt whose cause says by whom and since when; preempt=False requests
-- wait instead; a preempted user in a `with` block leaves it; a request does
-- not preempt a user of equal key.
local s = sim.new()
local arb = s:preemptive_resource(2)
local procs = {}

local function name_of(p)
  for n, q in pairs(procs) do
    if q == p then return n end
  end
  return '?'
end

local function master(name, prio, d, hold, preempt)
  s:sleep(d)
  local ok, i = pcall(function()
    local req <close> = arb:request{priority = prio, preempt = preempt}
    req:wait()
    print(string.format('t=%d %s granted (prio %d, in_use=%d)', s:now(), name, prio, arb:in_use()))
    s:sleep(hold)
    print(string.format('t=%d %s done', s:now(), name))
  end)
  if not ok then
    local c = i.cause
    print(string.format('t=%d %s preempted by %s, used since %d (in_use=%d queued=%d)',
      s:now(), name, name_of(c.by), c.usage_since, arb:in_use(), arb:queued()))
  end
end

for _, m in ipairs{{'low1', 5, 0, 10, true}, {'low2', 5, 1, 10, true},
                   {'mid', 3, 2, 3, true}, {'polite', 1, 3, 2, false},
                   {'top', 0, 4, 2, true}, {'same', 3, 4, 1, true},
                   {'late', 4, 6, 1, true}} do
  procs[m[1]] = s:spawn(master, m[1], m[2], m[3], m[4], m[5])
end
s:run()
print(string.format('done t=%d in_use=%d queued=%d', s:now(), arb:in_use(), arb:queued()))
