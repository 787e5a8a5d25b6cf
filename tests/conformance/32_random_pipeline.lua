-- A pseudo-random pipeline (integer LCG, same in both languages): sources feed
-- a capacity-1 store, two stage workers move items to a capacity-2 store while
-- holding a 1-slot tool resource for random times (often 0), sinks take items
-- waiting on any_of(get-side timeouts) and the main process joins the sources.
local s = sim.new()
local seed = 777

local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed // 65536) % n
end

local q1 = s:store(1)
local q2 = s:store(2)
local tool = s:resource(1)
local done = s:store()

local function source(n, k)
  for i = 0, k - 1 do
    s:sleep(rnd(2))
    q1:put(n * 100 + i)
    print(string.format('t=%d S%d put %d (q1=%d)', s:now(), n, n * 100 + i, q1:count()))
  end
  return k
end

local function stage(n)
  while true do
    local x = q1:get()
    tool:acquire()
    local h = rnd(3)
    print(string.format('t=%d T%d took %d, tool for %d (queued=%d)', s:now(), n, x, h, tool:queued()))
    if h > 0 then
      s:sleep(h)
    end
    tool:release()
    q2:put(x + 1)
    print(string.format('t=%d T%d passed %d (q2=%d)', s:now(), n, x + 1, q2:count()))
  end
end

local function sink(n)
  while true do
    local x = q2:get()
    local t = s:timeout(rnd(3), 'slow')
    local u = s:timeout(rnd(3), 'fast')
    s:any_of{t, u}:wait()
    print(string.format('t=%d K%d got %d (%s %s)', s:now(), n, x, t:processed() and 'slow' or '-', u:processed() and 'fast' or '-'))
    done:put(x)
  end
end

local function main()
  local srcs = {}
  for n = 1, 3 do
    srcs[n] = s:spawn(source, n, 6 + n)
  end
  local vals = s:all_of(srcs):wait()
  print(string.format('t=%d sources finished: %s', s:now(), table.concat(vals, ',')))
  local total = 0
  while total < 24 do
    done:get()
    total = total + 1
  end
  print(string.format('t=%d main collected %d items (q1=%d q2=%d done=%d)', s:now(), total, q1:count(), q2:count(), done:count()))
end

s:spawn{fn = stage, args = {1}, daemon = true}
s:spawn{fn = sink, args = {1}, daemon = true}
s:spawn{fn = stage, args = {2}, daemon = true}
s:spawn{fn = sink, args = {2}, daemon = true}
s:spawn(main)
s:run()
print(string.format('done t=%d seed=%d', s:now(), seed))
