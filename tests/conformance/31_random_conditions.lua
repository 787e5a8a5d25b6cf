-- A pseudo-random model of conditions and joins (integer LCG, same in both
-- languages): workers wait on all_of or any_of over random timeouts (often 0)
-- and on gates a controller opens at random times; a collector joins the
-- workers with all_of, another waits for the first worker with any_of.
local s = sim.new()
local seed = 4242

local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed // 65536) % n
end

local function st(e)
  if e:processed() then return tostring(e:value()) end
  return '-'
end

local gates = {}
for k = 1, 6 do
  gates[k] = s:event()
end

local function controller()
  for k = 0, 5 do
    s:sleep(rnd(3))
    gates[k + 1]:succeed('g' .. k)
    print(string.format('t=%d ctl opens g%d', s:now(), k))
  end
end

local function worker(n)
  for k = 0, 11 do
    local a = s:timeout(rnd(4), string.format('%s.%da', n, k))
    local b = s:timeout(rnd(4), string.format('%s.%db', n, k))
    local mode = rnd(3)
    if mode == 0 then
      local vals = s:all_of{a, b}:wait()
      print(string.format('t=%d %s all %s,%s', s:now(), n, vals[1], vals[2]))
    elseif mode == 1 then
      s:any_of{a, b}:wait()
      print(string.format('t=%d %s any %s %s', s:now(), n, st(a), st(b)))
    else
      local g = gates[rnd(6) + 1]
      s:any_of{g, a}:wait()
      print(string.format('t=%d %s gate-or-timeout %s %s', s:now(), n, st(g), st(a)))
    end
  end
  return n .. '-done'
end

local function collector(ws)
  local vals = s:all_of(ws):wait()
  print(string.format('t=%d collector: %s', s:now(), table.concat(vals, ',')))
end

local function first(ws)
  s:any_of(ws):wait()
  local parts = {}
  for i, w in ipairs(ws) do parts[i] = st(w) end
  print(string.format('t=%d first: %s', s:now(), table.concat(parts, ' ')))
end

s:spawn(controller)
local ws = {}
for i = 1, 5 do
  ws[i] = s:spawn(worker, 'W' .. i)
end
s:spawn(collector, ws)
s:spawn(first, ws)
s:run()
print(string.format('done t=%d seed=%d', s:now(), seed))
