-- A zero-time pipeline: the main script puts 1..6 into src; stage S1 moves
-- src -> mid (x10), stage S2 moves mid -> out (+1), and three consumers take
-- from out. Nothing spends time: the interleaving within t=0 is the test.
local s = sim.new()
local src = s:store()
local mid = s:store()
local out = s:store()
for i = 1, 6 do
  src:put(i)
end

local function stage(n, a, b, mul, add)
  while true do
    local x = a:get()
    print(string.format('%s moves %d', n, x))
    b:put(x * mul + add)
    print(string.format('%s put %d', n, x * mul + add))
  end
end

local function consumer(n)
  while true do
    local x = out:get()
    print(string.format('%s got %d (src=%d mid=%d out=%d)', n, x, src:count(), mid:count(), out:count()))
  end
end

s:spawn{fn = consumer, args = {'C1'}, daemon = true}
s:spawn{fn = stage, args = {'S1', src, mid, 10, 0}, daemon = true}
s:spawn{fn = consumer, args = {'C2'}, daemon = true}
s:spawn{fn = stage, args = {'S2', mid, out, 1, 1}, daemon = true}
s:spawn{fn = consumer, args = {'C3'}, daemon = true}
s:run()
print('done t=' .. s:now())
