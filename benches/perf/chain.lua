-- Fabric throughput benchmark: F transactions of 64 flits injected at the
-- first node of topologies/chain.yaml at time 0, all to the last node.
--
--   kernbench benches/perf/chain.lua [F]        (default F = 256)
--   kernbench --set graph.line.count=16 benches/perf/chain.lua 1024
--
-- Prints one line: finish_ns (simulated time when the last flit is handled
-- at the last node), events, flit_hops, wall_s and flit_hops_per_s.
local F = tonumber(arg and arg[1]) or 256
-- The chain unless --topology names another; --set overrides apply either way.
local topo, first, last, nnodes = require("scale_util").chain_ends()
local p = topo:params()
local flits_per_txn = 64
local nbytes = flits_per_txn * p.flit_bytes

local s = sim.new{topology = topo}
local evs = {}
for i = 1, F do
  evs[i] = s:transfer{src = first, dst = last, nbytes = nbytes}
end
local t0 = os.clock()
s:run()
local wall = os.clock() - t0
local finish = 0
for i = 1, F do
  local r = evs[i]:value()
  if r.end_ns > finish then finish = r.end_ns end
end
local st = s:stats()
local hops = F * flits_per_txn * (nnodes - 1)
print(string.format("chain: nodes=%d txns=%d flits_per_txn=%d finish_ns=%.3f events=%d flit_hops=%d "
                    .. "wall_s=%.4f flit_hops_per_s=%.0f",
                    nnodes, F, flits_per_txn, finish, st.events, hops, wall, hops / wall))
