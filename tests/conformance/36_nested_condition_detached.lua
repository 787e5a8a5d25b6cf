-- Processing a condition detaches the conditions nested in it, however deep:
-- an inner condition still pending then never fires, and a failure of its
-- member is not taken by it (the run crashes at once). An inner condition
-- triggered before the outer one is processed still fires.
local s = sim.new()

local ev = s:event()

local function watcher()
  local inner = s:all_of{s:timeout(2, 'a')}
  local deep = s:all_of{ev}
  local outer = s:any_of{s:timeout(1, 'b'), inner, s:any_of{deep}}
  outer:wait()
  print(string.format('t=%d outer fired', s:now()))
  s:sleep(4)
  print(string.format('t=%d inner triggered=%s processed=%s deep triggered=%s', s:now(),
    tostring(inner:triggered()), tostring(inner:processed()), tostring(deep:triggered())))
end

local function failer()
  s:sleep(3)
  ev:fail('boom')
  s:sleep(0)
  print(string.format('t=%d failer goes on', s:now()))
end

local function racer()
  s:sleep(10)
  local inner = s:all_of{s:timeout(1, 'i')}
  local outer = s:any_of{s:timeout(1, 'o'), inner}
  outer:wait()
  print(string.format('t=%d racer: inner triggered=%s', s:now(), tostring(inner:triggered())))
  s:sleep(1)
  print(string.format('t=%d racer: inner processed=%s', s:now(), tostring(inner:processed())))
end

s:spawn(watcher)
s:spawn(failer)
s:spawn(racer)
local ok, e = pcall(s.run, s)
if ok then
  print('run returned')
else
  print(string.format('run failed: %s (t=%d)', type(e) == 'table' and tostring(e.message) or tostring(e), s:now()))
end
s:run()
print(string.format('done t=%d', s:now()))
