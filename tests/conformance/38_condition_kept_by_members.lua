-- A pending condition lives as long as its members can fire, even with no
-- other reference: it still takes a member's failure (so the run goes on),
-- then fails itself, and that failure, which nothing takes, crashes the run.
local s = sim.new()
local ev = s:event()
do
  local c = s:all_of{ev}
end
collectgarbage()
collectgarbage()

local function p()
  ev:fail('boom')
  s:sleep(0)
  print(string.format('t=%d after fail', s:now()))
end

s:spawn(p)
local ok, e = pcall(s.run, s)
if ok then
  print('run returned')
else
  print('run failed: ' .. tostring(type(e) == 'table' and e.message or e))
end
s:run()
print('done')
