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

-- the gnuplot scripts and the diagram
local figures = require("kernbench.ccl.milestone_figures").new {
  TOPOLOGIES = TOPOLOGIES, ALGORITHMS = ALGORITHMS, ALGO_ORDER = ALGO_ORDER, KINDS = KINDS, MARK_N = MARK_N }

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

local function buffer_csv(r)
  local find = figures.index(r)
  local lines = { "n_elem,bytes_per_pe,tcm_crit_ns,sram_crit_ns,hbm_crit_ns,tcm_predicted_ns,sram_predicted_ns,hbm_predicted_ns" }
  for _, n in ipairs(figures.sizes_of(r)) do
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

-- The profile a results document was run on (its --profile / --set
-- profile=), else its topology's name.
local function profile_of(doc)
  for _, ov in ipairs(doc.topology and doc.topology.overrides or {}) do
    local p = ov:match("^profile=(.*)$")
    if p then return p end
  end
  return "default"
end

local function render(r, o, outs, doc)
  outs.csv:write(to_csv(r)):close()
  outs.bk:write(buffer_csv(r)):close()
  local made = { "summary.csv", "buffer_kind.csv" }
  if outs.cmp then
    local other = read_results(o.compare .. "/results.json", "compare=" .. o.compare .. " draws another run")
    local script = o.out .. "/.milestone_ccl.cmp.gp"
    kb.write_file(script, figures.compare_script(r, other.result, { profile_of(doc), profile_of(other) }, outs.cmp))
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
    kb.write_file(script, figures.gnuplot_script(r, outs.plots))
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
    outs.dot:write(figures.topology_dot(r)):close()
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
    require("kernbench.bench_params").out_dir("out", o.out)
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
