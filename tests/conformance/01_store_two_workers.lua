-- The issue's store example: four items already in an unbounded store, two
-- workers get in an endless loop without spending time. Each get yields and
-- resumes in the same instant, so the workers alternate.
local s = sim.new(); local st = s:store()
for i = 0, 3 do st:put(i) end
for _, n in ipairs{'A', 'B'} do
  s:spawn{fn = function() while true do print(n .. ' got' .. st:get()) end end, daemon = true}
end
s:run()
print('done t=' .. s:now())
