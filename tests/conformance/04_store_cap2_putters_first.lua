-- A store of capacity 2 with two putters arriving before any getter: puts
-- beyond the capacity wait. G1 arrives in the same instant and takes items
-- without spending time; G2 arrives at t=2 and takes one item per time unit.
local s = sim.new()
local st = s:store(2)

local function putter(n, base)
  for i = 0, 2 do
    st:put(base + i)
    print(string.format('t=%d %s put %d (items=%d)', s:now(), n, base + i, st:count()))
  end
end

local function g1()
  for _ = 1, 2 do
    local item = st:get()
    print(string.format('t=%d G1 got %d (items=%d)', s:now(), item, st:count()))
  end
end

local function g2()
  s:sleep(2)
  for _ = 1, 3 do
    local item = st:get()
    print(string.format('t=%d G2 got %d (items=%d)', s:now(), item, st:count()))
    s:sleep(1)
  end
end

s:spawn(putter, 'P1', 10)
s:spawn(putter, 'P2', 20)
s:spawn(g1)
s:spawn(g2)
s:run()
print(string.format('done t=%d items=%d', s:now(), st:count()))
