--- Kernel-call throughput: one launch on every PE of a SIP, each PE doing
-- N tl.load / tl.store pairs of B bytes from and to its own HBM slice,
-- timing-only. Prints wall time, events/s, Lua resumes/s and the wall cost
-- per tl.* call, measured inside the simulation's runs from submission of
-- the launch to its completion (the tensor's mapping is done before).
--
--   kernbench benches/perf/tl_calls.lua [pairs] [bytes]
--
-- Defaults: 1000 pairs of 1 KiB on the default topology (256 000 calls).

local pairs_n = tonumber(arg[1]) or 1000
local nbytes = tonumber(arg[2]) or 1024
local torch = require("kernbench.torch").new {}
local P = torch.spec
local npe = P.pes_per_cube * P.cubes_per_sip
local per_pe = pairs_n * nbytes
local cols = nbytes // 2
local t = torch.empty({ npe * pairs_n, cols }, { dtype = "f16", name = "buf",
                        dp = torch.DPPolicy { cube = "row_wise", pe = "row_wise" } })
torch.synchronize()
local s = torch.sim
local before = s:stats()
local h = torch.launch(function(tl, p, n)
  local base = p + (tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)) * per_pe
  for i = 0, n - 1 do
    local x = tl.load(base + i * nbytes, { cols }, "f16")
    tl.store(base + i * nbytes, x)
  end
end, { P.pes_per_cube, P.cubes_per_sip }, t, pairs_n)
local after = s:stats()
local wall = after.wall_s - before.wall_s
local events = after.events - before.events
local resumes = after.resumes - before.resumes
local calls = 2 * pairs_n * npe
print(("tl_calls pes=%d pairs=%d bytes=%d calls=%d events=%d resumes=%d sim_time=%s wall_s=%.3f "
  .. "events_per_s=%.0f resumes_per_s=%.0f us_per_call=%.3f")
  :format(npe, pairs_n, nbytes, calls, events, resumes, kb.format_ns(h:elapsed_ns()), wall,
    events / wall, resumes / wall, wall / calls * 1e6))
torch.close()
