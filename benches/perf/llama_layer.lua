--- Simulator speed on a whole decoder layer (benches/llama_layer.lua,
-- docs/models.md): Llama-3-70B timing-only on a tray of N SIPs, prefill of
-- 128 tokens or one decode step (batch 8, context 4096). Prints the events,
-- the simulated time per layer, the wall time inside the simulation's runs,
-- events/s, the whole process's wall time so far and its peak resident
-- memory.
--
--   kernbench benches/perf/llama_layer.lua [sips [prefill|decode]]
local sips = math.tointeger(tonumber(arg[1] or 1))
local mode = arg[2] or "prefill"
if not sips or sips < 1 or (mode ~= "prefill" and mode ~= "decode") then
  io.stderr:write("usage: kernbench benches/perf/llama_layer.lua [sips >= 1 [prefill|decode]]\n")
  os.exit(2)
end
local U = require("scale_util")
local t0 = U.wall()
local topo = U.load_tray(sips)
local torch = require("kernbench.torch").new { topology = topo }
local model = require("kernbench.models.llama").model("llama-3-70b")
local layer = require "kernbench.models.llama_layer"
local before = torch.sim:stats()
local r = layer.run(torch, model, { mode = mode, tokens = mode == "decode" and 8 or 128, context = 4096,
                                    cubes = torch.spec.cubes_per_sip, pes = torch.spec.pes_per_cube })
local after = torch.sim:stats()
local events, wall = after.events - before.events, after.wall_s - before.wall_s
print(("llama_layer sips=%d mode=%s events=%d layer_ns=%.3f wall_s_in_runs=%.3f events_per_s=%.0f "
  .. "process_wall_s=%.3f peak_rss_mib=%.1f"):format(sips, mode, events, r.total_ns, wall, events / wall,
  U.wall() - t0, U.status_kib("VmHWM") / 1024))
torch.close()
