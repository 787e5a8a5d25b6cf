-- any_of whose members fire in the same instant: both are processed before the
-- condition is, so the waiter sees both done; an any_of with a member that never
-- fires; and an any_of decided by a timeout just before another process
-- succeeds its other member in the same instant.
local s = sim.new()
local t4x = s:timeout(4, 'x')
local t4y = s:timeout(4, 'y')
local t2 = s:timeout(2, 'z')
local never = s:event()
local ev = s:event()

local function st(e)
  if e:processed() then return tostring(e:value()) end
  return '-'
end

local function any_waiter(n, evs)
  s:any_of(evs):wait()
  local parts = {}
  for i, e in ipairs(evs) do parts[i] = st(e) end
  print(string.format('t=%d %s any_of woke: %s', s:now(), n, table.concat(parts, ' ')))
end

local function direct()
  local v = t4y:wait()
  print(string.format('t=%d D woke: %s (x=%s)', s:now(), v, st(t4x)))
end

local function e_proc()
  local t3 = s:timeout(3, 't3')
  s:any_of{ev, t3}:wait()
  print(string.format('t=%d E any_of woke: %s %s (ev triggered=%s)', s:now(), st(ev), st(t3), tostring(ev:triggered())))
  local v = ev:wait()
  print(string.format('t=%d E then got %s', s:now(), v))
end

local function k_proc()
  s:sleep(3)
  ev:succeed('ev')
  print(string.format('t=%d K succeeded ev', s:now()))
end

s:spawn(any_waiter, 'A', {t4x, t4y})
s:spawn(any_waiter, 'B', {never, t2})
s:spawn(direct)
s:spawn(any_waiter, 'C', {t4y, t2, never})
s:spawn(e_proc)
s:spawn(k_proc)
s:run()
print(string.format('done t=%d never triggered=%s', s:now(), tostring(never:triggered())))
