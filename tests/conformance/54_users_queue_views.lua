-- users / queue views of resources: which requests hold slots (in the order
-- they got them) and which wait (in queue order: arrival for a Resource,
-- priority for a PriorityResource), as requests are granted, cancelled and
-- released.
local s = sim.new()
local res = s:resource(2)
local pres = s:priority_resource(1)
local names = {}

local function show(tag, r)
  local us, qs = {}, {}
  for _, u in ipairs(r:users()) do us[#us + 1] = names[u] end
  for _, q in ipairs(r:queue()) do qs[#qs + 1] = names[q] end
  print(string.format('t=%d %s users=[%s] queue=[%s]', s:now(), tag, table.concat(us, ' '), table.concat(qs, ' ')))
end

local function make(r, name, prio)
  local req = prio and r:request{priority = prio} or r:request()
  names[req] = name
  return req
end

local function driver()
  local a = make(res, 'a')
  local b = make(res, 'b')
  local c = make(res, 'c')
  local d = make(res, 'd')
  show('res', res)
  a:wait()
  res:release(a)
  show('res', res)
  s:sleep(1)
  show('res', res)
  d:cancel()
  res:release(b)
  s:sleep(1)
  show('res', res)
  local p1 = make(pres, 'p1', 5)
  local p2 = make(pres, 'p2', 3)
  local p3 = make(pres, 'p3', 1)
  local p4 = make(pres, 'p4', 3)
  show('pres', pres)
  p1:wait()
  pres:release(p1)
  s:sleep(1)
  show('pres', pres)
  pres:release(p3)
  s:sleep(1)
  show('pres', pres)
end

s:spawn(driver)
s:run()
