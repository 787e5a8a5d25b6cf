--- GEMM milestone: a sweep of f16 composite GEMMs (tl.composite) over
-- shapes, operand staging and placement, against the roofline of the
-- modelled PEs (docs/benches.md).
--
--   kernbench [--param quick=true] [--param out=DIR] [--results-json FILE] run milestone-gemm
--
-- Shapes: 16^3 .. 512^3, 32x3072x32 and 256x64x1024. Staging: load_ref (A
-- loaded into TCM and pinned, B streamed tile by tile), ref_ref (both
-- streamed), load_load (both pinned). Placement: one PE, the 8 PEs of a cube,
-- the 128 PEs of a SIP (B and C split by columns, A replicated; a point whose
-- N does not split evenly is listed as skipped, with the reason).
-- quick=true (or MILESTONE_QUICK=1) runs 3 shapes x load_ref x {pe, cube}.
--
-- For each point: simulated time of the kernel (PE window) and of the
-- composite pipeline alone, achieved TFLOP/s, the roofline (compute bound or
-- HBM bound) and the efficiency against it, pipeline efficiency per engine
-- (its busy time / the composite's makespan), and stage-record counts.
-- Returns every point (--results-json FILE writes them with the run's
-- topology, parameters and totals); writes gemm_sweep.csv to the `out`
-- directory (default out/milestone_gemm/), and with gnuplot installed,
-- efficiency.png and stage_breakdown.png; each file appears only once
-- complete (kb.open_output: an interrupted run or a full disk leaves none,
-- and a write error fails the bench). With --verify-data, every point's C
-- is checked against the CPU reference.
local json = require "kernbench.json"

local SHAPES = { { 16, 16, 16 }, { 32, 32, 32 }, { 64, 64, 64 }, { 128, 128, 128 }, { 256, 256, 256 },
                 { 512, 512, 512 }, { 32, 3072, 32 }, { 256, 64, 1024 } }
local QUICK_SHAPES = { { 32, 32, 32 }, { 128, 128, 128 }, { 32, 3072, 32 } }
local VARIANTS = { load_ref = { true, false }, ref_ref = { false, false }, load_load = { true, true } }
local VARIANT_ORDER = { "load_ref", "ref_ref", "load_load" }
local STAGES = { "DMA_READ", "FETCH", "GEMM", "MATH", "STORE", "DMA_WRITE" }

-- The roofline of `npes` PEs for C[M, N] = A[M, K] x B[K, N] in f16: each
-- PE reads all of A and its share of B and writes its share of C, once.
local function roofline(torch, M, K, N, npes)
  local node = torch.topology:node(torch.topology:node_at { kind = "pe_gemm", sip = 0, cube = 0, pe = 0 }).attrs
  local P = torch.spec
  local flops_per_ns = 2 * node.mac_rows * node.mac_cols * node.mac_depth * node.clock_ghz -- per PE
  local hbm_gbs = P.hbm_channels_per_pe * P.hbm_channel_bw_gbs                           -- per PE
  local compute_ns = 2 * M * K * N / (npes * flops_per_ns)
  local bytes_per_pe = 2 * (M * K + (K * N + M * N) / npes)
  local hbm_ns = bytes_per_pe / hbm_gbs
  return math.max(compute_ns, hbm_ns), compute_ns >= hbm_ns and "compute" or "hbm", compute_ns, hbm_ns
end

local function run_point(torch, shape, variant, placement)
  local M, K, N = shape[1], shape[2], shape[3]
  local P = torch.spec
  local pes, cubes = 1, 1
  if placement == "cube" then pes = P.pes_per_cube end
  if placement == "sip" then pes, cubes = P.pes_per_cube, P.cubes_per_sip end
  local npes = pes * cubes
  local point = { shape = shape, variant = variant, placement = placement, pes = npes }
  if N % npes ~= 0 then
    point.skipped = ("N = %d does not split over %d PEs"):format(N, npes)
    return point
  end
  local n = N // npes
  local pin = VARIANTS[variant]
  local rep = torch.DPPolicy { num_cubes = cubes, num_pes = pes }
  local cols = torch.DPPolicy { cube = "column_wise", pe = "column_wise", num_cubes = cubes, num_pes = pes }
  local a, b
  local da, db
  if torch.data then
    a, b = torch.randn({ M, K }, { dtype = "f16" }), torch.randn({ K, N }, { dtype = "f16" })
    da, db = torch.to_device(a, rep), torch.to_device(b, cols)
  else
    da = torch.empty({ M, K }, { dtype = "f16", dp = rep })
    db = torch.empty({ K, N }, { dtype = "f16", dp = cols })
  end
  local dc = torch.empty({ M, N }, { dtype = "f16", dp = cols })
  local per_pe = {}
  local h = torch.launch({ name = "milestone_gemm", fn = function(tl, pa, pb, pc)
    local g = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
    local A = pin[1] and tl.load(pa, { M, K }) or tl.ref(pa, { M, K })
    local B = pin[2] and tl.load(pb + g * K * n * 2, { K, n }) or tl.ref(pb + g * K * n * 2, { K, n })
    local c = tl.composite { op = "gemm", a = A, b = B, out_ptr = pc + g * M * n * 2 }
    tl.wait(c)
    per_pe[#per_pe + 1] = c:stats()
  end }, { pes, cubes }, da, db, dc)
  if torch.data then
    point.worst_error = torch.verify(("C %dx%dx%d %s %s"):format(M, K, N, variant, placement), dc:cpu(),
                                     torch.matmul(a:float(), b:float()):half())
  end
  for _, d in ipairs { da, db, dc } do d:free() end
  -- the slowest PE's composite sets the makespan; counts add up over PEs
  local slow = per_pe[1]
  for _, st in ipairs(per_pe) do
    if st.window_ns > slow.window_ns then slow = st end
  end
  point.tiles = 0
  point.stage_counts = {}
  for _, st in ipairs(per_pe) do
    point.tiles = point.tiles + st.tiles
    for _, s in ipairs(STAGES) do point.stage_counts[s] = (point.stage_counts[s] or 0) + st.stage_counts[s] end
  end
  point.pe_window_ns = h.result.pe_exec_ns
  point.composite_window_ns = slow.window_ns
  point.stage_ns = slow.stage_ns
  -- each stage lane is one serial worker: its busy time over the makespan
  point.pipeline_eff = {}
  for _, s in ipairs(STAGES) do point.pipeline_eff[s] = slow.stage_ns[s] / point.composite_window_ns end
  point.tflops = 2 * M * K * N / point.pe_window_ns / 1000
  local ideal, bound, cns, hns = roofline(torch, M, K, N, npes)
  point.roofline_ns, point.bound, point.roofline_compute_ns, point.roofline_hbm_ns = ideal, bound, cns, hns
  point.efficiency = ideal / point.pe_window_ns
  point.under_tile = M < 32 or K < 64 or n < 32
  return point
end

local function label(p)
  return ("%dx%dx%d/%s/%s"):format(p.shape[1], p.shape[2], p.shape[3], p.variant, p.placement)
end

-- Result files, opened before the sweep so that a bad --out fails at once;
-- each is written beside its target and renamed when complete
-- (kb.open_output), so an interrupted or failed run leaves none.
local function open_outputs(dir)
  require("kernbench.bench_params").out_dir("out", dir)
  local outs = { csv = kb.open_output(dir .. "/gemm_sweep.csv") }
  if os.execute("command -v gnuplot >/dev/null 2>&1") then
    outs.efficiency = kb.open_output(dir .. "/efficiency.png")
    outs.stages = kb.open_output(dir .. "/stage_breakdown.png")
  end
  return outs
end

-- What the bench returns (written by --results-json): the tile sizes and
-- every point.
local function result_of(points, o, torch)
  local rows = {}
  for _, p in ipairs(points) do
    local fields = { { "label", label(p) }, { "m", p.shape[1] }, { "k", p.shape[2] }, { "n", p.shape[3] },
                     { "variant", p.variant }, { "placement", p.placement }, { "pes", p.pes } }
    if p.skipped then
      fields[#fields + 1] = { "skipped", p.skipped }
    else
      local counts, times, effs = {}, {}, {}
      for _, s in ipairs(STAGES) do
        counts[#counts + 1] = { s, p.stage_counts[s] }
        times[#times + 1] = { s, p.stage_ns[s] }
        effs[#effs + 1] = { s, p.pipeline_eff[s] }
      end
      for _, kv in ipairs {
        { "tiles", p.tiles }, { "under_tile", p.under_tile }, { "pe_window_ns", p.pe_window_ns },
        { "composite_window_ns", p.composite_window_ns }, { "tflops", p.tflops }, { "bound", p.bound },
        { "roofline_ns", p.roofline_ns }, { "roofline_compute_ns", p.roofline_compute_ns },
        { "roofline_hbm_ns", p.roofline_hbm_ns }, { "efficiency", p.efficiency },
        { "pipeline_efficiency", json.obj(table.unpack(effs)) },
        { "stage_ns", json.obj(table.unpack(times)) }, { "stage_counts", json.obj(table.unpack(counts)) },
        { "worst_error", p.worst_error } } do
        fields[#fields + 1] = kv
      end
    end
    rows[#rows + 1] = json.obj(table.unpack(fields))
  end
  local sched = torch.topology:node(torch.topology:node_at { kind = "pe_scheduler", sip = 0, cube = 0, pe = 0 }).attrs
  return json.obj({ "quick", o.quick }, { "dtype", "f16" },
    { "tile_sizes", json.obj({ "m", sched.tile_m }, { "k", sched.tile_k }, { "n", sched.tile_n }) },
    { "points", rows })
end

local CSV_HEAD = "label,m,k,n,variant,placement,pes,tiles,pe_window_ns,composite_window_ns,tflops,bound," ..
                 "roofline_ns,efficiency,eff_dma_read,eff_fetch,eff_gemm,eff_store,eff_dma_write," ..
                 "n_dma_read,n_fetch,n_gemm,n_store,n_dma_write,skipped"

local function to_csv(points)
  local lines = { CSV_HEAD }
  for _, p in ipairs(points) do
    if p.skipped then
      lines[#lines + 1] = ("%s,%d,%d,%d,%s,%s,%d,,,,,,,,,,,,,,,,,,%s"):format(label(p), p.shape[1], p.shape[2], p.shape[3],
        p.variant, p.placement, p.pes, p.skipped)
    else
      local e = p.pipeline_eff
      lines[#lines + 1] = ("%s,%d,%d,%d,%s,%s,%d,%d,%.3f,%.3f,%.4f,%s,%.3f,%.4f,%.4f,%.4f,%.4f,%.4f,%.4f,%d,%d,%d,%d,%d,")
        :format(label(p), p.shape[1], p.shape[2], p.shape[3], p.variant, p.placement, p.pes, p.tiles, p.pe_window_ns,
          p.composite_window_ns, p.tflops, p.bound, p.roofline_ns, p.efficiency, e.DMA_READ, e.FETCH, e.GEMM, e.STORE,
          e.DMA_WRITE, p.stage_counts.DMA_READ, p.stage_counts.FETCH, p.stage_counts.GEMM, p.stage_counts.STORE,
          p.stage_counts.DMA_WRITE)
    end
  end
  return table.concat(lines, "\n") .. "\n"
end

-- PNG plots through gnuplot, when it is installed: it writes the
-- temporary files of outs.efficiency and outs.stages, renamed on success.
local function plots(points, dir, outs)
  if not outs.efficiency then
    print("milestone-gemm: gnuplot is not installed: no PNG plots (apt-get install gnuplot-nox); " ..
          "the CSV holds every figure")
    return
  end
  local dat = {}
  for i, p in ipairs(points) do
    if not p.skipped then
      dat[#dat + 1] = ("%d \"%s\" %.4f %.3f %.3f %.3f %.3f"):format(i, label(p), p.efficiency,
        (p.stage_ns.DMA_READ + p.stage_ns.DMA_WRITE) / 1000, p.stage_ns.FETCH / 1000, p.stage_ns.GEMM / 1000,
        p.stage_ns.STORE / 1000)
    end
  end
  kb.write_file(dir .. "/plot.dat", table.concat(dat, "\n") .. "\n")
  kb.write_file(dir .. "/plot.gp", ([[
set terminal pngcairo size 1400,700
set termoption noenhanced
set datafile separator " "
set style fill solid 0.8
set boxwidth 0.7
set xtics rotate by -60 font ",8"
set grid ytics
set output "%s"
set title "GEMM efficiency against the roofline of the modelled PEs (f16)"
set ylabel "roofline time / simulated time"
set yrange [0:*]
plot "%s/plot.dat" using 1:3:xtic(2) with boxes title "efficiency"
set output "%s"
set title "Stage busy time of the slowest PE's pipeline (us)"
set ylabel "us"
set style data histograms
set style histogram rowstacked
set boxwidth 0.8
plot "%s/plot.dat" using 4:xtic(2) title "DMA in+out", "" using 5 title "fetch", "" using 6 title "GEMM", "" using 7 title "store"
]]):format(outs.efficiency:temp(), dir, outs.stages:temp(), dir))
  if os.execute(("gnuplot %q/plot.gp"):format(dir)) then
    outs.efficiency:close()
    outs.stages:close()
    print(("milestone-gemm: plots %s/efficiency.png, %s/stage_breakdown.png"):format(dir, dir))
  else
    outs.efficiency:abort()
    outs.stages:abort()
    print("milestone-gemm: gnuplot failed; the CSV holds every figure")
  end
end

return {
  name = "milestone-gemm",
  description = "f16 composite GEMM sweep (shapes x operand staging x PE/cube/SIP) against the roofline",
  params = {
    quick = { default = false, env = "MILESTONE_QUICK",
              help = "3 shapes x load_ref x {pe, cube} instead of the full sweep" },
    out = { default = "out/milestone_gemm",
            help = "directory of gemm_sweep.csv and the PNG plots (created); empty: no files" },
    m = { default = 0, min = 0, help = "with k and n: this one shape instead of the milestone's (0: its shapes)" },
    k = { default = 0, min = 0, help = "with m and n: columns of A, rows of B (0: the milestone's shapes)" },
    n = { default = 0, min = 0, help = "with m and k: columns of B and C (0: the milestone's shapes)" },
    variant = { default = "all", choices = { "all", "load_ref", "ref_ref", "load_load" },
                help = "only this operand staging (all: as quick says)" },
    placement = { default = "all", choices = { "all", "pe", "cube", "sip" },
                  help = "only this placement (all: as quick says)" },
  },
  run = function(torch, o)
    local given = (o.m > 0 and 1 or 0) + (o.k > 0 and 1 or 0) + (o.n > 0 and 1 or 0)
    if given ~= 0 and given ~= 3 then
      error(("milestone-gemm: give m, k and n together (got m=%d, k=%d, n=%d)"):format(o.m, o.k, o.n), 0)
    end
    local outs = o.out ~= "" and open_outputs(o.out) or nil
    torch.manual_seed(5)
    local shapes = given == 3 and { { o.m, o.k, o.n } } or o.quick and QUICK_SHAPES or SHAPES
    local variants = o.variant ~= "all" and { o.variant } or o.quick and { "load_ref" } or VARIANT_ORDER
    local placements = o.placement ~= "all" and { o.placement } or o.quick and { "pe", "cube" } or { "pe", "cube", "sip" }
    local points = {}
    print(("%-32s %6s %12s %9s %8s %6s  %s"):format("point", "tiles", "time", "TFLOP/s", "bound", "eff",
      "busy/makespan: dma_rd fetch gemm store dma_wr"))
    local k, n = 0, #shapes * #variants * #placements
    for _, shape in ipairs(shapes) do
      for _, v in ipairs(variants) do
        for _, pl in ipairs(placements) do
          k = k + 1
          kb.progress(k, n, ("%dx%dx%d/%s/%s"):format(shape[1], shape[2], shape[3], v, pl))
          local p = run_point(torch, shape, v, pl)
          points[#points + 1] = p
          if p.skipped then
            print(("%-32s skipped: %s"):format(label(p), p.skipped))
          else
            local e = p.pipeline_eff
            print(("%-32s %6d %12s %9.3f %8s %6.3f  %6.3f %5.3f %4.3f %5.3f %6.3f"):format(label(p), p.tiles,
              kb.format_ns(p.pe_window_ns), p.tflops, p.bound, p.efficiency, e.DMA_READ, e.FETCH, e.GEMM,
              e.STORE, e.DMA_WRITE))
          end
        end
      end
    end
    if outs then
      outs.csv:write(to_csv(points)):close()
      print(("milestone-gemm: %d points, written to %s/gemm_sweep.csv (every figure: --results-json FILE)"):format(
        #points, o.out))
      plots(points, o.out, outs)
    else
      print(("milestone-gemm: %d point(s); out is empty: no files (every figure: --results-json FILE)"):format(#points))
    end
    return result_of(points, o, torch)
  end,
}
