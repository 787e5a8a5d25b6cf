-- A credit-based link: the sender takes a credit (a Container) before each
-- flit, the receiver returns it when it has consumed the flit; a callback on
-- each put request logs when the flit is in the buffer; the sender stalls when
-- the credits run out.
local s = sim.new()
local credits = s:container(2, 2)
local buf = s:store()

local function sender(n)
  for i = 0, n - 1 do
    credits:get(1)
    local p = buf:put_event('f' .. i)
    p:add_callback(function(e)
      print(string.format('t=%d flit f%d in the buffer (credits=%d)', s:now(), i, credits:level()))
    end)
    p:wait()
    s:sleep(1)
  end
  print(string.format('t=%d sender done', s:now()))
end

local function receiver()
  while true do
    local f = buf:get()
    print(string.format('t=%d receiver got %s', s:now(), f))
    s:sleep(3)
    credits:put(1)
    print(string.format('t=%d receiver returned a credit (credits=%d)', s:now(), credits:level()))
  end
end

s:spawn(sender, 5)
s:spawn{fn = receiver, daemon = true}
s:run(30)
print(string.format('done t=%d credits=%d', s:now(), credits:level()))
