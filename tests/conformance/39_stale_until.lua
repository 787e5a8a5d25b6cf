-- run(until) is an event at `until`: a run that crashes before it leaves it
-- queued, and it stops a later run() there; run(until) twice to the same
-- time after a crash leaves the second one queued for the run after.
local s = sim.new()

local function pk()
  local p = s:peek()
  return p == math.huge and 'inf' or string.format('%d', p)
end

local function msg(e)
  return type(e) == 'table' and tostring(e.message) or tostring(e)
end

local function raiser(at)
  s:sleep(at)
  error('x' .. at, 0)
end

local function ticker()
  for _ = 1, 12 do
    s:sleep(1)
    print(string.format('t=%d tick', s:now()))
  end
end

s:spawn(raiser, 0)
s:spawn(raiser, 5)
s:spawn(ticker)
for _ = 1, 2 do
  local ok, e = pcall(s.run, s, 4)
  if ok then
    print(string.format('run(4) returned t=%d', s:now()))
  else
    print(string.format('run(4) failed: %s t=%d peek=%s', msg(e), s:now(), pk()))
  end
end
s:run()
print(string.format('run() returned t=%d peek=%s', s:now(), pk()))
local ok, e = pcall(s.run, s, 8)
if not ok then print(string.format('run(8) failed: %s t=%d peek=%s', msg(e), s:now(), pk())) end
s:run()
print(string.format('run() returned t=%d peek=%s', s:now(), pk()))
s:run()
print(string.format('run() returned t=%d peek=%s', s:now(), pk()))
