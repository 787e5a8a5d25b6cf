-- Joining a process at different moments: a parent spawns a child and joins it
-- at once; J joins C in the instant C returned, before C's completion is
-- processed (J waits); L joins C long after (continues at once, before M).
local s = sim.new()
local c

local function child(v)
  print(string.format('t=%d child %d runs', s:now(), v))
  return v * 2
end

local function parent()
  local ch = s:spawn(child, 5)
  print(string.format('t=%d parent spawned child (alive=%s)', s:now(), tostring(ch:alive())))
  local v = ch:wait()
  print(string.format('t=%d parent got %d (alive=%s)', s:now(), v, tostring(ch:alive())))
end

local function cproc()
  s:sleep(2)
  print(string.format('t=%d C returns', s:now()))
  return 7
end

local function jproc()
  s:sleep(2)
  print(string.format('t=%d J joins C (alive=%s triggered=%s processed=%s)', s:now(), tostring(c:alive()), tostring(c:triggered()), tostring(c:processed())))
  local v = c:wait()
  print(string.format('t=%d J got %d', s:now(), v))
end

local function kproc()
  s:sleep(2)
  print(string.format('t=%d K at 2', s:now()))
  local v = c:wait()
  print(string.format('t=%d K got %d', s:now(), v))
end

local function lproc()
  s:sleep(10)
  local v = c:wait()
  print(string.format('t=%d L got %d at once (processed=%s)', s:now(), v, tostring(c:processed())))
end

local function mproc()
  s:sleep(10)
  print(string.format('t=%d M at 10', s:now()))
end

s:spawn(parent)
c = s:spawn(cproc)
s:spawn(jproc)
s:spawn(kproc)
s:spawn(lproc)
s:spawn(mproc)
s:run()
print('done t=' .. s:now())
