-- Nested conditions (an all_of containing an any_of, an any_of containing an
-- all_of, conditions two levels deep) and empty conditions, which succeed when
-- built but are still processed through the queue in that instant.
local s = sim.new()

local function st(e)
  if e:processed() then return tostring(e:value()) end
  return '-'
end

local function nested1()
  local a2 = s:timeout(2, 'a2')
  local a5 = s:timeout(5, 'a5')
  local b3 = s:timeout(3, 'b3')
  s:all_of{s:any_of{a2, a5}, b3}:wait()
  print(string.format('t=%d N1 woke: a2=%s a5=%s b3=%s', s:now(), st(a2), st(a5), st(b3)))
end

local function nested2()
  local c1 = s:timeout(1, 'c1')
  local c4 = s:timeout(4, 'c4')
  local c6 = s:timeout(6, 'c6')
  s:any_of{s:all_of{c1, c4}, c6}:wait()
  print(string.format('t=%d N2 woke: c1=%s c4=%s c6=%s', s:now(), st(c1), st(c4), st(c6)))
end

local function nested3()
  local d1 = s:timeout(3, 'd1')
  local d2 = s:timeout(3, 'd2')
  local d3 = s:timeout(3, 'd3')
  local never = s:event()
  local inner = s:all_of{d1, s:any_of{d2, never}}
  s:all_of{inner, s:any_of{d3, never}}:wait()
  print(string.format('t=%d N3 woke: d1=%s d2=%s d3=%s never=%s', s:now(), st(d1), st(d2), st(d3), st(never)))
end

local function empty()
  s:sleep(3)
  print(string.format('t=%d E builds empty conditions', s:now()))
  local vals = s:all_of{}:wait()
  print(string.format('t=%d E empty all_of woke (%d values)', s:now(), #vals))
  s:any_of{}:wait()
  print(string.format('t=%d E empty any_of woke', s:now()))
end

local function other()
  s:sleep(3)
  print(string.format('t=%d O at 3', s:now()))
  s:sleep(0)
  print(string.format('t=%d O after sleep 0', s:now()))
end

s:spawn(nested1)
s:spawn(nested2)
s:spawn(empty)
s:spawn(nested3)
s:spawn(other)
s:run()
print('done t=' .. s:now())
