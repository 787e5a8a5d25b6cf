-- A little traffic on the default topology (pick it with -t): host writes
-- and reads and PE DMA transfers that overlap. With the argument "fail",
-- the script fails after its traffic has run.
local t = kb.topology.load()
local p = t:params()
local s = sim.new{ topology = t }
for c = 0, p.cubes_per_sip - 1 do
  s:memory_write{ sip = 0, cube = c, pe = 0, offset = 0, nbytes = 8192 }
  s:memory_read{ sip = 0, cube = c, pe = p.pes_per_cube - 1, offset = 0, nbytes = 2048 }
end
for pe = 0, p.pes_per_cube - 1 do
  s:pe_dma{ sip = 0, cube = 0, pe = pe, dst = { sip = 0, cube = p.cubes_per_sip - 1, pe = pe }, nbytes = 4096 }
end
s:run()
print(("traffic done at %.3f ns"):format(s:now()))
if ... == "fail" then error("boom after the traffic") end
