-- Scaling benchmark: PE traffic between SIPs on a tray of N SIPs
-- (docs/scaling.md).
--
--   kernbench benches/perf/cross_sip.lua [N [PEERS [NBYTES]]]
--       (defaults: the topology's SIP count, 4 peers, 16384 bytes)
--   benches/perf/scaling.sh runs it over N = 2 .. 64
--
-- PE 0 of every cube of every SIP writes NBYTES (a PE DMA write, acknowledged)
-- into the HBM slice of PEERS peers, each on another SIP: peer j of the
-- source on cube c of SIP s is PE 1 + j of cube c of SIP
-- (s + 1 + (c * PEERS + j) mod (N - 1)) mod N. With 16 cubes and 4 peers the
-- 64 writes of a SIP reach every other SIP of a tray of up to 65; the traffic
-- per SIP is the same at every N, so the work grows linearly with N.
--
-- Prints one line: the tray (sips, nodes, edges), the work (txns, events,
-- sim_ns), the wall time of the topology's load and compile (topo_s), of
-- issuing the writes (issue_s: their routes are looked up there) and of the
-- run (run_s), the process's CPU time over both (cpu_s: steadier than wall
-- time on a shared machine), ns_per_event over issue + run, and the inputs of
-- docs/scaling.md: events per SIP, the flits that cross a SIP boundary (into
-- the switch) per simulated us and per 1000 events, and the lookahead through
-- the switch.
local U = require("scale_util")

local n_arg, peers, nbytes = tonumber(arg[1]), tonumber(arg[2] or 4), tonumber(arg[3] or 16384)
local topo, topo_s = U.load_tray(n_arg)
local p = topo:params()
local N = p.sips
if N < 2 or not math.tointeger(peers) or peers < 1 or peers >= p.pes_per_cube
   or not math.tointeger(nbytes) or nbytes < 1 then
  io.stderr:write(("usage: kernbench benches/perf/cross_sip.lua [N >= 2 [PEERS 1..%d [NBYTES >= 1]]]\n")
                  :format(p.pes_per_cube - 1))
  os.exit(2)
end

local s = sim.new { topology = topo }
local t0, c0 = U.wall(), os.clock()
local writes = {}
for src = 0, N - 1 do
  for c = 0, p.cubes_per_sip - 1 do
    for j = 0, peers - 1 do
      local dst = (src + 1 + (c * peers + j) % (N - 1)) % N
      writes[#writes + 1] = s:pe_dma { sip = src, cube = c, pe = 0, nbytes = nbytes, write = true,
                                       dst = { sip = dst, cube = c, pe = 1 + j, offset = j * nbytes } }
    end
  end
end
local t1 = U.wall()
s:run()
local t2, c2 = U.wall(), os.clock()

local finish = 0
for _, w in ipairs(writes) do finish = math.max(finish, w:value().end_ns) end
local st = s:stats()
local xsip = U.switch_flits(st)
local la, la_ctrl = U.lookahead_ns(topo)
local wall = t2 - t0
U.line("cross_sip", {
  { "sips", N }, { "nodes", p.nodes }, { "edges", p.edges }, { "peers", peers }, { "nbytes", nbytes },
  { "txns", #writes }, { "events", st.events }, { "sim_ns", finish, "%.3f" },
  { "topo_s", topo_s }, { "issue_s", t1 - t0 }, { "run_s", t2 - t1 }, { "wall_s", wall }, { "cpu_s", c2 - c0 },
  { "ns_per_event", wall * 1e9 / st.events, "%.1f" },
  { "cpu_ns_per_event", (c2 - c0) * 1e9 / st.events, "%.1f" },
  { "events_per_sip", st.events // N },
  { "xsip_flits", xsip }, { "xsip_per_us", xsip / (finish / 1000), "%.1f" },
  { "xsip_per_kevent", xsip * 1000 / st.events, "%.2f" },
  { "lookahead_ns", la, "%.3f" }, { "lookahead_ctrl_ns", la_ctrl, "%.3f" },
  { "peak_mib", U.status_kib("VmHWM") / 1024, "%.1f" },
})
