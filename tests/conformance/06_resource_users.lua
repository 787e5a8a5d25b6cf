-- A resource with 2 slots and 6 users arriving in pairs (t=0,0,1,1,2,2) that
-- hold it for 3, 0, 2, 0, 1, 0: a release frees the slot at once (in_use
-- drops) but the next waiter gets it only when the release is processed.
local s = sim.new()
local r = s:resource(2)
local holds = {3, 0, 2, 0, 1, 0}

local function user(i)
  s:sleep(i // 2)
  print(string.format('t=%d U%d request (in_use=%d queued=%d)', s:now(), i, r:in_use(), r:queued()))
  r:acquire()
  print(string.format('t=%d U%d acquired (in_use=%d queued=%d)', s:now(), i, r:in_use(), r:queued()))
  if holds[i + 1] > 0 then
    s:sleep(holds[i + 1])
  end
  r:release()
  print(string.format('t=%d U%d released (in_use=%d queued=%d)', s:now(), i, r:in_use(), r:queued()))
end

for i = 0, 5 do
  s:spawn(user, i)
end
s:run()
print('done t=' .. s:now())
