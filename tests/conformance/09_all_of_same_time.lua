-- all_of over timeouts that fire in the same instant. A condition is triggered
-- while its last member is processed and is processed itself later in that
-- instant, so processes waiting on a member directly run before its waiters.
local s = sim.new()
local ta = s:timeout(5, 'a')
local tb = s:timeout(5, 'b')
local tc = s:timeout(3, 'c')

local function waiter_all(n, evs)
  local vals = s:all_of(evs):wait()
  print(string.format('t=%d %s all_of woke: %s', s:now(), n, table.concat(vals, ',')))
end

local function waiter_one(n, ev)
  local v = ev:wait()
  print(string.format('t=%d %s woke: %s', s:now(), n, v))
end

local function late_all()
  s:sleep(5)
  print(string.format('t=%d L builds all_of over a and b', s:now()))
  local vals = s:all_of{ta, tb}:wait()
  print(string.format('t=%d L all_of woke: %s', s:now(), table.concat(vals, ',')))
end

s:spawn(waiter_all, 'P', {ta, tb, tc})
s:spawn(waiter_one, 'Q', tb)
s:spawn(waiter_all, 'R', {tb, ta})
s:spawn(waiter_one, 'S', ta)
s:spawn(waiter_all, 'T', {tc})
s:spawn(late_all)
s:run()
print('done t=' .. s:now())
