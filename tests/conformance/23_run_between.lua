-- Work injected by the main script between runs lands in the instant where
-- run(until) stopped, ordered against the events already due then: a spawned
-- process starts first (URGENT), then earlier-scheduled timeouts, then an event
-- succeeded by main, then a store put that feeds a waiting getter.
local s = sim.new()
local ev = s:event()
local ev2 = s:event()
local st = s:store()

local function waiter(n, e)
  local v = e:wait()
  print(string.format('t=%d %s got %s', s:now(), n, v))
end

local function getter()
  while true do
    local x = st:get()
    print(string.format('t=%d G got %s (items=%d)', s:now(), x, st:count()))
  end
end

local function ticker()
  for _ = 1, 3 do
    s:sleep(5)
    print(string.format('t=%d tick', s:now()))
  end
end

local function newcomer(n)
  print(string.format('t=%d %s starts', s:now(), n))
  s:sleep(0)
  print(string.format('t=%d %s after sleep 0', s:now(), n))
  local v = ev:wait()
  print(string.format('t=%d %s sees ev=%s', s:now(), n, v))
end

s:spawn(waiter, 'W', ev)
s:spawn{fn = getter, daemon = true}
s:spawn(ticker)
s:run(10)
print(string.format('main at t=%d: succeed ev, spawn N1, put x, put y', s:now()))
ev:succeed('go')
s:spawn(newcomer, 'N1')
st:put('x')
st:put('y')
s:run(12)
print(string.format('main at t=%d: spawn N2, succeed ev2, put z', s:now()))
s:spawn(newcomer, 'N2')
s:spawn(waiter, 'W2', ev2)
ev2:succeed('go2')
st:put('z')
s:run(20)
print(string.format('done t=%d items=%d', s:now(), st:count()))
