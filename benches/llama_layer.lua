--- One decoder layer of a Llama-family model over the whole tray
-- (docs/models.md, "A decoder layer"): RMSNorm, QKV projection, rotary
-- embedding, causal GQA attention, output projection, SwiGLU MLP and the
-- residuals, tensor parallel over the SIPs (Megatron: column-parallel QKV
-- and gate/up, row-parallel output and down projections, each followed by
-- an all-reduce), then over each SIP's cubes and PEs. Prints and returns
-- each phase's simulated time, the engines' busy time, its busiest link,
-- and the shares of compute, memory and communication on the critical
-- path; writes OUT/phases.csv and, with gnuplot, OUT/phases.png (a stacked
-- bar). With --data (or --verify-data) the output is checked against the
-- host reference (use --param model=llama-tiny: full shapes are timing-only).
--
--   kernbench run llama-layer                                  # Llama-3-70B prefill, 128 tokens
--   kernbench --param mode=decode --param batch=8 --param context=4096 run llama-layer
--   kernbench --set system.sips.count=4 --data --param model=llama-tiny run llama-layer
local layer = require "kernbench.models.llama_layer"
local llama = require "kernbench.models.llama"

local function csv(r)
  local lines = { "phase,class,ns,events,pe_gemm_util,pe_math_util,pe_dma_util,pe_tcm_util,hbm_ctrl_util," ..
                  "bottleneck_link,bottleneck_util,busiest_component,busiest_component_util" }
  for _, p in ipairs(r.phases) do
    local u, b, c = p.engine_util, p.bottleneck_link or {}, p.busiest_component or {}
    lines[#lines + 1] = ("%s,%s,%.3f,%d,%.4f,%.4f,%.4f,%.4f,%.4f,%s,%.4f,%s,%.4f"):format(p.name, p.class, p.ns,
      p.events, u.pe_gemm, u.pe_math, u.pe_dma, u.pe_tcm, u.hbm_ctrl, b.link or "", b.util or 0, c.id or "", c.util or 0)
  end
  return table.concat(lines, "\n") .. "\n"
end

