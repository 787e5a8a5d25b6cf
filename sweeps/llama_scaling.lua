-- The Llama-3-70B decoder layer (benches/llama_layer.lua, docs/models.md)
-- from 1 to 64 SIPs, timing-only at full shapes: prefill of 128 tokens and
-- one decode step (batch 8, context 4096) on the tray sizes
-- system.sips.count accepts. Writes the time per layer and the speed-up over
-- one SIP against the SIPs (scaling_layer_ns.png, scaling_speedup.png).
--
--   kernbench -j 2 sweep sweeps/llama_scaling.lua     # out/sweep-llama_scaling/
return {
  name = "llama_scaling",
  description = "llama-3-70b decoder layer, prefill and decode, on 1 to 64 SIPs",
  bench = "llama-layer",
  timeout = 3600,
  axes = {
    param = { mode = { "prefill", "decode" } },
    set = { ["system.sips.count"] = { 1, 2, 4, 8, 16, 64 } },
  },
  order = { "mode", "system.sips.count" },
  metrics = { layer_ns = "result.layer_ns", compute_share = "result.shares.compute",
              memory_share = "result.shares.memory", communication_share = "result.shares.communication" },
  derived = {
    -- the same mode's time on one SIP over this point's
    { "speedup", function(r, rows)
      for _, o in ipairs(rows) do
        if o.mode == r.mode and o["system.sips.count"] == 1 then return o.layer_ns / r.layer_ns end
      end
    end },
  },
  plots = {
    { name = "scaling_layer_ns", x = "system.sips.count", y = "layer_ns", series = "mode", logx = true, logy = true,
      title = "llama-3-70b layer: simulated time per layer", xlabel = "SIPs", ylabel = "ns" },
    { name = "scaling_speedup", x = "system.sips.count", y = "speedup", series = "mode", logx = true,
      title = "llama-3-70b layer: speed-up over 1 SIP", xlabel = "SIPs", ylabel = "speed-up" },
  },
}
