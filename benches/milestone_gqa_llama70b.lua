--- GQA Llama-70B milestone (docs/models.md): grouped-query attention with
-- Llama-70B's head geometry (64 query heads sharing 8 K/V heads, head dim
-- 128) at validation scale, run by the ring attention kernels on one SIP in
-- data mode and verified against the host reference.
--
--   kernbench [--param skv=32] [--param out=DIR] [--param fast=1] run milestone-gqa-llama70b
--
-- Four panels (spec §2.6): single user, one sequence split over the 8 PEs of
-- a cube (rank_axis 0), and multi user, a sequence split over 4 cubes with
-- PE 0 of each working (rank_axis 1; the cubes' other PEs are left to other
-- users); each as a prefill (16 query tokens per rank, attention_mesh_kv) and
-- a decode step (one token, attention_mesh_mlo). A rank holds one GQA group,
-- 8 query heads and their K/V head (Llama-70B has 8 such groups; each is the
-- same work on other hardware) and `skv` keys per rank. Then the scaling
-- panel: the multi-user panels with 1, 2, 4 and 8 query heads per cube.
--
-- The panels run one after another in data mode (needs_data). Per panel: the simulated time, the
-- op-log counts (gemm, ipcq_send, ipcq_recv, dma_read, dma_write), each PE
-- engine's busy time and the time waiting on the queues, per rank. Writes,
-- in `out` (default out/milestone_gqa): sweep.json (schema
-- "kernbench.gqa_sweep" version 1, docs/models.md), gqa_sweep.csv and, with
-- gnuplot, gqa_op_log_<panel>.png x 4, gqa_comparison.png and
-- gqa_scaling.png; each appears only once complete. fast=1 (or
-- MILESTONE_FAST=1) re-renders the CSV and plots from an existing sweep.json
-- without simulating.
local json = require "kernbench.json"
local att = require "kernbench.models.attention"

local SCHEMA, VERSION = "kernbench.gqa_sweep", 1
local MODEL = { name = "llama-70b", n_heads = 64, n_kv_heads = 8, head_dim = 128 }
local PANELS = {
  { name = "single_user_prefill", kind = "prefill", ranks = 8, rank_axis = 0, sq = 16 },
  { name = "multi_user_prefill", kind = "prefill", ranks = 4, rank_axis = 1, sq = 16 },
  { name = "single_user_decode", kind = "decode", ranks = 8, rank_axis = 0, sq = 1 },
  { name = "multi_user_decode", kind = "decode", ranks = 4, rank_axis = 1, sq = 1 },
}
local SCALING_HEADS = { 1, 2, 4, 8 }
local COUNTS = { "gemm", "ipcq_send", "ipcq_recv", "dma_read", "dma_write" }
local ENGINES = { "pe_gemm", "pe_math", "pe_dma", "pe_ipcq" }
local OUTPUTS = { "sweep.json", "gqa_sweep.csv" }
local PLOTS = { "gqa_op_log_single_user_prefill.png", "gqa_op_log_multi_user_prefill.png",
                "gqa_op_log_single_user_decode.png", "gqa_op_log_multi_user_decode.png",
                "gqa_comparison.png", "gqa_scaling.png" }

local function kernel_of(kind) return kind == "prefill" and "attention_mesh_kv" or "attention_mesh_mlo" end
local function install_of(axis, ranks)
  return axis == 0 and ("ring_1d over PEs 0-%d of cube 0"):format(ranks - 1)
    or ("ring_1d over PE 0 of cubes 0-%d"):format(ranks - 1)
end

-- One attention, after the panels before it on the same simulation (each
-- panel's figures are its own: its launch's time, counts and records).
local function run_panel(torch, panel, heads, skv, seed)
  local r = att.run(torch, { kind = panel.kind, ranks = panel.ranks, rank_axis = panel.rank_axis, sq = panel.sq,
                             skv = skv, d = MODEL.head_dim, n_heads = heads, n_kv_heads = 1, seed = seed })
  return {
    name = panel.name, kind = panel.kind, kernel = kernel_of(panel.kind),
    install = install_of(panel.rank_axis, panel.ranks), rank_axis = panel.rank_axis, n_ranks = panel.ranks,
    s_q = panel.sq, s_kv_per_rank = skv, q_heads_per_rank = heads, kv_heads_per_rank = 1, head_dim = MODEL.head_dim,
    sim_ns = r.exec_ns, counts = r.counts, engine_busy_ns = r.engine_ns, ipcq_wait_ns = r.ipcq_wait_ns,
    worst_error = r.verified,
  }
