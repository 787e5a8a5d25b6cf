-- Memory benchmark: a million flits pending at once (docs/scaling.md).
--
--   kernbench benches/perf/pending_flits.lua [F [FLITS]]
--       (defaults: 4096 transactions of 256 flits = 1 048 576 flits)
--
-- F transactions of FLITS flits each, all issued at time 0 from the first
-- node of topologies/chain.yaml (unless --topology names another graph) to
-- the last, so every flit is pending when the run starts. Reads the peak
-- resident memory (VmHWM of /proc/self/status) after the topology and the
-- simulation are made (base), after the transactions are issued (issued) and
-- after the run (peak: the whole process's peak), and prints them with the
-- bytes per pending flit ((peak - base) / flits) and the run's events and
-- wall time.
local U = require("scale_util")

local F = math.tointeger(tonumber(arg[1] or 4096))
local per = math.tointeger(tonumber(arg[2] or 256))
if not F or F < 1 or not per or per < 1 then
  io.stderr:write("usage: kernbench benches/perf/pending_flits.lua [F >= 1 [FLITS >= 1]]\n")
  os.exit(2)
end
local topo, first, last, nnodes = U.chain_ends()
local p = topo:params()

local s = sim.new { topology = topo }
collectgarbage("collect")
local base = U.status_kib("VmHWM")
local evs = {}
for i = 1, F do
  evs[i] = s:transfer { src = first, dst = last, nbytes = per * p.flit_bytes }
end
local issued = U.status_kib("VmHWM")
local t0 = U.wall()
s:run()
local wall = U.wall() - t0
local peak = U.status_kib("VmHWM")

local finish = 0
for i = 1, F do finish = math.max(finish, evs[i]:value().end_ns) end
local flits = F * per
local st = s:stats()
U.line("pending_flits", {
  { "txns", F }, { "flits_per_txn", per }, { "flits", flits }, { "nodes", nnodes },
  { "events", st.events }, { "finish_ns", finish, "%.3f" }, { "wall_s", wall },
  { "base_mib", base / 1024, "%.1f" }, { "issued_mib", issued / 1024, "%.1f" },
  { "peak_mib", peak / 1024, "%.1f" },
  { "bytes_per_flit", (peak - base) * 1024 / flits, "%.1f" },
})
