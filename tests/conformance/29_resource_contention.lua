-- Contention for a 2-slot resource in one instant: U1 and U2 hold it from t=0
-- to t=2 while U3 and U4 queue; at t=2 the holders release and request again at
-- once and N1, N2 arrive. Each release hands a slot to the queue head when the
-- release is processed, so the re-requests queue behind N1 and N2.
local s = sim.new()
local r = s:resource(2)

local function state()
  return string.format('(in_use=%d queued=%d)', r:in_use(), r:queued())
end

local function holder(n)
  r:acquire()
  print(string.format('t=%d %s acquired %s', s:now(), n, state()))
  s:sleep(2)
  r:release()
  print(string.format('t=%d %s released %s', s:now(), n, state()))
  print(string.format('t=%d %s requests again %s', s:now(), n, state()))
  r:acquire()
  print(string.format('t=%d %s acquired again %s', s:now(), n, state()))
  r:release()
  print(string.format('t=%d %s released again %s', s:now(), n, state()))
end

local function user(n, t, hold)
  if t > 0 then
    s:sleep(t)
  end
  print(string.format('t=%d %s requests %s', s:now(), n, state()))
  r:acquire()
  print(string.format('t=%d %s acquired %s', s:now(), n, state()))
  if hold > 0 then
    s:sleep(hold)
  end
  r:release()
  print(string.format('t=%d %s released %s', s:now(), n, state()))
end

s:spawn(holder, 'U1')
s:spawn(holder, 'U2')
s:spawn(user, 'U3', 0, 1)
s:spawn(user, 'U4', 0, 0)
s:spawn(user, 'N1', 2, 0)
s:spawn(user, 'N2', 2, 1)
s:run()
print(string.format('done t=%d %s', s:now(), state()))