end

local function panel_json(p)
  local counts, engines = {}, {}
  for _, c in ipairs(COUNTS) do counts[#counts + 1] = { c, p.counts[c] } end
  for _, e in ipairs(ENGINES) do engines[#engines + 1] = { e, p.engine_busy_ns and p.engine_busy_ns[e] } end
  return json.obj({ "name", p.name }, { "kind", p.kind }, { "kernel", p.kernel }, { "install", p.install },
    { "rank_axis", p.rank_axis }, { "n_ranks", p.n_ranks }, { "s_q", p.s_q }, { "s_kv_per_rank", p.s_kv_per_rank },
    { "q_heads_per_rank", p.q_heads_per_rank }, { "kv_heads_per_rank", p.kv_heads_per_rank },
    { "head_dim", p.head_dim }, { "sim_ns", p.sim_ns }, { "counts", json.obj(table.unpack(counts)) },
    { "engine_busy_ns", p.engine_busy_ns and json.obj(table.unpack(engines)) or nil }, { "ipcq_wait_ns", p.ipcq_wait_ns },
    { "worst_error", p.worst_error })
end

local function sweep_json(sweep)
  local panels, scaling = {}, {}
  for _, p in ipairs(sweep.panels) do panels[#panels + 1] = panel_json(p) end
  for _, p in ipairs(sweep.scaling) do scaling[#scaling + 1] = panel_json(p) end
  return json.obj({ "schema", SCHEMA }, { "version", VERSION },
    { "model", json.obj({ "name", MODEL.name }, { "n_heads", MODEL.n_heads }, { "n_kv_heads", MODEL.n_kv_heads },
      { "head_dim", MODEL.head_dim }) },
    { "topology", sweep.topology }, { "verified", true }, { "panels", panels }, { "scaling", scaling })
end

-- sweep.json read back: the schema and version checked, every figure the
-- renderers use present.
local function read_sweep(path)
  local f, err = io.open(path)
  if not f then
    error(("fast=1 re-renders an existing sweep, but %s cannot be read (%s); "
      .. "run without fast=1 first"):format(path, err), 0)
  end
  local text = f:read("a")
  f:close()
  local ok, doc = pcall(json.decode, text)
  if not ok then error(("%s: %s"):format(path, doc), 0) end
  if type(doc) ~= "table" or doc.schema ~= SCHEMA or doc.version ~= VERSION then
    error(("%s is not a %s version %d document"):format(path, SCHEMA, VERSION), 0)
  end
  for _, list in ipairs { "panels", "scaling" } do
    if type(doc[list]) ~= "table" or #doc[list] == 0 then
      error(("%s: %s is missing or empty"):format(path, list), 0)
    end
    for i, p in ipairs(doc[list]) do
      local function need(v, what)
        if v == nil then error(("%s: %s[%d] has no %s"):format(path, list, i, what), 0) end
      end
      for _, k in ipairs { "name", "kind", "rank_axis", "n_ranks", "s_q", "s_kv_per_rank", "q_heads_per_rank",
                           "sim_ns", "counts", "ipcq_wait_ns" } do
        need(p[k], k)
      end
      for _, c in ipairs(COUNTS) do need(p.counts[c], "counts." .. c) end
    end
  end
  return doc
end

local CSV_HEAD = "section,name,kind,kernel,rank_axis,n_ranks,s_q,s_kv_per_rank,q_heads_per_rank,sim_ns," ..
                 "gemm,ipcq_send,ipcq_recv,dma_read,dma_write,pe_gemm_ns,pe_math_ns,pe_dma_ns,pe_ipcq_ns," ..
                 "ipcq_wait_ns,worst_error"

local function to_csv(doc)
  local lines = { CSV_HEAD }
  for _, section in ipairs { "panels", "scaling" } do
    for _, p in ipairs(doc[section]) do
      local c, e = p.counts, p.engine_busy_ns or {}
      local function ns(v) return v and ("%.3f"):format(v) or "" end
      lines[#lines + 1] = ("%s,%s,%s,%s,%d,%d,%d,%d,%d,%.3f,%d,%d,%d,%d,%d,%s,%s,%s,%s,%.3f,%s"):format(
        section, p.name, p.kind, p.kernel or kernel_of(p.kind), p.rank_axis, p.n_ranks, p.s_q, p.s_kv_per_rank,
        p.q_heads_per_rank, p.sim_ns, c.gemm, c.ipcq_send, c.ipcq_recv, c.dma_read, c.dma_write, ns(e.pe_gemm),
        ns(e.pe_math), ns(e.pe_dma), ns(e.pe_ipcq), p.ipcq_wait_ns, p.worst_error and ("%.3g"):format(p.worst_error) or "")
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- The six PNGs through gnuplot into the outputs' temporary files, renamed
-- when gnuplot succeeds (all or none).
local function plots(doc, dir, outs)
  if not outs.plots then
    print("milestone-gqa-llama70b: gnuplot is not installed: no PNG plots (apt-get install gnuplot-nox); "
      .. "sweep.json and the CSV hold every figure")
    return
  end
  local gp = { "set terminal pngcairo size 900,600", "set termoption noenhanced", "set style fill solid 0.8",
               "set grid ytics", "set key top left" }
  -- per panel: the five counts
  for i, p in ipairs(doc.panels) do
    local rows = {}
    for j, c in ipairs(COUNTS) do rows[#rows + 1] = ("%d %s %d"):format(j - 1, c, p.counts[c]) end
    kb.write_file(("%s/gqa_%s.dat"):format(dir, p.name), table.concat(rows, "\n") .. "\n")
    gp[#gp + 1] = ("set output %q"):format(outs.plots[i]:temp())
    gp[#gp + 1] = ("set title \"%s: op-log counts (%d ranks, %s, %.1f us simulated)\""):format(p.name, p.n_ranks,
      p.kernel or kernel_of(p.kind), p.sim_ns / 1000)
    gp[#gp + 1] = "set boxwidth 0.6\nset ylabel \"operations\"\nset yrange [0:*]\nunset xrange"
    gp[#gp + 1] = ("plot %q using 1:3:xtic(2) with boxes notitle, '' using 1:3:3 with labels offset 0,0.7 notitle")
      :format(("%s/gqa_%s.dat"):format(dir, p.name))
  end
  -- comparison: the five counts, a bar per panel
  local rows = { "count " .. table.concat((function()
    local names = {}
    for _, p in ipairs(doc.panels) do names[#names + 1] = p.name end
    return names
  end)(), " ") }
  for _, c in ipairs(COUNTS) do
    local r = { c }
    for _, p in ipairs(doc.panels) do r[#r + 1] = p.counts[c] end
    rows[#rows + 1] = table.concat(r, " ")
  end
  kb.write_file(dir .. "/gqa_comparison.dat", table.concat(rows, "\n") .. "\n")
  gp[#gp + 1] = ("set output %q"):format(outs.plots[5]:temp())
  gp[#gp + 1] = "set title \"op-log counts per panel\"\nset ylabel \"operations\"\nset yrange [0:*]"
  gp[#gp + 1] = "set style data histograms\nset style histogram clustered gap 1\nset boxwidth 0.9\nset key autotitle columnheader"
  gp[#gp + 1] = ("plot for [i=2:%d] %q using i:xtic(1)"):format(#doc.panels + 1, dir .. "/gqa_comparison.dat")
  -- scaling: time against query heads per cube, prefill and decode
  local srows = {}
  for _, kind in ipairs { "prefill", "decode" } do
    for _, p in ipairs(doc.scaling) do
      if p.kind == kind then srows[#srows + 1] = ("%d %.3f"):format(p.q_heads_per_rank, p.sim_ns / 1000) end
    end
    srows[#srows + 1] = "\n"
  end
  kb.write_file(dir .. "/gqa_scaling.dat", table.concat(srows, "\n") .. "\n")
  gp[#gp + 1] = ("set output %q"):format(outs.plots[6]:temp())
  gp[#gp + 1] = "set style data linespoints\nset key autotitle\nunset style\nset logscale x 2\nset xrange [0.8:10]\nset xtics (1, 2, 4, 8)"
  gp[#gp + 1] = "set title \"multi-user attention: simulated time against query heads per cube (4 cubes)\""
  gp[#gp + 1] = "set xlabel \"query heads per cube (one K/V head)\"\nset ylabel \"us\""
  gp[#gp + 1] = ("plot %q index 0 using 1:2 with linespoints title \"prefill\", '' index 1 using 1:2 with linespoints title \"decode\"")
    :format(dir .. "/gqa_scaling.dat")
  kb.write_file(dir .. "/gqa_plots.gp", table.concat(gp, "\n") .. "\n")
  if os.execute(("gnuplot %q 2>%q"):format(dir .. "/gqa_plots.gp", dir .. "/gqa_plots.log")) then
    for _, o in ipairs(outs.plots) do o:close() end
    print(("milestone-gqa-llama70b: plots in %s: %s"):format(dir, table.concat(PLOTS, ", ")))
  else
    for _, o in ipairs(outs.plots) do o:abort() end
    print(("milestone-gqa-llama70b: gnuplot failed (%s/gqa_plots.log); sweep.json and the CSV hold every figure")
      :format(dir))
  end
end

-- One line per panel: time, counts, and per rank each engine's busy time
-- and the queue waits (the engines overlap; the rest is PE_CPU dispatch
-- and waiting on results).
local function print_panel(p)
  local c, e = p.counts, p.engine_busy_ns
  local busy = e and ("gemm %s  math %s  dma %s  ipcq wait %s"):format(kb.format_ns(e.pe_gemm),
    kb.format_ns(e.pe_math), kb.format_ns(e.pe_dma), kb.format_ns(p.ipcq_wait_ns))
    or "(engine busy times: the op-log records went to --op-log)"
  print(("%-19s %d ranks %d heads %10s  gemm %3d send %3d recv %3d rd %3d wr %2d | per rank: %s"):format(
    p.name, p.n_ranks, p.q_heads_per_rank, kb.format_ns(p.sim_ns), c.gemm, c.ipcq_send, c.ipcq_recv, c.dma_read,
    c.dma_write, busy))
end

return {
  name = "milestone-gqa-llama70b",
  description = "GQA Llama-70B attention panels (single/multi user x prefill/decode) by the ring kernels, verified",
  needs_data = true,
  needs_op_log = true, -- the engine busy times come from the op-log records
  renders_only = function(o) return o.fast and ("fast=1: re-rendered %s/sweep.json"):format(o.out) or nil end,
  params = {
    skv = { default = 16, min = 1, help = "keys (K/V tokens) per rank" },
    out = { default = "out/milestone_gqa", help = "directory of sweep.json, gqa_sweep.csv and the PNG plots (created)" },
    fast = { default = false, env = "MILESTONE_FAST", help = "re-render the CSV and plots from OUT/sweep.json, no simulation" },
    seed = { default = 7, help = "seed of Q, K and V" },
  },
  run = function(torch, o)
    local doc
    if o.fast then
      doc = read_sweep(o.out .. "/sweep.json")
      print(("milestone-gqa-llama70b: re-rendering %s/sweep.json (fast=1: nothing simulated)"):format(o.out))
    else
      require("kernbench.bench_params").out_dir("out", o.out)
    end
    local outs = { csv = kb.open_output(o.out .. "/gqa_sweep.csv") }
    if not o.fast then outs.json = kb.open_output(o.out .. "/sweep.json") end
    if os.execute("command -v gnuplot >/dev/null 2>&1") then
      outs.plots = {}
      for i, name in ipairs(PLOTS) do outs.plots[i] = kb.open_output(o.out .. "/" .. name) end
    end
    if not o.fast then
      local sweep = { topology = torch.topology.name or "", panels = {}, scaling = {} }
      local n, k = #PANELS + 2 * #SCALING_HEADS, 0
      for _, panel in ipairs(PANELS) do
        k = k + 1
        kb.progress(k, n, panel.name)
        sweep.panels[#sweep.panels + 1] = run_panel(torch, panel, 8, o.skv, o.seed)
        print_panel(sweep.panels[#sweep.panels])
      end
      for _, panel in ipairs { PANELS[2], PANELS[4] } do
        for _, heads in ipairs(SCALING_HEADS) do
          k = k + 1
          kb.progress(k, n, ("%s, %d heads per cube"):format(panel.name, heads))
          local p = run_panel(torch, panel, heads, o.skv, o.seed)
          sweep.scaling[#sweep.scaling + 1] = p
          print_panel(p)
        end
      end
      local text = json.encode(sweep_json(sweep))
      outs.json:write(text .. "\n"):close()
      doc = json.decode(text)
      print(("milestone-gqa-llama70b: every panel verified against the host reference; %s/sweep.json"):format(o.out))
    end
    outs.csv:write(to_csv(doc)):close()
    plots(doc, o.out, outs)
    return doc
  end,
}
