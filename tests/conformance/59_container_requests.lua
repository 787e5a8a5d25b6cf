-- Container requests as events: credits for a link, taken with a timeout
-- (a sender gives up and cancels), returned by the receiver; a cancelled get
-- at the head of the queue stops holding back the smaller gets behind it only
-- when the next put is processed.
local s = sim.new()
local credits = s:container(4, 4)

local function sender(name, n, d, patience)
  s:sleep(d)
  local g = credits:get_event(n)
  s:any_of{g, s:timeout(patience)}:wait()
  if g:triggered() then
    print(string.format('t=%d %s took %d credits (level=%d)', s:now(), name, n, credits:level()))
    s:sleep(2)
    credits:put(n)
    print(string.format('t=%d %s returned %d (level=%d getters=%d)', s:now(), name, n, credits:level(), credits:getters()))
  else
    g:cancel()
    print(string.format('t=%d %s gave up (getters=%d level=%d)', s:now(), name, credits:getters(), credits:level()))
  end
end

s:spawn(sender, 'A', 3, 0, 5)
s:spawn(sender, 'B', 4, 1, 1)
s:spawn(sender, 'C', 1, 1, 9)
s:spawn(sender, 'D', 2, 1, 9)
s:spawn(sender, 'E', 4, 3, 9)
s:run()
print(string.format('done t=%d level=%d', s:now(), credits:level()))
