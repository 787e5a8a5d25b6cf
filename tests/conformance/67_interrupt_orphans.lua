-- Interrupted blocking calls on the new kinds: a container get and a filter
-- store get stay queued without their process and take what comes later; a
-- priority store put waiting for room still puts its item; a priority
-- resource request waiting in the queue is granted later and keeps its slot.
local s = sim.new()
local c = s:container(10, 0)
local fs = s:filter_store()
local ps = s:priority_store(1)
local pr = s:priority_resource(1)

local function blocked(name, what)
  local ok, i = pcall(function()
    if what == 'cget' then
      c:get(3)
    elseif what == 'fget' then
      fs:get(function(x) return x > 5 end)
    elseif what == 'psput' then
      ps:put('late', 1)
    else
      pr:request(2):wait()
    end
    print(string.format('t=%d %s done', s:now(), name))
  end)
  if not ok then
    print(string.format('t=%d %s interrupted (%s)', s:now(), name, i.cause))
  end
end

local function holder()
  do
    local req <close> = pr:request(0)
    req:wait()
    s:sleep(3)
  end
  print(string.format('t=%d holder released (in_use=%d queued=%d)', s:now(), pr:in_use(), pr:queued()))
end

s:spawn(holder)
ps:put_event('first', 0)
local ws = {}
for _, nw in ipairs{{'A', 'cget'}, {'B', 'fget'}, {'C', 'psput'}, {'D', 'preq'}} do
  ws[#ws + 1] = s:spawn(blocked, nw[1], nw[2])
end

local function boss()
  s:sleep(1)
  for _, w in ipairs(ws) do w:interrupt('stop') end
  s:sleep(1)
  c:put(4)
  print(string.format('t=%d put 4: level=%d', s:now(), c:level()))
  fs:put(3)
  fs:put(8)
  print(string.format('t=%d fs items=%d', s:now(), fs:count()))
  local x = ps:get()
  print(string.format('t=%d ps got %s, items=%d', s:now(), x, ps:count()))
  s:sleep(5)
  print(string.format('t=%d pr in_use=%d queued=%d', s:now(), pr:in_use(), pr:queued()))
end

s:spawn(boss)
s:run()
print(string.format('done t=%d level=%d fs=%d ps=%d', s:now(), c:level(), fs:count(), ps:count()))