-- One stacked bar: the phases' times in order (gnuplot), written atomically.
local function plot(r, dir, title)
  if not os.execute("command -v gnuplot >/dev/null 2>&1") then
    print("llama-layer: gnuplot is not installed: no phases.png (apt-get install gnuplot-nox)")
    return
  end
  local head, vals = { "layer" }, { "layer" }
  for _, p in ipairs(r.phases) do
    head[#head + 1] = p.name
    vals[#vals + 1] = ("%.3f"):format(p.ns / 1000)
  end
  kb.write_file(dir .. "/phases.dat", table.concat(head, " ") .. "\n" .. table.concat(vals, " ") .. "\n")
  local png = kb.open_output(dir .. "/phases.png")
  local gp = { "set terminal pngcairo size 700,700", "set termoption noenhanced", "set style data histograms",
               "set style histogram rowstacked", "set style fill solid 0.85 border -1", "set boxwidth 0.5",
               "set key outside right", "set ylabel \"us\"", "set grid ytics", "set yrange [0:*]",
               ("set title %q"):format(title), ("set output %q"):format(png:temp()),
               -- one colour per phase (gnuplot's default cycle repeats after 8)
               "colors = \"#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf " ..
                 "#393b79 #e7ba52\"",
               ("plot for [i=2:%d] %q using i:xtic(1) title columnheader(i) lc rgb word(colors, i - 1)"):format(
                 #r.phases + 1, dir .. "/phases.dat") }
  kb.write_file(dir .. "/phases.gp", table.concat(gp, "\n") .. "\n")
  if os.execute(("gnuplot %q 2>%q"):format(dir .. "/phases.gp", dir .. "/phases.log")) then
    png:close()
    print(("llama-layer: wrote %s/phases.png"):format(dir))
  else
    png:abort()
    print(("llama-layer: gnuplot failed (%s/phases.log); phases.csv holds every figure"):format(dir))
  end
end

return {
  name = "llama-layer",
  description = "one Llama decoder layer (prefill or decode) tensor parallel over every SIP, cube and PE: where the time goes",
  params = {
    model = { default = "llama-3-70b", help = "llama-3-70b, llama-3-8b, llama-tiny (for --data) or a .lua model file" },
    mode = { default = "prefill", choices = { "prefill", "decode" }, help = "a prompt's prefill or one decode step" },
    seq = { default = 128, min = 1, help = "prefill: tokens of the sequence (a multiple of the PEs per cube)" },
    batch = { default = 8, min = 1, help = "decode: sequences in the batch, one new token each" },
    context = { default = 4096, min = 1, help = "decode: cached positions per sequence, the new one included" },
    cubes = { default = 0, min = 0, help = "cubes per SIP (0: all)", labels = { [0] = "all" } },
    pes = { default = 0, min = 0, help = "PEs per cube (0: all)", labels = { [0] = "all" } },
    seed = { default = 1, help = "seed of the weights and inputs (data mode)" },
    slot_size = { default = 0, min = 0, multiple = 16, help = "the all-reduces' ring slot bytes (0: ccl.yaml's)",
                  labels = { [0] = "ccl.yaml" } },
    n_slots = { default = 0, min = 0, help = "the all-reduces' ring slots (0: ccl.yaml's)", labels = { [0] = "ccl.yaml" } },
    buffer_kind = { default = "", choices = { "", "tcm", "sram", "hbm" },
                    help = "where the all-reduces' rings live (empty: ccl.yaml's)" },
    out = { default = "out/llama_layer", help = "directory of phases.csv and phases.png (created)" },
  },
  run = function(torch, p)
    local params = require "kernbench.bench_params"
    local pes, cubes = params.grid(torch.spec, p)
    if cubes ~= 1 and cubes ~= torch.spec.cubes_per_sip then
      params.invalid("cubes", p.cubes, ("the all-reduces take one cube or all %d of a SIP"):format(torch.spec.cubes_per_sip))
    end
    params.out_dir("out", p.out)
    local ok, model = pcall(llama.model, p.model)
    if not ok then params.invalid("model", p.model, model) end
    local decode = p.mode == "decode"
    local o = { mode = p.mode, tokens = decode and p.batch or p.seq, context = p.context, cubes = cubes, pes = pes,
                seed = p.seed }
    o.ccl = { slot_size = p.slot_size > 0 and p.slot_size or nil, n_slots = p.n_slots > 0 and p.n_slots or nil,
              buffer_kind = p.buffer_kind ~= "" and p.buffer_kind or nil }
    local ok2, plan = pcall(layer.plan, torch, model, o)
    if not ok2 then params.usage_error("llama-layer: %s on this tray: %s", model.name, plan) end
    local r = layer.run(torch, model, o, plan)
    local what = decode and ("decode, batch %d, context %d"):format(p.batch, p.context)
      or ("prefill, %d tokens"):format(p.seq)
    print(("llama-layer: %s, %s, %d SIPs x %d cubes x %d PEs (TP %d over SIPs; %d heads and %d KV heads per cube)")
      :format(model.name, what, plan.W, plan.C, plan.P, plan.W, plan.Hc, plan.Gc))
    print(("  a cube's PEs split out_proj by %s, gate_up by %s, down by %s (whichever streams fewer bytes)"):format(
      plan.split.out_proj, plan.split.gate_up, plan.split.down))
    print(("  %-18s %-13s %12s %7s %7s %7s %7s  %s"):format("phase", "class", "time", "gemm", "math", "dma", "hbm",
      "busiest link; busiest component"))
    for _, ph in ipairs(r.phases) do
      local u, b, c = ph.engine_util, ph.bottleneck_link, ph.busiest_component
      print(("  %-18s %-13s %12s %6.1f%% %6.1f%% %6.1f%% %6.1f%%  %s; %s"):format(ph.name, ph.class,
        kb.format_ns(ph.ns), 100 * u.pe_gemm, 100 * u.pe_math, 100 * u.pe_dma, 100 * u.hbm_ctrl,
        b and ("%s %.0f%%"):format(b.link, 100 * b.util) or "-", c and ("%s %.0f%%"):format(c.id, 100 * c.util) or "-"))
    end
    print(("  %-18s %-13s %12s   critical path: compute %.1f%%, memory %.1f%%, communication %.1f%%"):format(
      "layer", "", kb.format_ns(r.total_ns), 100 * r.shares.compute, 100 * r.shares.memory,
      100 * r.shares.communication))
    if torch.data then
      print(("llama-layer: verified every rank's output against the host reference (worst error %.3g)")
        :format(r.worst_error))
    end
    local f = kb.open_output(p.out .. "/phases.csv")
    kb.write_file(f:temp(), csv(r))
    f:close()
    plot(r, p.out, ("%s %s, %d SIPs: %s per layer"):format(model.name, what, plan.W, kb.format_ns(r.total_ns)))
    local phases = {}
    for i, ph in ipairs(r.phases) do
      phases[i] = { name = ph.name, class = ph.class, ns = ph.ns, events = ph.events, engine_busy_ns = ph.engine_busy_ns,
                    engine_util = ph.engine_util, bottleneck_link = ph.bottleneck_link,
                    busiest_component = ph.busiest_component }
    end
    return { model = model.name, mode = p.mode, tokens = plan.T, context = plan.L, sips = plan.W, cubes = plan.C,
             pes = plan.P, splits = plan.split, layer_ns = r.total_ns, shares = r.shares, phases = phases, worst_error = r.worst_error }
  end,
}
