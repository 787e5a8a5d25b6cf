-- A container of fractional amounts (bytes in flight as fractions of a
-- buffer): levels are Python floats, so a sum that is not exact in binary
-- (0.1 + 0.2) decides a get exactly as in SimPy; an unbounded container.
local s = sim.new()
local buf = s:container{capacity = 1.0, init = 0.0}
local sink = s:container()

local function filler(name, amounts, d)
  for _, a in ipairs(amounts) do
    s:sleep(d)
    buf:put(a)
    print(string.format('t=%d %s put %.2f level=%.17g', s:now(), name, a, buf:level()))
  end
end

local function drainer(name, a)
  buf:get(a)
  print(string.format('t=%d %s got %.2f level=%.17g', s:now(), name, a, buf:level()))
  sink:put(a)
  print(string.format('t=%d %s sank %.2f sink=%.17g', s:now(), name, a, sink:level()))
end

s:spawn(drainer, 'D1', 0.3)
s:spawn(drainer, 'D2', 0.5)
s:spawn(filler, 'F1', {0.1, 0.2, 0.25, 0.25}, 1)
s:spawn{fn = filler, args = {'F2', {0.5, 0.75}, 3}, daemon = true}
s:run()
print(string.format('done t=%d level=%.17g sink=%.17g putters=%d', s:now(), buf:level(), sink:level(), buf:putters()))
