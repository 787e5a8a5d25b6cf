--- Composite GEMM throughput: one M x K x N f16 tl.composite GEMM on one PE
-- with the default tiles, A and B streamed from HBM, timing-only. Prints the
-- tiles, events, simulated time, wall time and events/s of the launch.
--
--   kernbench benches/perf/gemm_pipeline.lua [M [K [N]]]     (default 4096^3)

local M = tonumber(arg[1]) or 4096
local K = tonumber(arg[2]) or M
local N = tonumber(arg[3]) or K
local torch = require("kernbench.torch").new {}
local one = torch.DPPolicy { num_cubes = 1, num_pes = 1, cube = "row_wise", pe = "row_wise" }
local da = torch.empty({ M, K }, { dtype = "f16", dp = one, name = "A" })
local db = torch.empty({ K, N }, { dtype = "f16", dp = one, name = "B" })
local dc = torch.empty({ M, N }, { dtype = "f16", dp = one, name = "C" })
torch.synchronize()
local s = torch.sim
local before = s:stats()
local tiles
local h = torch.launch(function(tl, pa, pb, pc)
  local c = tl.composite { op = "gemm", a = tl.ref(pa, { M, K }), b = tl.ref(pb, { K, N }), out_ptr = pc }
  tl.wait(c)
  tiles = c:stats().tiles
end, 1, da, db, dc)
local after = s:stats()
local wall = after.wall_s - before.wall_s
local events = after.events - before.events
print(("gemm_pipeline m=%d k=%d n=%d tiles=%d events=%d sim_time=%s wall_s=%.3f events_per_s=%.0f tflops=%.2f")
  :format(M, K, N, tiles, events, kb.format_ns(h.result.pe_exec_ns), wall, events / wall,
    2 * M * K * N / h.result.pe_exec_ns / 1000))
torch.close()
