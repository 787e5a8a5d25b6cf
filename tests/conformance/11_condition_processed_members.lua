-- Conditions over events that were processed earlier: the condition is
-- triggered when it is built but still processed through the queue, so a
-- process woken by an event already due in that instant runs before the
-- waiter. Waiting on a processed event itself continues at once.
local s = sim.new()
local e2 = s:timeout(0, 'e2')
local e1 = s:event()
e1:succeed('e1')

local function p()
  s:sleep(1)
  print(string.format('t=%d P builds all_of (e1 processed=%s e2 processed=%s)', s:now(), tostring(e1:processed()), tostring(e2:processed())))
  local c = s:all_of{e1, e2}
  print(string.format('t=%d P all_of triggered=%s processed=%s', s:now(), tostring(c:triggered()), tostring(c:processed())))
  local vals = c:wait()
  print(string.format('t=%d P all_of woke: %s,%s', s:now(), vals[1], vals[2]))
  local pending = s:event()
  s:any_of{pending, e1}:wait()
  print(string.format('t=%d P any_of woke (pending triggered=%s)', s:now(), tostring(pending:triggered())))
  local v = e1:wait()
  print(string.format('t=%d P waited on e1 again: %s', s:now(), v))
  v = e2:wait()
  print(string.format('t=%d P waited on e2 again: %s', s:now(), v))
end

local function q()
  s:sleep(1)
  print(string.format('t=%d Q runs', s:now()))
  s:sleep(0)
  print(string.format('t=%d Q after sleep 0', s:now()))
  s:sleep(0)
  print(string.format('t=%d Q after second sleep 0', s:now()))
end

s:spawn(p)
s:spawn(q)
s:run()
print('done t=' .. s:now())
