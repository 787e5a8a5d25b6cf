-- A capacity-1 store fed by a producer that pauses after every second item and
-- drained by two consumers that spend 2 and 3 time units per item: blocked
-- putters and getters released at timed instants, with puts and gets tied.
local s = sim.new()
local st = s:store(1)

local function producer()
  for i = 0, 7 do
    st:put(i)
    print(string.format('t=%d P put %d (items=%d)', s:now(), i, st:count()))
    if i % 2 == 1 then
      s:sleep(1)
    end
  end
  print(string.format('t=%d P finished', s:now()))
end

local function consumer(n, d)
  while true do
    local item = st:get()
    print(string.format('t=%d %s got %d (items=%d)', s:now(), n, item, st:count()))
    s:sleep(d)
  end
end

s:spawn{fn = consumer, args = {'C1', 2}, daemon = true}
s:spawn{fn = consumer, args = {'C2', 3}, daemon = true}
s:spawn(producer)
s:run()
print('done t=' .. s:now())
