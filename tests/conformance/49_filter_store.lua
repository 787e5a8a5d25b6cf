-- FilterStore: a get takes the oldest item its filter accepts; every waiting
-- get is tried on each put, so a later get can be served first (out-of-order
-- completions matched by tag); a get without a filter takes the oldest item;
-- a bounded store blocks puts until a get makes room.
local s = sim.new()
local fs = s:filter_store(3)

local function waiter(tag, d)
  s:sleep(d)
  local x = fs:get(function(m) return m[1] == tag end)
  print(string.format('t=%d W%d got %s:%s (items=%d getters=%d)', s:now(), tag, x[1], x[2], fs:count(), fs:getters()))
end

local function anyone(d)
  s:sleep(d)
  local x = fs:get()
  print(string.format('t=%d A got %s:%s', s:now(), x[1], x[2]))
end

local function completer()
  for _, td in ipairs{{3, 'c'}, {1, 'a'}, {9, 'x'}, {2, 'b'}, {9, 'y'}, {4, 'd'}, {9, 'z'}, {5, 'e'}} do
    s:sleep(1)
    print(string.format('t=%d put %d:%s (items=%d putters=%d)', s:now(), td[1], td[2], fs:count(), fs:putters()))
    fs:put({td[1], td[2]})
  end
end

local function patient()
  local g = fs:get_event(function(m) return m[1] == 7 end)
  s:any_of{g, s:timeout(4)}:wait()
  print(string.format('t=%d P7 triggered=%s', s:now(), tostring(g:triggered())))
  g:cancel()
  print(string.format('t=%d P7 cancelled (getters=%d)', s:now(), fs:getters()))
end

for _, t in ipairs{1, 2, 3, 4, 5} do
  s:spawn(waiter, t, 0)
end
s:spawn(patient)
s:spawn(completer)
s:spawn(anyone, 12)
s:spawn(anyone, 13)
s:run()
print(string.format('done t=%d items=%d getters=%d', s:now(), fs:count(), fs:getters()))
