-- Resource requests cancelled: a waiting request leaves the queue (the next
-- one is granted at the next release, not at the cancel); cancelling a
-- granted request does nothing (it still holds its slot until released);
-- releasing a cancelled request queues a harmless release.
local s = sim.new()
local r = s:resource(1)

local function main_proc()
  local r1 = r:request()
  local r2 = r:request()
  local r3 = r:request()
  local r4 = r:request()
  print(string.format('t=%d in_use=%d queued=%d', s:now(), r:in_use(), r:queued()))
  r1:wait()
  r1:cancel()
  print(string.format('t=%d cancel granted r1: in_use=%d', s:now(), r:in_use()))
  r2:cancel()
  print(string.format('t=%d cancel r2: queued=%d', s:now(), r:queued()))
  s:sleep(1)
  r:release(r1)
  print(string.format('t=%d released r1: in_use=%d queued=%d r3=%s', s:now(), r:in_use(), r:queued(), tostring(r3:triggered())))
  r3:wait()
  print(string.format('t=%d r3 granted', s:now()))
  r:release(r2)
  s:sleep(1)
  r4:cancel()
  r:release(r3)
  s:sleep(1)
  print(string.format('t=%d in_use=%d queued=%d r4=%s', s:now(), r:in_use(), r:queued(), tostring(r4:triggered())))
end

s:spawn(main_proc)
s:run()
print(string.format('done t=%d', s:now()))
