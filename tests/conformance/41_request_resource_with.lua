-- Resource requests as events in `with` blocks: customers renege after a
-- patience timeout (the request leaves the queue), one releases early inside
-- its block (a second release when the block ends), one raises inside its
-- block (the block still gives the slot back) and is joined.
local s = sim.new()
local counter = s:resource(1)

local function customer(name, arrive, patience, work, mode)
  s:sleep(arrive)
  print(string.format('t=%d %s arrives (in_use=%d queued=%d)', s:now(), name, counter:in_use(), counter:queued()))
  do
    local req <close> = counter:request()
    s:any_of{req, s:timeout(patience)}:wait()
    if req:processed() then
      print(string.format('t=%d %s served', s:now(), name))
      s:sleep(work)
      if mode == 'early' then
        counter:release(req)
        print(string.format('t=%d %s released early (in_use=%d)', s:now(), name, counter:in_use()))
        s:sleep(1)
      elseif mode == 'raise' then
        error('fault-' .. name, 0)
      end
      print(string.format('t=%d %s leaves', s:now(), name))
    else
      print(string.format('t=%d %s reneges (queued=%d)', s:now(), name, counter:queued()))
    end
  end
  print(string.format('t=%d %s out of block (in_use=%d queued=%d)', s:now(), name, counter:in_use(), counter:queued()))
end

local function joiner(p)
  local ok, e = pcall(p.wait, p)
  if not ok then
    print(string.format('t=%d J caught %s (in_use=%d)', s:now(), tostring(e.message), counter:in_use()))
  end
end

s:spawn(customer, 'C0', 0, 10, 4, 'early')
s:spawn(customer, 'C1', 1, 2, 3, 'plain')
local c2 = s:spawn(customer, 'C2', 1, 8, 2, 'raise')
s:spawn(customer, 'C3', 2, 20, 1, 'plain')
s:spawn(customer, 'C4', 4, 1, 1, 'plain')
s:spawn(customer, 'C5', 5, 30, 0, 'plain')
local c6 = s:spawn(customer, 'C6', 6, 30, 2, 'raise')
s:spawn(joiner, c2)
s:spawn(joiner, c6)
s:run()
print(string.format('done t=%d in_use=%d queued=%d', s:now(), counter:in_use(), counter:queued()))
