-- run(until) boundaries: events due exactly at `until` are left for the next
-- run and the clock ends at `until`; run(10), run(20), run(21), run(), then a
-- run(100) past the last event and a run() after a process spawned at t=100.
local s = sim.new()

local function T(x)
  if x == math.huge then return 'inf' end
  return string.format('%d', x)
end

local function sleeper(n, d, k)
  for _ = 1, k do
    s:sleep(d)
    print(string.format('t=%d %s', s:now(), n))
  end
end

local function late()
  print(string.format('t=%d late starts', s:now()))
  s:sleep(5)
  print(string.format('t=%d late ends', s:now()))
end

local tx = s:timeout(10, 'tx')
s:spawn(sleeper, 'A', 5, 5)
s:spawn(sleeper, 'B', 10, 3)
s:spawn(sleeper, 'C', 20, 1)
for _, u in ipairs{10, 20, 21} do
  s:run(u)
  print(string.format('after run(%d): now=%d peek=%s tx processed=%s', u, s:now(), T(s:peek()), tostring(tx:processed())))
end
s:run()
print(string.format('after run(): now=%d peek=%s', s:now(), T(s:peek())))
s:run(100)
print(string.format('after run(100): now=%d peek=%s', s:now(), T(s:peek())))
s:spawn(late)
print(string.format('spawned late: now=%d peek=%s', s:now(), T(s:peek())))
s:run()
print(string.format('done t=%d peek=%s', s:now(), T(s:peek())))
