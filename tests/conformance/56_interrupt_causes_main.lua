-- Interrupts sent by the main script between runs and by processes, with
-- causes of several kinds (none, a number, a string); a process interrupted
-- many times in one instant sees each in turn; a process that ends at once
-- after its first interrupt ignores the rest.
local s = sim.new()

local function show(c)
  return c == nil and 'nil' or tostring(c)
end

local function sturdy(name)
  local seen = 0
  while seen < 4 do
    local ok, i = pcall(s.sleep, s, 10)
    if ok then
      print(string.format('t=%d %s woke', s:now(), name))
      return
    end
    seen = seen + 1
    print(string.format('t=%d %s interrupt %d: %s', s:now(), name, seen, show(i.cause)))
  end
end

local function fragile(name)
  local ok, i = pcall(s.sleep, s, 10)
  if not ok then
    print(string.format('t=%d %s caught %s and ends', s:now(), name, show(i.cause)))
  end
end

local function sender(targets)
  s:sleep(1)
  for _, tc in ipairs(targets) do tc[1]:interrupt(tc[2]) end
  print(string.format('t=%d sender sent %d', s:now(), #targets))
end

local s1 = s:spawn(sturdy, 'S1')
local f1 = s:spawn(fragile, 'F1')
s:run(2)
s1:interrupt(nil)
s1:interrupt(7)
f1:interrupt('x')
print(string.format('main sent at t=%d', s:now()))
s:run(3)
print(string.format('main t=%d f1 alive=%s', s:now(), tostring(f1:alive())))
s:spawn(sender, {{s1, 'a'}, {s1, 'b'}})
s:run()
print(string.format('done t=%d', s:now()))
