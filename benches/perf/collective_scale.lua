-- Scaling benchmark: an all-reduce over every SIP of a tray of N SIPs
-- (docs/scaling.md).
--
--   kernbench benches/perf/collective_scale.lua [N [N_ELEM [ALGORITHM]]]
--       (defaults: the topology's SIP count, 16384 f16 per cube, ccl.yaml's
--       algorithm: the LRAB hierarchical all-reduce)
--   benches/perf/scaling.sh runs it over N = 2 .. 64
--
-- As benches/perf/allreduce_6sip.lua (scale_util.all_reduce_setup): one rank
-- per SIP through torch.distributed and spawn, a [cubes, N_ELEM] f16 tensor
-- per SIP (a row on PE 0 of each cube), tcm rings, timing-only. The bytes per PE are the same
-- at every N, so the work per SIP stays about constant and the run grows with N.
--
-- Prints one line: the tray (sips, nodes), the work (events of the
-- all-reduce, crit_ns: its simulated critical path), the wall time of the
-- topology's load and compile (topo_s), of the setup (setup_s: the queues'
-- installation and the tensors' deployment), of the all-reduce (wall_s: its
-- spawn from start to end; runs_s: inside the simulation's runs; cpu_s: the
-- process's CPU time over the spawn),
-- ns_per_event over wall_s, and the inputs of docs/scaling.md: events per
-- SIP, the flits that cross a SIP boundary (into the switch) per simulated us
-- and per 1000 events, and the lookahead through the switch.
local U = require("scale_util")

local n_arg, n = tonumber(arg[1]), math.tointeger(tonumber(arg[2] or 16384))
local algorithm = arg[3]
if not n or n < 1 then
  io.stderr:write("usage: kernbench benches/perf/collective_scale.lua [N [N_ELEM >= 1 [ALGORITHM]]]\n")
  os.exit(2)
end
local topo, topo_s = U.load_tray(n_arg)
local p = topo:params()

local t0 = U.wall()
local torch = require("kernbench.torch").new { topology = topo }
local P = torch.spec
local tensors = U.all_reduce_setup(torch, n, algorithm)
local s = torch.sim
local before = s:stats()
local t1, c1 = U.wall(), os.clock()
local crit = U.all_reduce_run(torch, tensors)
local t2, c2 = U.wall(), os.clock()
local after = s:stats()

local events = after.events - before.events
local into_before = U.switch_flits(before)
local xsip = U.switch_flits(after) - into_before
local sim_ns = after.sim_ns - before.sim_ns
local la, la_ctrl = U.lookahead_ns(topo)
local wall = t2 - t1
U.line("collective_scale", {
  { "sips", P.sips }, { "nodes", p.nodes }, { "algorithm", torch.distributed.get_config().algorithm },
  { "n_elem", n }, { "bytes_per_pe", 2 * n },
  { "events", events }, { "crit_ns", crit, "%.3f" }, { "sim_ns", sim_ns, "%.3f" },
  { "topo_s", topo_s }, { "setup_s", t1 - t0 }, { "wall_s", wall }, { "cpu_s", c2 - c1 },
  { "runs_s", after.wall_s - before.wall_s },
  { "ns_per_event", wall * 1e9 / events, "%.1f" },
  { "cpu_ns_per_event", (c2 - c1) * 1e9 / events, "%.1f" },
  { "events_per_sip", events // P.sips },
  { "xsip_flits", xsip }, { "xsip_per_us", xsip / (sim_ns / 1000), "%.1f" },
  { "xsip_per_kevent", xsip * 1000 / events, "%.2f" },
  { "lookahead_ns", la, "%.3f" }, { "lookahead_ctrl_ns", la_ctrl, "%.3f" },
  { "peak_mib", U.status_kib("VmHWM") / 1024, "%.1f" },
})
torch.close()
