-- Routing cost on large trays (docs/PERFORMANCE.md "Routing at scale").
--
--   kernbench benches/perf/route_all_to_all.lua [N]   (default 2 SIPs)
--
-- Loads default.yaml with N SIPs and asks for the route from PE 0's DMA
-- engine of every cube to HBM controller 0 of every cube of every other SIP
-- (the PE DMA routing policy: the data view), N * 16 * (N - 1) * 16 pairs.
-- Prints the pairs, the nodes on their paths (a checksum of the routes: it
-- is the same before and after a change that keeps routes identical) and
-- the CPU seconds of the lookups (os.clock: steadier than wall time on a
-- shared machine), excluding the topology's load.
local n = tonumber(arg and arg[1] or "2")
local t = kb.topology.load("default", {"system.sips.count=" .. n})
local cubes = t:params().cubes_per_sip
local t0 = os.clock()
local pairs_, hops = 0, 0
for s = 0, n - 1 do
    for c = 0, cubes - 1 do
        local src = string.format("sip%d.cube%d.pe0.pe_dma", s, c)
        for d = 0, n - 1 do
            if d ~= s then
                for c2 = 0, cubes - 1 do
                    hops = hops + #t:path(src, string.format("sip%d.cube%d.hbm_ctrl.pe0", d, c2))
                    pairs_ = pairs_ + 1
                end
            end
        end
    end
end
local dt = os.clock() - t0
print(string.format("sips=%d nodes=%d pairs=%d path_nodes=%d route_cpu_s=%.3f us_per_pair=%.1f", n,
                    #t:nodes(), pairs_, hops, dt, dt / math.max(pairs_, 1) * 1e6))
