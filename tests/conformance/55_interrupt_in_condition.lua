-- A process waiting on any_of over two get requests is interrupted: the
-- condition and both requests go on without it (SimPy removes only the
-- process's callback), so later puts are taken by the abandoned requests; a
-- second process that withdraws its requests on the interrupt leaves the
-- items to others.
local s = sim.new()
local a = s:store()
local b = s:store()

local function careless(name)
  local ga, gb = a:get_event(), b:get_event()
  local ok, i = pcall(function() return s:any_of{ga, gb}:wait() end)
  if ok then
    print(string.format('t=%d %s got one', s:now(), name))
  else
    print(string.format('t=%d %s interrupted (%s) getters a=%d b=%d', s:now(), name, i.cause, a:getters(), b:getters()))
  end
end

local function careful(name)
  local ga, gb = a:get_event(), b:get_event()
  local ok, i = pcall(function() return s:any_of{ga, gb}:wait() end)
  if ok then
    print(string.format('t=%d %s got one', s:now(), name))
  else
    ga:cancel()
    gb:cancel()
    print(string.format('t=%d %s interrupted (%s), withdrew: getters a=%d b=%d', s:now(), name, i.cause, a:getters(), b:getters()))
  end
end

local function taker(name, st, d)
  s:sleep(d)
  local x = st:get()
  print(string.format('t=%d %s got %s', s:now(), name, x))
end

local function boss(p1, p2)
  s:sleep(1)
  p1:interrupt('stop1')
  s:sleep(1)
  p2:interrupt('stop2')
  s:sleep(1)
  for _, x in ipairs{'a1', 'a2', 'a3'} do
    a:put(x)
    print(string.format('t=%d boss put %s (items a=%d)', s:now(), x, a:count()))
  end
  b:put('b1')
  print(string.format('t=%d boss put b1 (items b=%d)', s:now(), b:count()))
end

local p1 = s:spawn(careless, 'C1')
local p2 = s:spawn(careful, 'C2')
s:spawn{fn = taker, args = {'T1', a, 2}, daemon = true}
s:spawn{fn = taker, args = {'T2', b, 2}, daemon = true}
s:spawn(boss, p1, p2)
s:run()
print(string.format('done t=%d items a=%d b=%d getters a=%d b=%d', s:now(), a:count(), b:count(), a:getters(), b:getters()))
