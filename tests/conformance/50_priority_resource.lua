-- PriorityResource: waiting requests are served by priority (lower first),
-- then by the time they were made, in arrival order among equals; a request
-- made later with a better priority overtakes the queue but never takes a
-- slot in use; releases in one instant and cancelled requests.
local s = sim.new()
local bus = s:priority_resource(2)

local function user(name, prio, d, hold)
  s:sleep(d)
  do
    local req <close> = bus:request{priority = prio}
    print(string.format('t=%d %s asks (prio %d, in_use=%d queued=%d)', s:now(), name, prio, bus:in_use(), bus:queued()))
    req:wait()
    print(string.format('t=%d %s has a slot', s:now(), name))
    s:sleep(hold)
  end
  print(string.format('t=%d %s released (in_use=%d queued=%d)', s:now(), name, bus:in_use(), bus:queued()))
end

local function quitter(name, prio, d, patience)
  s:sleep(d)
  local req = bus:request{priority = prio}
  s:any_of{req, s:timeout(patience)}:wait()
  if req:triggered() then
    print(string.format('t=%d %s has a slot, leaves it', s:now(), name))
    bus:release(req)
  else
    req:cancel()
    print(string.format('t=%d %s gave up (queued=%d)', s:now(), name, bus:queued()))
  end
end

s:spawn(user, 'A', 5, 0, 4)
s:spawn(user, 'B', 5, 0, 4)
s:spawn(user, 'C', 3, 1, 1)
s:spawn(user, 'D', 1, 1, 1)
s:spawn(user, 'E', 3, 1, 2)
s:spawn(user, 'F', 1, 2, 1)
s:spawn(quitter, 'Q', 0, 2, 1)
s:spawn(user, 'G', 2, 3, 1)
s:spawn(quitter, 'R', 9, 3, 20)
s:spawn(user, 'H', 0, 5, 1)
s:run()
print(string.format('done t=%d in_use=%d queued=%d', s:now(), bus:in_use(), bus:queued()))
