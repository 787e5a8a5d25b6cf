--- Simulator speed on a collective: the LRAB all-reduce (docs/ccl.md) on
-- topologies/torus_2d_6sip_2x3.yaml, 96 KiB per PE (49152 f16 per cube),
-- tcm rings, timing-only, through torch.distributed and spawn as a bench
-- would. Prints the events, the simulated crit_ns, the wall time inside the
-- simulation's runs and events/s over it.
--
--   kernbench benches/perf/allreduce_6sip.lua [n_elem]
local n = math.tointeger(tonumber(arg[1] or 49152))
if not n or n < 1 then
  io.stderr:write("usage: kernbench benches/perf/allreduce_6sip.lua [n_elem >= 1]\n")
  os.exit(2)
end
local U = require("scale_util")
local torch = require("kernbench.torch").new { topology = kb.topology.load("torus_2d_6sip_2x3") }
local P = torch.spec
local tensors = U.all_reduce_setup(torch, n)
local s = torch.sim
local before = s:stats { totals = true }
local crit = U.all_reduce_run(torch, tensors)
local after = s:stats { totals = true }
local events, wall = after.events - before.events, after.wall_s - before.wall_s
print(("allreduce_6sip sips=%d n_elem=%d bytes_per_pe=%d events=%d crit_ns=%.3f wall_s_in_runs=%.3f "
  .. "events_per_s=%.0f"):format(P.sips, n, 2 * n, events, crit, wall, events / wall))
torch.close()
