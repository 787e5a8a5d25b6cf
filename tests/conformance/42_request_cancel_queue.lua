-- Cancelling requests in a queue: a cancelled head put or get leaves the queue
-- but serves nobody by itself (the next waiter goes when the other side's next
-- request is processed); blocking calls and requests share one FIFO queue;
-- cancelling a request already served does nothing.
local s = sim.new()
local st = s:store(1)

local function items()
  local t = {}
  for i = 1, st:count() do t[i] = "'" .. st:get() .. "'" end
  return '[' .. table.concat(t, ', ') .. ']'
end

local function blocking_putter(name, x, d)
  s:sleep(d)
  print(string.format('t=%d %s puts %s (putters=%d)', s:now(), name, x, st:putters()))
  st:put(x)
  print(string.format('t=%d %s put %s done', s:now(), name, x))
end

local function blocking_getter(name, d)
  s:sleep(d)
  local x = st:get()
  print(string.format('t=%d %s got %s (items=%d)', s:now(), name, x, st:count()))
end

local function controller()
  st:put_event('p0')                -- fills the store at t=0
  local r1 = st:put_event('r1')     -- queued
  s:sleep(1)
  local r2 = st:put_event('r2')     -- queued behind r1 and the blocking putter
  print(string.format('t=%d C putters=%d', s:now(), st:putters()))
  print(string.format('t=%d C cancel r1 -> %s putters=%d', s:now(), tostring(r1:cancel()), st:putters()))
  s:sleep(1)
  local g1 = st:get_event()         -- takes p0; its processing admits the head putter
  print(string.format('t=%d C g1 triggered=%s', s:now(), tostring(g1:triggered())))
  local v = g1:wait()
  print(string.format('t=%d C g1 got %s items=%d putters=%d', s:now(), v, st:count(), st:putters()))
  s:sleep(1)
  local g2 = st:get_event()
  local g3 = st:get_event()
  local g4 = st:get_event()
  print(string.format('t=%d C getters=%d', s:now(), st:getters()))
  g2:cancel()
  print(string.format('t=%d C cancel served g2: triggered=%s getters=%d', s:now(), tostring(g2:triggered()), st:getters()))
  g3:cancel()
  print(string.format('t=%d C cancel g3: getters=%d', s:now(), st:getters()))
  s:any_of{g4, s:timeout(5)}:wait()
  print(string.format('t=%d C g4 processed=%s', s:now(), tostring(g4:processed())))
  if g4:processed() then
    print(string.format('t=%d C g4 got %s', s:now(), g4:value()))
  end
  print(string.format('t=%d C g2 got %s', s:now(), g2:wait()))
end

s:spawn(blocking_putter, 'BP', 'bp', 0)
s:spawn(controller)
s:spawn{fn = blocking_getter, args = {'BG', 12}, daemon = true}
s:run()
print(string.format('done t=%d items=%s putters=%d getters=%d', s:now(), items(), st:putters(), st:getters()))
