-- The issue's resource example: a one-slot resource; P1 acquires, releases and
-- acquires again with no time in between, P2 acquires once. The release passes
-- the slot to the waiting P2 before P1's second request is served.
local s = sim.new(); local r = s:resource(1)
s:spawn(function() r:acquire(); print('P1 acq1'); r:release(); r:acquire(); print('P1 acq2'); r:release() end)
s:spawn(function() r:acquire(); print('P2 acq'); r:release() end)
s:run()
print('done t=' .. s:now())
