-- run(until=process): returns what the process returned; a process that
-- fails is raised by the run that processes it, and returned (the failure
-- itself) by a later run(until=) of it; run(until=any_of) returns when the
-- condition is processed, leaving the rest of the instant to the next run.
local s = sim.new()

local function job(name, d, fail)
  s:sleep(d)
  print(string.format('t=%d %s finishes', s:now(), name))
  if fail then error(name .. ' broke', 0) end
  return name .. '-ok'
end

local function noise()
  for i = 0, 7 do
    s:sleep(1)
    print(string.format('t=%d noise %d', s:now(), i))
  end
end

s:spawn(noise)
local p1 = s:spawn(job, 'J1', 2)
print(string.format('run -> %s at t=%d', s:run(p1), s:now()))
local p2 = s:spawn(job, 'J2', 2, true)
local ok, e = pcall(s.run, s, p2)
if not ok then
  print(string.format('run raised %s at t=%d', e.message, s:now()))
end
local v = s:run(p2)
print(string.format('again -> %s at t=%d', v.message, s:now()))
local c = s:any_of{s:timeout(2, 'x'), s:spawn(job, 'J3', 2)}
s:run(c)
print(string.format('any_of at t=%d', s:now()))
s:run()
print(string.format('done t=%d', s:now()))
