-- run(until=event): the run stops once the event is processed and returns its
-- value (a hand event, a process's return value, a timeout, a condition);
-- events of the same instant queued after it wait for the next run; an event
-- already processed returns at once; a failed until event raises from run; a
-- run whose queue empties first raises.
local s = sim.new()
local gate = s:event()

local function ticker(name, n)
  for i = 0, n - 1 do
    s:sleep(1)
    print(string.format('t=%d %s tick %d', s:now(), name, i))
  end
end

local function opener()
  s:sleep(3)
  gate:succeed('open')
  print(string.format('t=%d gate opened', s:now()))
end

local function job()
  s:sleep(2)
  return 'job-result'
end

s:spawn(ticker, 'K', 12)
s:spawn(opener)
local v = s:run(gate)
print(string.format('run -> %s at t=%d', v, s:now()))
local j = s:spawn(job)
v = s:run(j)
print(string.format('run -> %s at t=%d', v, s:now()))
v = s:run(s:timeout(2, 'two'))
print(string.format('run -> %s at t=%d', v, s:now()))
v = s:run(gate)
print(string.format('again -> %s at t=%d', v, s:now()))
local bad = s:event()

local function breaker()
  s:sleep(1)
  bad:fail('broken')
end

s:spawn(breaker)
local ok, e = pcall(s.run, s, bad)
if not ok then
  print(string.format('run raised %s at t=%d', e, s:now()))
end
s:run(s:all_of{s:timeout(1), s:timeout(2)})
print(string.format('all_of at t=%d', s:now()))
local never = s:event()
if not pcall(s.run, s, never) then
  print(string.format('run: no events left at t=%d', s:now()))
end
