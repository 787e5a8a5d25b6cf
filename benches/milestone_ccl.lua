--- CCL milestone (docs/ccl.md "The CCL milestone"): all-reduce latency
-- through the real init_process_group / spawn / all_reduce path, f16,
-- metric crit_ns (the largest pe_exec_ns over the ranks' launches), against
-- the analytic prediction (kb.ccl.predict):
--
--   * latency: n_elem in {8, 32, ..., 49152} (49152 = 96 KiB per PE) x the
--     6-SIP topologies ring_1d, torus_2d 2x3 and mesh_2d_no_wrap 2x3 (LRAB,
--     tcm rings, centre root);
--   * buffer kinds: tcm / sram / hbm rings on torus_2d 2x3, every size;
--   * root placement: the centre cube against the corner cube, every size,
--     all three SIP topologies;
--   * algorithms: LRAB, ring and tree at every size on all three.
--
--   kernbench [-j N] [--param quick=1] [--param out=DIR] [--param fast=1] run milestone-ccl
--
-- Every point is a simulation of its own, run in a worker process with up
-- to 7 others of its topology: this same kernbench executable
-- (/proc/self/exe) on this same file with `-t TOPOLOGY --param
-- point=ID,ID,... --param out=WORKDIR`, at most -j at once (default: the
-- core count; kernbench.procpool), the command line's --set, --ccl and
-- --data passed on. A worker writes WORKDIR/ID.json atomically per point;
-- the parent gathers them in the points' fixed order (the results do not
-- depend on -j) and writes, in `out` (default out/milestone_ccl):
-- results.json (the --results-json schema, docs/cli.md, with the points
-- under "result"), summary.csv, buffer_kind.csv, and with gnuplot
-- latency_ring_1d.png, latency_torus_2d.png, latency_mesh_2d_no_wrap.png,
-- buffer_kind.png, algorithms.png, with Graphviz topology.dot and
-- topology.png. Each appears only once complete (kb.open_output); WORKDIR
-- is OUT/.milestone_ccl.work.PID, removed at the end (a stopped run's is
-- removed by the next run). quick=1 runs 13 points (2 sizes); fast=1
-- re-renders the CSVs and figures from OUT/results.json without simulating;
-- compare=DIR adds profiles.png: this run's curves beside DIR's (another
-- run's out, e.g. with --profile original), each named by its profile.
local json = require "kernbench.json"
local bench_params = require "kernbench.bench_params"

local SCHEMA, VERSION = "kernbench.ccl_milestone", 1
local SELF = debug.getinfo(1, "S").source:match("^@(.*)$")
local SIZES = { 8, 32, 64, 128, 512, 1024, 2048, 4096, 8192, 16384, 32768, 49152 }
local QUICK_SIZES = { 8, 512 }
local MARK_N = 49152 -- 96 KiB per PE: the reference point
local BATCH = 8 -- points per worker process (docs/decisions.md, "Fast enough to sweep")
local TOPOLOGIES = {
  { key = "ring_1d", file = "ring_1d_6sip", label = "ring_1d, 6 SIPs" },
  { key = "torus_2d", file = "torus_2d_6sip_2x3", label = "torus_2d 2x3, 6 SIPs" },
  { key = "mesh_2d_no_wrap", file = "mesh_2d_no_wrap_6sip_2x3", label = "mesh_2d_no_wrap 2x3, 6 SIPs" },
}
local ALGORITHMS = { lrab = "lrab_hierarchical_allreduce", ring = "ring_allreduce", tree = "tree_allreduce" }
local ALGO_ORDER = { "lrab", "ring", "tree" }
local KINDS = { "tcm", "sram", "hbm" }
local ROOTS = { "center", "corner" }
local PLOTS = { "latency_ring_1d.png", "latency_torus_2d.png", "latency_mesh_2d_no_wrap.png", "buffer_kind.png",
                "algorithms.png" }

local function topo_of(key)
  for _, t in ipairs(TOPOLOGIES) do if t.key == key then return t end end
end

-- ---- the points -------------------------------------------------------

local function point_id(p)
  return ("%s-%s-%s-%s-%d"):format(p.algo, p.topology, p.buffer_kind, p.root, p.n_elem)
end

local function parse_id(id)
  local algo, topology, kind, root, n = id:match("^(%a+)%-([%w_]+)%-(%a+)%-(%a+)%-(%d+)$")
  local p = algo and { algo = algo, topology = topology, buffer_kind = kind, root = root, n_elem = math.tointeger(tonumber(n)) }
  local function one_of(v, list)
    for _, x in ipairs(list) do if x == v then return true end end
  end
  if not p or not ALGORITHMS[algo] or not topo_of(topology) or not one_of(kind, KINDS) or not one_of(root, ROOTS)
      or p.n_elem < 1 then
    bench_params.invalid("point", id, ("point '%s' is not ALGO-TOPOLOGY-BUFFER_KIND-ROOT-N_ELEM (algorithms lrab, "
      .. "ring, tree; topologies ring_1d, torus_2d, mesh_2d_no_wrap; tcm, sram, hbm; center, corner)"):format(id))
  end
  return p
end

-- Every point of the sweep, in the fixed order of the results: the
-- latency sweep (LRAB, tcm, centre) per topology, the corner roots, the
-- buffer kinds on torus_2d, then ring and tree.
local function points_of(quick)
  local sizes = quick and QUICK_SIZES or SIZES
  local pts = {}
  local function add(algo, topology, kind, root, n)
    pts[#pts + 1] = { algo = algo, topology = topology, buffer_kind = kind, root = root, n_elem = n }
  end
  for _, t in ipairs(TOPOLOGIES) do
    for _, n in ipairs(sizes) do add("lrab", t.key, "tcm", "center", n) end
  end
  for _, t in ipairs(TOPOLOGIES) do
    for _, n in ipairs(quick and { 512 } or sizes) do add("lrab", t.key, "tcm", "corner", n) end
  end
  for _, kind in ipairs { "sram", "hbm" } do
    for _, n in ipairs(quick and { 512 } or sizes) do add("lrab", "torus_2d", kind, "center", n) end
  end
  for _, algo in ipairs { "ring", "tree" } do
    for _, t in ipairs(quick and { topo_of("torus_2d") } or TOPOLOGIES) do
      for _, n in ipairs(quick and { 512 } or sizes) do add(algo, t.key, "tcm", "center", n) end
    end
  end
  for _, p in ipairs(pts) do p.id = point_id(p) end
  return pts
end

-- ---- worker: its points -----------------------------------------------

local function check_point(torch, id)
  local pt = parse_id(id)
  local P = torch.spec
  if P.sip_topology ~= pt.topology or P.sips ~= 6 then
    bench_params.invalid("point", id, ("point %s needs the 6-SIP %s topology (-t %s), not %s with %d SIPs"):format(
      id, pt.topology, topo_of(pt.topology).file, P.sip_topology, P.sips))
  end
  return pt
end

local function run_point(torch, o, id)
  local pt = check_point(torch, id)
  local P = torch.spec
  local dist = torch.distributed
  local root_cube = pt.root == "corner" and P.cube_w * P.cube_h - 1 or nil
  dist.init_process_group { backend = "kernbench", algorithm = ALGORITHMS[pt.algo], buffer_kind = pt.buffer_kind,
                            root = root_cube }
  local cfg = dist.get_config()
  local world, n = dist.get_world_size(), pt.n_elem
  local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
  local exec, elapsed, got = {}, {}, {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    local t = torch.full({ P.cubes_per_sip, n }, rank + 1, { dtype = "f16", dp = dp, name = "x" .. rank })
    torch.synchronize()
    local t0 = torch.now_ns()
    local h = dist.all_reduce(t)
    exec[rank] = h.event:value().pe_exec_ns
    elapsed[rank] = torch.now_ns() - t0
    if torch.data then got[rank] = t:cpu() end
  end, {}, world)
  local crit, el = 0, 0
  for r = 0, world - 1 do crit, el = math.max(crit, exec[r]), math.max(el, elapsed[r]) end
  if torch.data then
    local want = P.cubes_per_sip * world * (world + 1) / 2
    for r = 0, world - 1 do
      torch.verify(("%s rank %d"):format(id, r), got[r], torch.full({ P.cubes_per_sip, n }, want, { dtype = "f16" }))
    end
  end
  local est = kb.ccl.predict { algorithm = ALGORITHMS[pt.algo], topology = torch.topology, nbytes = 2 * n,
                               buffer_kind = pt.buffer_kind, slot_size = cfg.slot_size, root = root_cube }
  torch.synchronize()
  local st = torch.stats()
  local w, h = require("kernbench.ccl.sfr").sip_grid(P)
  local rec = json.obj({ "id", pt.id or id }, { "algorithm", ALGORITHMS[pt.algo] }, { "topology", pt.topology },
    { "buffer_kind", pt.buffer_kind }, { "root", pt.root },
    { "root_cube", root_cube or (P.cube_h // 2) * P.cube_w + P.cube_w // 2 }, { "n_elem", n },
    { "bytes_per_pe", 2 * n }, { "crit_ns", crit }, { "elapsed_ns", el }, { "predicted_ns", est.predicted_ns },
    { "n_slots", cfg.n_slots }, { "slot_size", cfg.slot_size }, { "verified", torch.data and true or false },
    { "sim_ns", st.sim_ns }, { "events", st.events }, { "host_requests", st.requests },
    { "topology_info", json.obj({ "name", torch.topology.name }, { "path", torch.topology:params().path },
      { "digest", require("kernbench.results").topology_digest(torch.topology) }, { "sip_topology", P.sip_topology },
      { "sips", P.sips }, { "sip_w", w }, { "sip_h", h }, { "cube_w", P.cube_w }, { "cube_h", P.cube_h }) })
  local text = json.encode(rec)
  kb.write_file(("%s/%s.json"):format(o.out, id), text .. "\n")
  print(("milestone-ccl point %s: crit_ns %.3f, predicted %.3f"):format(id, crit, est.predicted_ns))
  return json.decode(text)
end

-- A worker's points (`point=ID[,ID...]`, all on its topology), one after
-- another: each on a simulation of its own (new runtimes on the same
-- topology, closed after their point, whose routes are computed once for
-- all of them; the last point on the bench's runtime), so a point's figures
-- are those it has alone; the process's start-up and the topology's load
-- are paid once.
local function run_points(torch, o)
  local ids = {}
  for id in o.point:gmatch("[^,]+") do ids[#ids + 1] = id end
  for _, id in ipairs(ids) do check_point(torch, id) end
  local last
  for i, id in ipairs(ids) do
    local t = i == #ids and torch
      or require("kernbench.torch").new { topology = torch.topology, data_mode = torch.data and "data" or nil }
    last = run_point(t, o, id)
    if t ~= torch then
      t.close()
      collectgarbage() -- the closed simulation's tensors and tables go before the next point's
    end
  end
  return last
end

-- ---- parent: run the points in worker processes ------------------------

local function shell_ok(cmd) return os.execute(cmd) == true end

local function read_file(path)
  local f = io.open(path)
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function tail(text, n)
  local lines = {}
  for l in (text or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  return table.concat(lines, "\n    ", math.max(1, #lines - n + 1))
end

-- Work directories of earlier runs whose process is gone (a stopped run
-- cannot remove its own).
local function remove_stale_work(out)
  local p = io.popen(("ls -a %q 2>/dev/null"):format(out))
  for name in p:lines() do
    local pid = name:match("^%.milestone_ccl%.work%.(%d+)$")
    if pid and not shell_ok(("kill -0 %s 2>/dev/null"):format(pid)) then
      shell_ok(("rm -rf %q"):format(out .. "/" .. name))
    end
  end
  p:close()
end

local function run_workers(torch, o, pts)
  local pool = require "kernbench.procpool"
  local exe, why = pool.exe()
  if not exe then error("milestone-ccl: cannot find the kernbench executable for the workers: " .. why, 0) end
  if not SELF then error("milestone-ccl: cannot tell this bench's file (debug.getinfo) for the workers", 0) end
  local work = ("%s/.milestone_ccl.work.%d"):format(o.out, pool.pid())
  if not shell_ok(("mkdir -p %q"):format(work)) then error("milestone-ccl: cannot create " .. work, 0) end
  local jobs = kb.jobs or pool.cpus()
  -- the largest points first, so that the last to finish are short
  local order = {}
  for i = 1, #pts do order[i] = i end
  table.sort(order, function(a, b)
    if pts[a].n_elem ~= pts[b].n_elem then return pts[a].n_elem > pts[b].n_elem end
    return a < b
  end)
  -- a worker runs up to BATCH points of one topology, taken in that order
  -- (the grouping does not depend on -j)
  local batches, open = {}, {}
  for _, i in ipairs(order) do
    local key = pts[i].topology
    if not open[key] then
      open[key] = {}
      batches[#batches + 1] = open[key]
    end
    local b = open[key]
    b[#b + 1] = i
    if #b == BATCH then open[key] = nil end
  end
  local cmds = {}
  for k, b in ipairs(batches) do
    local p, ids = pts[b[1]], {}
    for j, i in ipairs(b) do ids[j] = pts[i].id end
    local argv = { exe, "-q", "-t", topo_of(p.topology).file }
    for _, s in ipairs(kb.topology.default_overrides or {}) do argv[#argv + 1] = "--set"; argv[#argv + 1] = s end
    if kb.ccl_path then argv[#argv + 1] = "--ccl"; argv[#argv + 1] = kb.ccl_path end
    if torch.data then argv[#argv + 1] = "--data" end
    for _, a in ipairs { "--param", "point=" .. table.concat(ids, ","), "--param", "out=" .. work, SELF } do
      argv[#argv + 1] = a
    end
    local log = ("%s/%s.log"):format(work, p.id)
    cmds[k] = { argv = argv, stdout = log, stderr = log }
  end
  print(("milestone-ccl: %d points in %d worker processes, %d at once"):format(#pts, #cmds, jobs))
  kb.progress(0, #pts)
  local done_points = 0
  local rs = pool.run(cmds, { jobs = jobs, on_done = function(k)
    done_points = done_points + #batches[k]
    kb.progress(done_points, #pts, pts[batches[k][#batches[k]]].id)
  end })
  local failed = {}
  for k, r in ipairs(rs) do
    if not r.ok then
      for _, i in ipairs(batches[k]) do -- the points of the batch that left no result
        local p = pts[i]
        if not read_file(("%s/%s.json"):format(work, p.id)) then
          failed[#failed + 1] = ("  point %s: %s\n    %s"):format(p.id, r.status and ("exit status " .. r.status)
            or ("signal " .. tostring(r.signal)), tail(read_file(cmds[k].stdout), 6))
        end
      end
    end
  end
  if #failed > 0 then
    error(("milestone-ccl: %d of %d points failed (their logs are in %s):\n%s"):format(#failed, #pts, work,
      table.concat(failed, "\n", 1, math.min(#failed, 5))), 0)
  end
  local got = {}
  for i, p in ipairs(pts) do
    local path = ("%s/%s.json"):format(work, p.id)
    local text = read_file(path)
    if not text then error(("milestone-ccl: point %s ended without writing %s"):format(p.id, path), 0) end
    got[i] = json.decode(text)
  end
  shell_ok(("rm -rf %q"):format(work))
  return got, jobs
end

-- The result (the "result" of results.json): the points in their fixed
-- order, the topologies, the totals.
local function result_of(points, o, torch)
  local topos, seen = {}, {}
  for _, p in ipairs(points) do
    if not seen[p.topology] then
      seen[p.topology] = true
      local ti = p.topology_info
      topos[#topos + 1] = json.obj({ "key", p.topology }, { "name", ti.name }, { "path", ti.path },
        { "digest", ti.digest }, { "sip_topology", ti.sip_topology }, { "sips", ti.sips }, { "sip_w", ti.sip_w },
        { "sip_h", ti.sip_h }, { "cube_w", ti.cube_w }, { "cube_h", ti.cube_h })
    end
  end
  local rows = {}
  local tot = { sim_ns = 0, events = 0, host_requests = 0 }
  for _, p in ipairs(points) do
    rows[#rows + 1] = json.obj({ "id", p.id }, { "algorithm", p.algorithm }, { "topology", p.topology },
      { "buffer_kind", p.buffer_kind }, { "root", p.root }, { "root_cube", p.root_cube }, { "n_elem", p.n_elem },
      { "bytes_per_pe", p.bytes_per_pe }, { "crit_ns", p.crit_ns }, { "elapsed_ns", p.elapsed_ns },
      { "predicted_ns", p.predicted_ns }, { "n_slots", p.n_slots }, { "slot_size", p.slot_size },
      { "verified", p.verified }, { "sim_ns", p.sim_ns }, { "events", p.events }, { "host_requests", p.host_requests })
    for k in pairs(tot) do tot[k] = tot[k] + p[k] end
  end
  return json.obj({ "schema", SCHEMA }, { "version", VERSION }, { "quick", o.quick }, { "dtype", "f16" },
    { "metric", "crit_ns: the largest pe_exec_ns over the ranks' all_reduce launches" },
    { "topologies", topos }, { "points", rows },
    { "totals", json.obj({ "points", #points }, { "simulations", #points }, { "sim_ns", tot.sim_ns },
      { "events", tot.events }, { "host_requests", tot.host_requests }) }), tot
end

-- results.json read back for fast=1: a milestone-ccl results document
-- with every figure the renderers use.
local function read_results(path, why)
  local text = read_file(path)
  if not text then
    error(("milestone-ccl: %s, but %s cannot be read; run without fast=1 first"):format(
      why or "fast=1 re-renders an existing run", path), 0)
  end
  local ok, doc = pcall(json.decode, text)
  if not ok then error(("milestone-ccl: %s: %s"):format(path, doc), 0) end
  local r = type(doc) == "table" and doc.result
  if type(doc) ~= "table" or doc.schema ~= "kernbench.results" or type(doc.bench) ~= "table"
      or doc.bench.name ~= "milestone-ccl" or type(r) ~= "table" or r.schema ~= SCHEMA or r.version ~= VERSION then
    error(("milestone-ccl: %s is not a milestone-ccl results file (%s version %d under \"result\")"):format(path,
      SCHEMA, VERSION), 0)
  end
  if type(r.points) ~= "table" or #r.points == 0 or type(r.topologies) ~= "table" then
    error(("milestone-ccl: %s: result.points or result.topologies is missing or empty"):format(path), 0)
  end
  for i, p in ipairs(r.points) do
    for _, k in ipairs { "id", "algorithm", "topology", "buffer_kind", "root", "n_elem", "bytes_per_pe", "crit_ns",
                         "predicted_ns" } do
      if p[k] == nil then error(("milestone-ccl: %s: result.points[%d] has no %s"):format(path, i, k), 0) end
    end
  end
  return doc
end

-- ---- rendering ---------------------------------------------------------

local CSV_HEAD = "id,algorithm,topology,buffer_kind,root,root_cube,n_elem,bytes_per_pe,crit_ns,elapsed_ns," ..
                 "predicted_ns,simulated_over_predicted"

local function to_csv(r)
  local lines = { CSV_HEAD }
  for _, p in ipairs(r.points) do
    lines[#lines + 1] = ("%s,%s,%s,%s,%s,%d,%d,%d,%.3f,%.3f,%.3f,%.4f"):format(p.id, p.algorithm, p.topology,
      p.buffer_kind, p.root, p.root_cube, p.n_elem, p.bytes_per_pe, p.crit_ns, p.elapsed_ns or 0, p.predicted_ns,
      p.crit_ns / p.predicted_ns)
  end
  return table.concat(lines, "\n") .. "\n"
end

-- A lookup: find(algo_module, topology, kind, root, n) -> point.
local function index(r)
  local by = {}
  for _, p in ipairs(r.points) do by[table.concat({ p.algorithm, p.topology, p.buffer_kind, p.root, p.n_elem }, "|")] = p end
  return function(algo, topo, kind, root, n)
    return by[table.concat({ ALGORITHMS[algo], topo, kind, root, n }, "|")]
  end
end

local function sizes_of(r)
  local seen, list = {}, {}
  for _, p in ipairs(r.points) do
    if not seen[p.n_elem] then seen[p.n_elem] = true; list[#list + 1] = p.n_elem end
  end
  table.sort(list)
  return list
end

local function buffer_csv(r)
  local find = index(r)
  local lines = { "n_elem,bytes_per_pe,tcm_crit_ns,sram_crit_ns,hbm_crit_ns,tcm_predicted_ns,sram_predicted_ns,hbm_predicted_ns" }
  for _, n in ipairs(sizes_of(r)) do
    local row = { n, 2 * n }
    for _, field in ipairs { "crit_ns", "predicted_ns" } do
      for _, k in ipairs(KINDS) do
        local p = find("lrab", "torus_2d", k, "center", n)
        row[#row + 1] = p and ("%.3f"):format(p[field]) or ""
      end
    end
    lines[#lines + 1] = table.concat(row, ",")
  end
  return table.concat(lines, "\n") .. "\n"
end

-- gnuplot: a data block per series (only those with points), us against
-- bytes per PE.
local function series(gp, name, pts, field)
  if #pts == 0 then return nil end
  gp[#gp + 1] = ("$%s << EOD"):format(name)
  for _, p in ipairs(pts) do gp[#gp + 1] = ("%d %.6f"):format(p.bytes_per_pe, p[field] / 1000) end
  gp[#gp + 1] = "EOD"
  return "$" .. name
end

local function collect(r, algo, topo, kind, root)
  local find, out = index(r), {}
  for _, n in ipairs(sizes_of(r)) do out[#out + 1] = find(algo, topo, kind, root, n) end
  return out
end

local AXES = {
  "set logscale xy", "set grid xtics ytics mxtics mytics", "set key top left",
  "set xlabel \"bytes per PE (f16 elements x 2)\"", "set ylabel \"crit_ns (us)\"",
  "set xtics (\"16 B\" 16, \"64 B\" 64, \"256 B\" 256, \"1 KiB\" 1024, \"4 KiB\" 4096, \"16 KiB\" 16384, " ..
  "\"96 KiB\" 98304)", "set xrange [10:160000]", "set format y \"%g\"",
}

local function marker(gp, at)
  gp[#gp + 1] = "unset label\nunset arrow"
  gp[#gp + 1] = "set arrow from 98304, graph 0 to 98304, graph 1 nohead dashtype 3 linecolor rgb \"#808080\""
  if at then gp[#gp + 1] = ("set label %q at graph 0.02, graph 0.70 left font \",9\""):format(at) end
end

local function plot_line(parts, ds, title, style)
  if ds then parts[#parts + 1] = ("%s using 1:2 %s title %q"):format(ds, style, title) end
end

local function gnuplot_script(r, outs)
  local gp = { "set terminal pngcairo noenhanced size 900,600 font \",10\"", "set termoption noenhanced" }
  for _, a in ipairs(AXES) do gp[#gp + 1] = a end
  local find = index(r)
  local k = 0
  for i, t in ipairs(TOPOLOGIES) do
    local c = collect(r, "lrab", t.key, "tcm", "center")
    local corner = collect(r, "lrab", t.key, "tcm", "corner")
    local parts = {}
    plot_line(parts, series(gp, "sim" .. i, c, "crit_ns"), "LRAB, centre root (simulated)", "with linespoints pt 7 lw 2")
    plot_line(parts, series(gp, "corner" .. i, corner, "crit_ns"), "LRAB, corner root (simulated)",
      "with linespoints pt 5 lw 1")
    plot_line(parts, series(gp, "pred" .. i, c, "predicted_ns"), "LRAB, centre root (analytic, kb.ccl.predict)",
      "with linespoints pt 6 dashtype 2 lw 1")
    local m = find("lrab", t.key, "tcm", "center", MARK_N)
    marker(gp, m and ("96 KiB per PE: %.1f us simulated, %.1f us predicted"):format(m.crit_ns / 1000,
      m.predicted_ns / 1000))
    k = k + 1
    gp[#gp + 1] = ("set output %q"):format(outs[k]:temp())
    gp[#gp + 1] = ("set title \"All-reduce latency on %s (LRAB, tcm rings, 16 cubes per SIP)\""):format(t.label)
    gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
  end
  -- buffer kinds on torus_2d: the times, and each against the tcm rings'
  gp[#gp + 1] = "set terminal pngcairo noenhanced size 1400,600 font \",10\""
  gp[#gp + 1] = ("set output %q"):format(outs[4]:temp())
  gp[#gp + 1] = "set multiplot layout 1,2 title \"All-reduce by ring buffer kind (LRAB, torus_2d 2x3, centre root)\""
  local parts, ratios = {}, {}
  local tcm = {}
  for _, p in ipairs(collect(r, "lrab", "torus_2d", "tcm", "center")) do tcm[p.n_elem] = p.crit_ns end
  for j, kind in ipairs(KINDS) do
    local c = collect(r, "lrab", "torus_2d", kind, "center")
    plot_line(parts, series(gp, "bk" .. j, c, "crit_ns"), kind .. " rings (simulated)",
      ("with linespoints pt 7 lw 2 linecolor %d"):format(j))
    plot_line(parts, series(gp, "bkp" .. j, c, "predicted_ns"), kind .. " rings (analytic)",
      ("with linespoints pt 6 ps 0.7 dashtype 2 lw 1 linecolor %d"):format(j))
    local rel = {}
    for _, p in ipairs(c) do
      if tcm[p.n_elem] then rel[#rel + 1] = { bytes_per_pe = p.bytes_per_pe, ratio = p.crit_ns / tcm[p.n_elem] * 1000 } end
    end
    plot_line(ratios, series(gp, "bkr" .. j, rel, "ratio"), kind .. " / tcm",
      ("with linespoints pt 7 lw 2 linecolor %d"):format(j))
  end
  marker(gp, nil)
  gp[#gp + 1] = "set title \"crit_ns\""
  gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
  gp[#gp + 1] = "unset logscale y\nset ylabel \"crit_ns / crit_ns with tcm rings\"\nset title \"against tcm rings\""
  gp[#gp + 1] = "set format y \"%.2f\""
  gp[#gp + 1] = #ratios > 0 and ("plot " .. table.concat(ratios, ", ")) or "plot 1/0 notitle"
  gp[#gp + 1] = "unset multiplot"
  gp[#gp + 1] = "set logscale y\nset ylabel \"crit_ns (us)\"\nset format y \"%g\""
  -- algorithms: a panel per topology
  gp[#gp + 1] = "set terminal pngcairo noenhanced size 1500,550 font \",10\""
  parts = {}
  gp[#gp + 1] = ("set output %q"):format(outs[5]:temp())
  gp[#gp + 1] = "set multiplot layout 1,3 title \"All-reduce: LRAB vs ring vs tree (tcm rings; solid simulated, " ..
                "dashed analytic)\""
  for i, t in ipairs(TOPOLOGIES) do
    parts = {}
    for j, a in ipairs(ALGO_ORDER) do
      local c = collect(r, a, t.key, "tcm", "center")
      plot_line(parts, series(gp, ("al%d%d"):format(i, j), c, "crit_ns"), a, ("with linespoints pt 7 lw 2 linecolor %d"):format(j))
      plot_line(parts, series(gp, ("alp%d%d"):format(i, j), c, "predicted_ns"), a .. " (analytic)",
        ("with linespoints pt 6 ps 0.7 dashtype 2 lw 1 linecolor %d"):format(j))
    end
    marker(gp, nil)
    gp[#gp + 1] = ("set title %q"):format(t.label)
    gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
  end
  gp[#gp + 1] = "unset multiplot"
  return table.concat(gp, "\n") .. "\n"
end

-- The profile a results document was run on (its --profile / --set
-- profile=), else its topology's name.
local function profile_of(doc)
  for _, ov in ipairs(doc.topology and doc.topology.overrides or {}) do
    local p = ov:match("^profile=(.*)$")
    if p then return p end
  end
  return "default"
end

-- profiles.png: LRAB (centre root, tcm rings) on each SIP topology and the
-- buffer kinds on torus_2d, this run's and another's side by side.
local function compare_script(r, other, labels, out)
  local gp = { "set terminal pngcairo noenhanced size 1500,1000 font \",10\"", "set termoption noenhanced" }
  for _, a in ipairs(AXES) do gp[#gp + 1] = a end
  gp[#gp + 1] = ("set output %q"):format(out:temp())
  gp[#gp + 1] = ("set multiplot layout 2,2 title \"All-reduce, profile %s (solid) against profile %s (dashed)\""):format(
    labels[1], labels[2])
  marker(gp, nil)
  local panels = {}
  for _, t in ipairs(TOPOLOGIES) do panels[#panels + 1] = { t.label .. " (LRAB, tcm rings, centre root)", t.key, { "tcm" } } end
  panels[#panels + 1] = { "buffer kinds, torus_2d 2x3 (LRAB, centre root)", "torus_2d", KINDS }
  for i, pn in ipairs(panels) do
    local parts = {}
    for j, kind in ipairs(pn[3]) do
      for k, run in ipairs { r, other } do
        plot_line(parts, series(gp, ("cmp%d%d%d"):format(i, j, k), collect(run, "lrab", pn[2], kind, "center"), "crit_ns"),
          ("%s, %s"):format(kind, labels[k]),
          ("with linespoints pt 7 lw 2 linecolor %d%s"):format(j, k == 2 and " dashtype 2" or ""))
      end
    end
    gp[#gp + 1] = ("set title %q"):format(pn[1])
    gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
  end
  gp[#gp + 1] = "unset multiplot"
  return table.concat(gp, "\n") .. "\n"
end

-- The topology diagram as DOT (neato, pinned positions), four panels: the
-- SIP topologies as LRAB's phase 3 uses them (ring_1d, torus_2d 2x3 with
-- its wrap-around links, mesh_2d_no_wrap 2x3), and the cube-level
-- reduction (phases 1 and 2) inside SIP 0 towards the centre root cube.
local function q(s) return '"' .. s:gsub('"', '\\"') .. '"' end

local function topology_dot(r)
  local info = {}
  for _, t in ipairs(r.topologies) do info[t.key] = t end
  local any = r.topologies[1]
  local cw, ch = any.cube_w, any.cube_h
  local d = { "graph milestone_ccl_topology {",
    "  graph [splines=false, outputorder=edgesfirst, bgcolor=white, pad=0.3];",
    "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e8f0fe\", fontname=\"Helvetica\", fontsize=11, " ..
    "width=1.1, height=0.45, fixedsize=true];",
    "  edge [fontname=\"Helvetica\", fontsize=9];" }
  local function text(id, x, y, label, size)
    d[#d + 1] = ("  %s [shape=plaintext, style=\"\", fixedsize=false, fontsize=%d, label=%s, pos=\"%.2f,%.2f!\"];")
      :format(id, size or 13, q(label), x, y)
  end
  local function node(id, x, y, label, extra)
    d[#d + 1] = ("  %s [label=%s, pos=\"%.2f,%.2f!\"%s];"):format(id, q(label), x, y, extra or "")
  end
  local function edge(a, b, attrs) d[#d + 1] = ("  %s -- %s [%s];"):format(a, b, attrs) end
  local bends = 0
  -- a wrap-around link drawn as a bracket beside the grid, through two bend points
  local function bracket(a, b, ax, ay, bx, by, off_x, off_y, attrs)
    bends = bends + 1
    local p1, p2 = "bend" .. bends .. "a", "bend" .. bends .. "b"
    for _, pt in ipairs { { p1, ax + off_x, ay + off_y }, { p2, bx + off_x, by + off_y } } do
      d[#d + 1] = ("  %s [shape=point, width=0.01, label=\"\", pos=\"%.2f,%.2f!\"];"):format(pt[1], pt[2], pt[3])
    end
    edge(a, p1, attrs)
    edge(p1, p2, attrs)
    edge(p2, b, attrs)
  end
  local blue, red = "color=\"#1a73e8\", penwidth=2", "color=\"#d93025\", penwidth=2"
  -- (a) ring_1d
  local n = (info.ring_1d or any).sips
  text("t_a", 3.0, 11.0, ("(a) ring_1d, %d SIPs: global_E / global_W"):format(n))
  for s = 0, n - 1 do
    local a = math.pi / 2 - 2 * math.pi * s / n
    node("a" .. s, 3.0 + 1.5 * math.cos(a), 8.7 + 1.5 * math.sin(a), "SIP " .. s)
  end
  for s = 0, n - 1 do edge("a" .. s, "a" .. (s + 1) % n, blue) end
  -- (b), (c): the 2-D SIP grids (rank r at (r % w, r // w))
  local function grid(key, tag, x0, ytop, wrap)
    local t = info[key]
    local w, h = t and t.sip_w or 2, t and t.sip_h or 3
    local dx, dy = 1.8, 1.3
    text("t_" .. tag, x0 + dx * (w - 1) / 2, ytop + 0.8, ("(%s) %s %dx%d (w %d, h %d)%s"):format(tag, key, w, h, w, h,
      wrap and ": wrap-around" or ": no wrap"))
    local function id(x, y) return ("%s%d_%d"):format(tag, x, y) end
    local function X(x) return x0 + dx * x end
    local function Y(y) return ytop - dy * y end
    for y = 0, h - 1 do
      for x = 0, w - 1 do node(id(x, y), X(x), Y(y), ("SIP %d (%d,%d)"):format(y * w + x, x, y)) end
    end
    for y = 0, h - 1 do
      for x = 0, w - 2 do edge(id(x, y), id(x + 1, y), blue .. ", label=\"E/W\"") end
    end
    for x = 0, w - 1 do
      for y = 0, h - 2 do edge(id(x, y), id(x, y + 1), red .. ", label=\"N/S\"") end
    end
    if wrap then
      if w > 2 then
        for y = 0, h - 1 do
          bracket(id(w - 1, y), id(0, y), X(w - 1), Y(y), X(0), Y(y), 0, 0.35, blue .. ", style=dashed")
        end
      end
      if h > 2 then
        for x = 0, w - 1 do
          local side = x < w / 2 and -0.85 or 0.85
          bracket(id(x, h - 1), id(x, 0), X(x), Y(h - 1), X(x), Y(0), side, 0, red .. ", style=dashed")
        end
      end
      text("n_" .. tag, x0 + dx * (w - 1) / 2, Y(h - 1) - 0.75, "dashed: the wrap-around links" ..
        (w == 2 and " (with w = 2 the E/W wrap joins the same pair)" or ""), 10)
    end
  end
  grid("torus_2d", "b", 8.6, 10.2, true)
  grid("mesh_2d_no_wrap", "c", 2.1, 5.0, false)
  -- (d) cube-level reduction inside SIP 0
  local rx, ry = cw // 2, ch // 2
  local x0, ytop, dx, dy = 7.4, 5.0, 1.25, 0.95
  text("t_d", x0 + dx * (cw - 1) / 2, ytop + 0.8, ("(d) SIP 0, %dx%d cubes (PE 0 each): LRAB's reduce to the centre "
    .. "root, cube %d"):format(cw, ch, ry * cw + rx))
  for y = 0, ch - 1 do
    for x = 0, cw - 1 do
      local c = y * cw + x
      node("c" .. c, x0 + dx * x, ytop - dy * y, "cube " .. c,
        ", width=0.8" .. ((x == rx and y == ry) and ", fillcolor=\"#fce8b2\", penwidth=2" or ""))
    end
  end
  for y = 0, ch - 1 do
    for x = 0, cw - 1 do
      local c = y * cw + x
      if x < rx then edge("c" .. c, "c" .. (c + 1), "dir=forward, " .. blue) end
      if x > rx then edge("c" .. c, "c" .. (c - 1), "dir=forward, " .. blue) end
    end
  end
  for y = 0, ch - 1 do
    local c = y * cw + rx
    if y < ry then edge("c" .. c, "c" .. (c + cw), "dir=forward, " .. red) end
    if y > ry then edge("c" .. c, "c" .. (c - cw), "dir=forward, " .. red) end
  end
  text("legend", x0 + dx * (cw - 1) / 2, ytop - dy * (ch - 1) - 0.9, "blue: phase 1, each row reduces towards the " ..
    "root column; red: phase 2, that column reduces to the root.\\nPhase 3: the SIPs' root cubes combine over (a), "
    .. "(b) or (c); phases 4 and 5 broadcast the sum back the same way.", 10)
  d[#d + 1] = "}"
  return table.concat(d, "\n") .. "\n"
end

local function render(r, o, outs, doc)
  outs.csv:write(to_csv(r)):close()
  outs.bk:write(buffer_csv(r)):close()
  local made = { "summary.csv", "buffer_kind.csv" }
  if outs.cmp then
    local other = read_results(o.compare .. "/results.json", "compare=" .. o.compare .. " draws another run")
    local script = o.out .. "/.milestone_ccl.cmp.gp"
    kb.write_file(script, compare_script(r, other.result, { profile_of(doc), profile_of(other) }, outs.cmp))
    local log = o.out .. "/.milestone_ccl.cmp.log"
    if shell_ok(("gnuplot %q 2>%q"):format(script, log)) then
      outs.cmp:close()
      made[#made + 1] = "profiles.png"
      os.remove(script)
      os.remove(log)
    else
      outs.cmp:abort()
      print(("milestone-ccl: gnuplot failed (%s, script %s): no profiles.png"):format(log, script))
    end
  end
  if outs.plots then
    local script = o.out .. "/.milestone_ccl.gp"
    kb.write_file(script, gnuplot_script(r, outs.plots))
    local log = o.out .. "/.milestone_ccl.gnuplot.log"
    if shell_ok(("gnuplot %q 2>%q"):format(script, log)) then
      for _, x in ipairs(outs.plots) do x:close() end
      for _, name in ipairs(PLOTS) do made[#made + 1] = name end
      os.remove(script)
      os.remove(log)
    else
      for _, x in ipairs(outs.plots) do x:abort() end
      print(("milestone-ccl: gnuplot failed (%s, script %s); the CSVs and results.json hold every figure"):format(log,
        script))
    end
  else
    print("milestone-ccl: gnuplot is not installed: no PNG plots (apt-get install gnuplot-nox)")
  end
  if outs.dot then
    outs.dot:write(topology_dot(r)):close()
    made[#made + 1] = "topology.dot"
    local log = o.out .. "/.milestone_ccl.neato.log"
    if shell_ok(("neato -Tpng -o %q %q 2>%q"):format(outs.topo:temp(), o.out .. "/topology.dot", log)) then
      outs.topo:close()
      made[#made + 1] = "topology.png"
      os.remove(log)
    else
      outs.topo:abort()
      print(("milestone-ccl: neato failed (%s): no topology.png"):format(log))
    end
  else
    print("milestone-ccl: Graphviz is not installed: no topology.dot / topology.png (apt-get install graphviz)")
  end
  return made
end

-- The outputs, opened (their temporary files created) before anything
-- runs, so that a bad `out` fails at once.
local function open_outputs(o)
  local outs = { csv = kb.open_output(o.out .. "/summary.csv"), bk = kb.open_output(o.out .. "/buffer_kind.csv") }
  if not o.fast then outs.json = kb.open_output(o.out .. "/results.json") end
  if shell_ok("command -v gnuplot >/dev/null 2>&1") then
    outs.plots = {}
    for i, name in ipairs(PLOTS) do outs.plots[i] = kb.open_output(o.out .. "/" .. name) end
    if o.compare ~= "" then outs.cmp = kb.open_output(o.out .. "/profiles.png") end
  elseif o.compare ~= "" then
    print("milestone-ccl: gnuplot is not installed: no profiles.png for compare= (apt-get install gnuplot-nox)")
  end
  if shell_ok("command -v neato >/dev/null 2>&1") then
    outs.dot = kb.open_output(o.out .. "/topology.dot")
    outs.topo = kb.open_output(o.out .. "/topology.png")
  end
  return outs
end

-- A table of every point, in the fixed order.
local function print_table(r)
  print(("%-38s %12s %12s %8s"):format("point", "crit_ns", "predicted", "sim/pred"))
  for _, p in ipairs(r.points) do
    print(("%-38s %12.1f %12.1f %8.3f"):format(p.id, p.crit_ns, p.predicted_ns, p.crit_ns / p.predicted_ns))
  end
end

local bench
local parent_note -- what the parent's summary line says instead of "nothing simulated here"

bench = {
  name = "milestone-ccl",
  description = "all-reduce latency sweep (sizes x SIP topologies x buffer kinds x roots x algorithms) vs prediction",
  renders_only = function(o)
    if o.fast then return ("fast=1: re-rendered %s/results.json"):format(o.out) end
    return parent_note
  end,
  params = {
    quick = { default = false, env = "MILESTONE_QUICK", help = "13 points (n_elem 8 and 512) instead of 168, for tests" },
    fast = { default = false, env = "MILESTONE_FAST",
             help = "re-render the CSVs and figures from OUT/results.json, no simulation" },
    out = { default = "out/milestone_ccl", help = "directory of results.json, the CSVs and the figures (created)" },
    point = { default = "", help = "(internal) run these points (ID[,ID...], one topology) as a worker process, "
              .. "writing OUT/ID.json for each" },
    compare = { default = "", help = "another run's out directory (e.g. with --profile original): profiles.png "
                .. "draws both runs' curves side by side, each named by its profile" },
  },
  run = function(torch, o)
    parent_note = nil
    if o.point ~= "" then return run_points(torch, o) end
    remove_stale_work(o.out)
    if o.fast then
      local doc = read_results(o.out .. "/results.json")
      print(("milestone-ccl: re-rendering %s/results.json (fast=1: nothing simulated)"):format(o.out))
      local made = render(doc.result, o, open_outputs(o), doc)
      print(("milestone-ccl: wrote %s in %s"):format(table.concat(made, ", "), o.out))
      return doc.result
    end
    if not shell_ok(("mkdir -p %q"):format(o.out)) then error("milestone-ccl: cannot create " .. o.out, 0) end
    local outs = open_outputs(o)
    local pts = points_of(o.quick)
    local points, jobs = run_workers(torch, o, pts)
    local result, tot = result_of(points, o, torch)
    local values, sources = require("kernbench.bench_params").resolve(bench, kb.params)
    local text = require("kernbench.results").document {
      bench = bench, path = SELF, topology = torch.topology, overrides = kb.topology.default_overrides or {},
      device = kb.device or "all", params = values, sources = sources, mode = torch.data and "data" or "timing",
      stats = { sim_ns = tot.sim_ns, events = tot.events, requests = tot.host_requests }, verified = {},
      status = "ok", result = result }
    outs.json:write(text):close()
    if kb.results_requested then kb.results_document = text end -- --results-json: the same document
    local doc = json.decode(text)
    local r = doc.result
    print_table(r)
    local made = render(r, o, outs, doc)
    print(("milestone-ccl: wrote results.json, %s in %s"):format(table.concat(made, ", "), o.out))
    parent_note = ("the %d points were simulated by worker processes (-j %d): %d simulations, %d host requests, "
      .. "%d events"):format(#pts, jobs, #pts, tot.host_requests, tot.events)
    return r
  end,
}
return bench
