-- PriorityStore requests as events: a bounded deadline queue whose putters
-- wait for room; a put request cancelled while waiting (its item never goes
-- in); a get request with a timeout; waiting getters take items as they come.
local s = sim.new()
local q = s:priority_store(2)

local function producer()
  for _, dn in ipairs{{9, 'j9'}, {4, 'j4'}, {7, 'j7'}, {1, 'j1'}, {5, 'j5'}} do
    local p = q:put_event(dn[2], dn[1])
    s:any_of{p, s:timeout(1)}:wait()
    if p:triggered() then
      print(string.format('t=%d put %s (items=%d)', s:now(), dn[2], q:count()))
    else
      p:cancel()
      print(string.format('t=%d dropped %s (putters=%d)', s:now(), dn[2], q:putters()))
    end
  end
end

local function consumer(name, d)
  s:sleep(d)
  local g = q:get_event()
  s:any_of{g, s:timeout(2)}:wait()
  if g:triggered() then
    print(string.format('t=%d %s took %s', s:now(), name, g:value()))
  else
    g:cancel()
    print(string.format('t=%d %s found nothing', s:now(), name))
  end
end

s:spawn(producer)
for i, d in ipairs{3, 3, 4, 8, 8} do
  s:spawn(consumer, 'C' .. (i - 1), d)
end
s:run()
local left = {}
while q:count() > 0 do left[#left + 1] = q:get() end
print(string.format('done t=%d items=%s', s:now(), table.concat(left, ' ')))
