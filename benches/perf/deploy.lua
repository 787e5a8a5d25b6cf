--- Deploy and read back a large f16 tensor sharded over all PEs of one SIP
-- (default 256 MiB over 128 PEs of the default topology): wall time,
-- events/s, simulated time and peak resident memory.
--
--   kernbench benches/perf/deploy.lua [MiB]
--
-- To stay within 2.5x the tensor size the host copy is dropped after the
-- deploy; the read-back is compared by a 64-bit hash taken before (the
-- deploy-roundtrip bench compares element by element at a small size).
local mib = tonumber(arg and arg[1]) or 256
local torchmod = require "kernbench.torch"
local U = require "scale_util"

local wall0 = os.clock()
local torch = torchmod.new { topology = kb.topology.load() }
local P = torch.spec
local cols = 1024
local rows = mib * 1024 * 1024 // (2 * cols)
torch.manual_seed(1)
local x = torch.rand({ rows, cols }, { dtype = "f16" })
local h = x:hash()
local dp = torch.DPPolicy { cube = "row_wise", pe = "row_wise" }
local d = torch.empty({ rows, cols }, { dtype = "f16", dp = dp, name = "big" })
local t0 = torch.now_ns()
torch.wait(d:copy_(x))
local t_deploy = torch.now_ns() - t0
x = nil
collectgarbage()
collectgarbage()
local t1 = torch.now_ns()
local y = d:cpu()
local t_read = torch.now_ns() - t1
local same = y:hash() == h
local st = torch.sim:stats()
local wall = os.clock() - wall0
print(("deploy %d MiB f16 (%d x %d) over %d PEs of %s: deploy %s, read back %s, data %s"):format(
  mib, rows, cols, P.cubes_per_sip * P.pes_per_cube, torch.topology.name, kb.format_ns(t_deploy),
  kb.format_ns(t_read), same and "identical" or "DIFFERENT"))
print(("events=%d sim_ns=%.3f wall_s=%.3f events_per_s=%.0f peak_rss_mib=%.0f tensor_mib=%d"):format(
  st.events, st.sim_ns, wall, st.events / wall, U.status_kib("VmHWM") / 1024, mib))
torch.close()
if not same then os.exit(1) end
