--- PE DMA performance harness (spec topology-fabric-latency.md §5.1).
-- Over ~500 lines as one script: its scenarios, breakdown, report and
-- invariant checks share one loaded topology and the runs' results.
--
--   kernbench [-t T] [--set K=V] benches/perf/pe_dma.lua [nbytes]
--
-- Every scenario runs on a fresh simulation of kb.topology.load() (so the
-- command line's --topology / --set apply); every transfer is a PE DMA write
-- of nbytes (default 16 KiB) issued at t = 0.
--
-- No congestion (one issuer, sip0.cube0.pe0):
--   same_cube_local        -> its own HBM slice
--   same_cube_remote_best  -> pe1's slice
--   same_cube_remote_worst -> the slice of the cube-0 PE whose controller is
--                             farthest in path mm (ties: more hops, lower index)
--   remote_cube_best       -> cube1.pe0's slice
--   remote_cube_worst      -> the last cube's farthest PE (path mm, same ties)
--   remote_sip             -> sip1.cube0.pe0's slice (needs 2 SIPs)
-- Congestion (all issued together):
--   ctrl_hot_1/2/3         pe1..pe{k} of cube 0 -> pe0's slice (offsets i*nbytes)
--   ucie_eastbound         every PE of cube 0 -> the same PE index of cube 1
--   all_pe_cube0_to_pe0    every PE of cube 0 -> pe0's slice (offsets i*nbytes)
--   sip_local_all          every PE of sip0 -> its own slice (disjoint paths)
--   sip_hotspot_pe0        every PE of sip0 -> sip0.cube0.pe0's slice (offsets i*nbytes)
--
-- Metrics (spec §5.1):
--   latency_ns        single issuer: the transfer's latency (issue to ack back);
--                     congestion: makespan = max end - min start
--   effective_bw_gbs  n_issuers * nbytes / latency_ns
--   peak_bw_gbs       min edge bandwidth on the first issuer's data path
--   util_single_pct   effective / peak * 100
--   peak_aggregate    max-min fair share: each directed edge's bandwidth is
--                     split equally among the issuer data paths that use it;
--                     a path's throughput is the min share along it; the
--                     aggregate peak is the sum over paths
--   util_aggregate    effective / peak_aggregate * 100
--
-- Latency breakdown, from the hop log (hops=true: first and last flit
-- arrival at every node of the data leg and of the ack leg) of the issuer
-- that finishes last (the only one for single-issuer scenarios). It sums to
-- latency_ns exactly:
--   Each step of the first flit from node a to the next node b, on either
--   leg, costs first_in(b) - first_in(a), split into
--     * a's overhead_ns (not on the ack leg's origin, the target, which
--       answers at once), booked by a's kind: pe_dma -> pe_setup,
--       noc_router -> noc_mesh, ucie / ucie_conn -> ucie, hbm_ctrl / sram ->
--       hbm_ctrl, anything else (pcie_ep, switch, io_noc, io_cpu, m_cpu) ->
--       fabric;
--     * the edge's ideal time, first-flit bytes / bw + prop_ns, booked by the
--       edge: ucie if an end is a ucie/ucie_conn node, else fabric if an end
--       is a fabric node, else noc_mesh;
--     * if a is a store-and-forward node (pcie_ep, io_cpu, m_cpu, sram)
--       that is not the first node, the wait for the rest of the train,
--       last_in(a) - first_in(a): "observed streaming";
--     * the rest (queueing behind other traffic): contention.
--   The train's tail at the target, last_in - first_in, is observed
--   streaming too. streaming = (nbytes - first-flit bytes) / bottleneck_bw
--   (= (n_flits-1) * flit_bytes / bottleneck_bw for whole flits); observed
--   streaming minus that goes to fabric when the data leg has a
--   store-and-forward node (the train is re-serialised there), else to
--   contention (for a single issuer it is slightly negative when a transit
--   overhead downstream of the bottleneck is hidden by the queued flits).
--   hbm_ctrl also gets the time from the last flit's arrival at the
--   controller to the ack's departure (commit of the last bursts), the
--   departure being the ack's first arrival at the next node minus that
--   edge's ideal time.
local NBYTES = math.tointeger(tonumber(arg and arg[1] or nil) or 16384)
if not NBYTES or NBYTES <= 0 then error("pe_dma.lua: nbytes must be a positive integer", 0) end

local wall0 = os.clock()
-- summary.csv in $KB_OUT_DIR (default .), opened before any simulation so a
-- bad directory fails at once; it appears only once complete (kb.open_output).
local out_dir = os.getenv("KB_OUT_DIR")
if out_dir == nil or out_dir == "" then out_dir = "." end
local csv_path = out_dir .. "/summary.csv"
local csv = kb.open_output(csv_path)
local topo = kb.topology.load()
local P = topo:params()
local FLIT = P.flit_bytes
local SIPS, CUBES, PES = P.sips or 0, P.cubes_per_sip or 0, P.pes_per_cube or 0
if SIPS < 1 or CUBES < 1 or PES < 1 then
  error(("pe_dma.lua: topology %s has no SIP with cubes and PEs"):format(topo.name), 0)
end

-- ---------------------------------------------------------------------------
-- Topology helpers.

local node_info, out_edges = {}, {}
local function info(id)
  local n = node_info[id]
  if not n then
    local t = topo:node(id)
    n = { kind = t.kind, impl = t.impl, ovh = (t.attrs and tonumber(t.attrs.overhead_ns)) or 0 }
    node_info[id] = n
  end
  return n
end

local function edge(a, b)
  local m = out_edges[a]
  if not m then
    m = {}
    for _, e in ipairs(topo:edges(a)) do if m[e.dst] == nil then m[e.dst] = e end end
    out_edges[a] = m
  end
  return m[b] or error(("pe_dma.lua: no edge %s -> %s"):format(a, b))
end

local function dma_id(sip, cube, pe) return topo:node_at { kind = "pe_dma", sip = sip, cube = cube, pe = pe } end
local function hbm_id(sip, cube, pe) return topo:node_at { kind = "hbm_ctrl", sip = sip, cube = cube, pe = pe } end

local function path_cost(src, dst)
  local mm = 0
  local es = topo:path_edges(src, dst)
  for _, e in ipairs(es) do mm = mm + (e.mm or 0) end
  return mm, #es
end

-- The PE of (sip, cube) whose controller is farthest from src in path mm.
local function farthest_pe(src, sip, cube, exclude)
  local best, bmm, bhops
  for pe = 0, PES - 1 do
    if pe ~= exclude then
      local mm, hops = path_cost(src, hbm_id(sip, cube, pe))
      if best == nil or mm > bmm + 1e-9 or (math.abs(mm - bmm) <= 1e-9 and hops > bhops) then
        best, bmm, bhops = pe, mm, hops
      end
    end
  end
  return best
end

local NODE_CAT = { pe_dma = "pe_setup", noc_router = "noc_mesh", ucie = "ucie", ucie_conn = "ucie",
                   hbm_ctrl = "hbm_ctrl", sram = "hbm_ctrl" }
local function node_cat(id) return NODE_CAT[info(id).kind] or "fabric" end
local STORE_FORWARD = { pcie_ep = true, io_cpu = true, m_cpu = true, sram = true }
local function edge_cat(a, b)
  local ca, cb = node_cat(a), node_cat(b)
  if ca == "ucie" or cb == "ucie" then return "ucie" end
  if ca == "fabric" or cb == "fabric" then return "fabric" end
  return "noc_mesh"
end

local CATS = { "pe_setup", "noc_mesh", "ucie", "fabric", "streaming", "hbm_ctrl", "contention" }

-- Rounding noise of float sums shown as 0 (no "-0.00" in the output).
local function z(x) return math.abs(x) < 5e-7 and 0 or x end

-- ---------------------------------------------------------------------------
-- Breakdown of one PE DMA write from its result (see the header).

local function breakdown(v)
  local b = {}
  for _, c in ipairs(CATS) do b[c] = 0 end
  local path, hops, t0 = v.path, v.hops, v.start_ns
  local n = #path
  if #hops ~= 2 * n - 1 then
    error(("pe_dma.lua: hop log of %d entries for a path of %d nodes"):format(#hops, n))
  end
  local function f(i) return hops[i].first_ns - t0 end
  local function l(i) return hops[i].last_ns - t0 end
  local ff = math.min(v.nbytes, FLIT)
  -- data leg
  local bn, observed, has_sf = math.huge, 0, false
  for i = 2, n do
    local a, z = path[i - 1], path[i]
    local e = edge(a, z)
    if e.bw_gbs < bn then bn = e.bw_gbs end
    local step = f(i) - f(i - 1)
    local ovh = info(a).ovh
    local ideal = ff / e.bw_gbs + (e.prop_ns or 0)
    local reasm = 0
    if i - 1 > 1 and STORE_FORWARD[info(a).kind] then
      reasm = l(i - 1) - f(i - 1)
      has_sf = true
    end
    b[node_cat(a)] = b[node_cat(a)] + ovh
    b[edge_cat(a, z)] = b[edge_cat(a, z)] + ideal
    observed = observed + reasm
    b.contention = b.contention + step - ovh - ideal - reasm
  end
  observed = observed + (l(n) - f(n))
  b.streaming = (v.nbytes - ff) / bn
  local extra = observed - b.streaming
  if has_sf then b.fabric = b.fabric + extra else b.contention = b.contention + extra end
  -- the target, then the ack leg (hops n+1 .. 2n-1 are path[n-1] .. path[1])
  local ack = {}
  for i = n, 1, -1 do ack[#ack + 1] = path[i] end
  local function fa(j) return j == 1 and nil or f(n + j - 1) end
  if n >= 2 then
    local e1 = edge(ack[1], ack[2])
    local ideal1 = (e1.prop_ns or 0) -- the ack carries no payload
    local depart = fa(2) - ideal1
    b.hbm_ctrl = b.hbm_ctrl + (depart - l(n))
    b[edge_cat(ack[1], ack[2])] = b[edge_cat(ack[1], ack[2])] + ideal1
    for j = 3, n do
      local a, z = ack[j - 1], ack[j]
      local e = edge(a, z)
      local step = fa(j) - fa(j - 1)
      local ovh = info(a).ovh
      local ideal = (e.prop_ns or 0)
      b[node_cat(a)] = b[node_cat(a)] + ovh
      b[edge_cat(a, z)] = b[edge_cat(a, z)] + ideal
      b.contention = b.contention + step - ovh - ideal
    end
    -- completion at the PE: the ack's arrival
    b.contention = b.contention + (v.latency_ns - fa(n))
  end
  return b
end

-- ---------------------------------------------------------------------------
-- Scenarios.

local function issuer(sip, cube, pe, dsip, dcube, dpe, offset)
  return { sip = sip, cube = cube, pe = pe, dst = { sip = dsip, cube = dcube, pe = dpe, offset = offset or 0 } }
end

local scenarios, skipped = {}, {}
local function add(name, group, issuers) scenarios[#scenarios + 1] = { name = name, group = group, issuers = issuers } end
local function skip(name, why) skipped[#skipped + 1] = { name = name, reason = why } end

local src0 = dma_id(0, 0, 0)
add("same_cube_local", "single", { issuer(0, 0, 0, 0, 0, 0) })
if PES >= 2 then
  add("same_cube_remote_best", "single", { issuer(0, 0, 0, 0, 0, 1) })
  add("same_cube_remote_worst", "single", { issuer(0, 0, 0, 0, 0, farthest_pe(src0, 0, 0, 0)) })
else
  skip("same_cube_remote_best", "one PE per cube")
  skip("same_cube_remote_worst", "one PE per cube")
end
if CUBES >= 2 then
  add("remote_cube_best", "single", { issuer(0, 0, 0, 0, 1, 0) })
  add("remote_cube_worst", "single", { issuer(0, 0, 0, 0, CUBES - 1, farthest_pe(src0, 0, CUBES - 1)) })
else
  skip("remote_cube_best", "one cube per SIP")
  skip("remote_cube_worst", "one cube per SIP")
end
if SIPS >= 2 then
  add("remote_sip", "single", { issuer(0, 0, 0, 1, 0, 0) })
else
  skip("remote_sip", "one SIP")
end

for k = 1, 3 do
  local name = "ctrl_hot_" .. k
  if PES > k then
    local list = {}
    for pe = 1, k do list[#list + 1] = issuer(0, 0, pe, 0, 0, 0, (pe - 1) * NBYTES) end
    add(name, "congestion", list)
  else
    skip(name, ("needs %d PEs per cube"):format(k + 1))
  end
end
if CUBES >= 2 then
  local list = {}
  for pe = 0, PES - 1 do list[#list + 1] = issuer(0, 0, pe, 0, 1, pe) end
  add("ucie_eastbound", "congestion", list)
else
  skip("ucie_eastbound", "one cube per SIP")
end
do
  local list = {}
  for pe = 0, PES - 1 do list[#list + 1] = issuer(0, 0, pe, 0, 0, 0, pe * NBYTES) end
  add("all_pe_cube0_to_pe0", "congestion", list)
  local loc, hot = {}, {}
  for cube = 0, CUBES - 1 do
    for pe = 0, PES - 1 do
      loc[#loc + 1] = issuer(0, cube, pe, 0, cube, pe)
      hot[#hot + 1] = issuer(0, cube, pe, 0, 0, 0, #hot * NBYTES)
    end
  end
  add("sip_local_all", "congestion", loc)
  add("sip_hotspot_pe0", "congestion", hot)
end

local function run(sc)
  local c0 = os.clock()
  local s = sim.new { topology = topo }
  local evs = {}
  for i, it in ipairs(sc.issuers) do
    evs[i] = s:pe_dma { sip = it.sip, cube = it.cube, pe = it.pe, dst = it.dst, nbytes = NBYTES,
                        write = true, hops = true }
  end
  s:run()
  local res = {}
  local t_min, t_max, crit = math.huge, -math.huge, nil
  local usage, paths = {}, {}
  for i, ev in ipairs(evs) do
    local v = ev:value()
    res[i] = v
    if v.start_ns < t_min then t_min = v.start_ns end
    if v.end_ns > t_max then t_max, crit = v.end_ns, v end
    local es = {}
    for j = 2, #v.path do
      local key = v.path[j - 1] .. ">" .. v.path[j]
      es[#es + 1] = key
      usage[key] = (usage[key] or 0) + 1
    end
    paths[i] = { nodes = v.path, keys = es }
  end
  s:close()
  local n = #sc.issuers
  local latency = t_max - t_min
  local eff = n * NBYTES / latency
  local peak = math.huge
  for j = 2, #res[1].path do peak = math.min(peak, edge(res[1].path[j - 1], res[1].path[j]).bw_gbs) end
  local agg = 0
  for _, p in ipairs(paths) do
    local thr = math.huge
    for j, key in ipairs(p.keys) do
      local e = edge(p.nodes[j], p.nodes[j + 1])
      thr = math.min(thr, e.bw_gbs / usage[key])
    end
    agg = agg + thr
  end
  local r = {
    name = sc.name, group = sc.group, n = n, nbytes = NBYTES, latency_ns = latency,
    effective_bw_gbs = eff, peak_bw_gbs = peak, util_single_pct = eff / peak * 100,
    peak_aggregate_bw_gbs = agg, util_aggregate_pct = eff / agg * 100,
    breakdown = breakdown(crit), first = res[1],
  }
  r.wall_s = os.clock() - c0
  return r
end

local results, by_name = {}, {}
for _, sc in ipairs(scenarios) do
  local r = run(sc)
  results[#results + 1] = r
  by_name[r.name] = r
end

-- ---------------------------------------------------------------------------
-- Report.

print(("pe_dma perf: topology %s, %d B per transfer (PE DMA writes), %d scenario(s)"):format(
  topo.name, NBYTES, #results))
print("")
local hdr = "%-24s %4s %10s %9s %8s %7s %9s %8s | %8s %8s %7s %7s %9s %8s %10s"
print(hdr:format("scenario", "N", "latency", "eff_bw", "peak_bw", "util%", "agg_peak", "agg_util%",
  "pe_setup", "noc_mesh", "ucie", "fabric", "streaming", "hbm_ctrl", "contention"))
local last_group
for _, r in ipairs(results) do
  if last_group and r.group ~= last_group then print("") end
  last_group = r.group
  local b = r.breakdown
  print(("%-24s %4d %10.2f %9.2f %8g %7.1f %9.2f %8.1f | %8.2f %8.2f %7.2f %7.2f %9.2f %8.2f %10.2f"):format(
    r.name, r.n, r.latency_ns, r.effective_bw_gbs, r.peak_bw_gbs, r.util_single_pct,
    r.peak_aggregate_bw_gbs, r.util_aggregate_pct, z(b.pe_setup), z(b.noc_mesh), z(b.ucie),
    z(b.fabric), z(b.streaming), z(b.hbm_ctrl), z(b.contention)))
end
print("(latency and breakdown in ns, bandwidths in GB/s; breakdown of the last issuer to finish)")
for _, sc in ipairs(scenarios) do
  if sc.group == "single" then
    local it = sc.issuers[1]
    local mm, hops = path_cost(dma_id(it.sip, it.cube, it.pe), hbm_id(it.dst.sip, it.dst.cube, it.dst.pe))
    print(("  %-24s sip%d.cube%d.pe%d -> sip%d.cube%d.pe%d's slice (path %.2f mm, %d edges)"):format(
      sc.name, it.sip, it.cube, it.pe, it.dst.sip, it.dst.cube, it.dst.pe, mm, hops))
  end
end
for _, s in ipairs(skipped) do print(("skipped %s: %s"):format(s.name, s.reason)) end

-- summary.csv
local f = csv
local cols = { "name", "n_issuers", "nbytes", "latency_ns", "effective_bw_gbs", "peak_bw_gbs",
               "util_single_pct", "peak_aggregate_bw_gbs", "util_aggregate_pct" }
for _, c in ipairs(CATS) do cols[#cols + 1] = c .. "_ns" end
f:write(table.concat(cols, ","), "\n")
for _, r in ipairs(results) do
  local row = { r.name, ("%d"):format(r.n), ("%d"):format(r.nbytes) }
  for _, k in ipairs { "latency_ns", "effective_bw_gbs", "peak_bw_gbs", "util_single_pct",
                       "peak_aggregate_bw_gbs", "util_aggregate_pct" } do
    row[#row + 1] = ("%.4f"):format(r[k])
  end
  for _, c in ipairs(CATS) do row[#row + 1] = ("%.4f"):format(z(r.breakdown[c])) end
  f:write(table.concat(row, ","), "\n")
end
f:close()
print("wrote " .. csv_path)

-- ---------------------------------------------------------------------------
-- Invariants (spec §5.1: a759d58007 / 0bf220fed0 / a143925a12 / a76487ca48).

local EPS = 1e-6
local checks, failed = {}, 0
local function check(name, ok, detail)
  checks[#checks + 1] = true
  if ok then
    print(("[v] PASS %s (%s)"):format(name, detail))
  else
    failed = failed + 1
    print(("[x] FAIL %s (%s)"):format(name, detail))
  end
end
local function skip_check(name, why) print(("[-] SKIP %s (%s)"):format(name, why)) end

print("")
print("Invariants")
-- (1) Distance monotonicity. The model guarantees it along the series of
-- paths that only add cost: local -> same-cube best -> same-cube worst
-- (more routers, same 256 GB/s links) -> remote-cube best (a UCIe crossing
-- with 128 GB/s connections) -> remote-cube worst (more crossings); and
-- remote_sip <= remote_cube_best (it leaves the cube through a UCIe too,
-- then PCIe and two store-and-forward endpoints). remote_sip is NOT
-- compared with remote_cube_worst (spec §8 C13: not ordered).
do
  local chain = {}
  for _, nm in ipairs { "same_cube_local", "same_cube_remote_best", "same_cube_remote_worst",
                        "remote_cube_best", "remote_cube_worst" } do
    if by_name[nm] then chain[#chain + 1] = by_name[nm] end
  end
  local name = "effective BW non-increasing with distance (local >= same-cube best >= same-cube worst "
    .. ">= remote-cube best >= remote-cube worst)"
  if #chain < 2 then
    skip_check(name, "fewer than 2 scenarios")
  else
    local ok, parts = true, {}
    for i, r in ipairs(chain) do
      parts[#parts + 1] = ("%s=%.2f"):format(r.name, r.effective_bw_gbs)
      if i > 1 and r.effective_bw_gbs > chain[i - 1].effective_bw_gbs + EPS then ok = false end
    end
    check(name, ok, table.concat(parts, ", "))
  end
  local rs, rc = by_name.remote_sip, by_name.remote_cube_best
  if rs and rc then
    check("effective BW remote_sip <= remote_cube_best", rs.effective_bw_gbs <= rc.effective_bw_gbs + EPS,
      ("%.2f vs %.2f GB/s; remote_cube_worst %.2f, not compared (C13)"):format(rs.effective_bw_gbs,
        rc.effective_bw_gbs, by_name.remote_cube_worst and by_name.remote_cube_worst.effective_bw_gbs or 0))
  else
    skip_check("effective BW remote_sip <= remote_cube_best", "scenario missing")
  end
end
-- (2) same-cube paths spend nothing in UCIe; (3) remote ones do.
for _, r in ipairs(results) do
  if r.group == "single" then
    if r.name:match("^same_cube") then
      check("zero UCIe budget: " .. r.name, math.abs(r.breakdown.ucie) < EPS, ("%.3f ns"):format(r.breakdown.ucie))
    else
      check("positive UCIe budget: " .. r.name, r.breakdown.ucie > 0, ("%.3f ns"):format(r.breakdown.ucie))
    end
  end
end
-- Single issuers: util <= 100 %, util_single == util_aggregate, eff = nbytes / latency.
for _, r in ipairs(results) do
  if r.group == "single" then
    check("single-issuer util <= 100%: " .. r.name, r.util_single_pct <= 100 + EPS,
      ("%.2f%%"):format(r.util_single_pct))
    check("single-issuer util_single == util_aggregate: " .. r.name,
      math.abs(r.util_single_pct - r.util_aggregate_pct) < 1e-9,
      ("%.4f%% vs %.4f%%"):format(r.util_single_pct, r.util_aggregate_pct))
  end
end
-- (5) streaming: the local train's tail is within 5 % of (n_flits-1) * flit / bn.
do
  local r = by_name.same_cube_local
  local v = r.first
  local n = #v.path
  local tail = v.hops[n].last_ns - v.hops[n].first_ns
  local ideal = r.breakdown.streaming
  local ok = ideal == 0 and tail == 0 or math.abs(tail - ideal) <= 0.05 * ideal
  check("local streaming within 5% of (n_flits-1)*flit_bytes/bottleneck_bw", ok,
    ("tail %.2f ns vs %.2f ns"):format(tail, ideal))
end
-- util_aggregate <= 100 % (+ epsilon) everywhere; multi-issuer util_single <= n * 100 % + 5 %.
for _, r in ipairs(results) do
  check("util_aggregate <= 100%: " .. r.name, r.util_aggregate_pct <= 100 + 1e-6,
    ("%.2f%% of %.2f GB/s"):format(r.util_aggregate_pct, r.peak_aggregate_bw_gbs))
  if r.group == "congestion" then
    check("util_single <= n_issuers x 100% + 5%: " .. r.name, r.util_single_pct <= r.n * 100 + 5,
      ("%.2f%%, n=%d"):format(r.util_single_pct, r.n))
  end
end
-- (5') aggregate BW monotonic in the issuer count on the hot-target series;
-- (6) makespan monotonic in issuers, and the 8-PE hotspot above the 3-PE one.
do
  local series = {}
  for k = 1, 3 do if by_name["ctrl_hot_" .. k] then series[#series + 1] = by_name["ctrl_hot_" .. k] end end
  if #series >= 2 then
    local ok_bw, ok_ms, parts = true, true, {}
    for i, r in ipairs(series) do
      parts[#parts + 1] = ("%s %.2f GB/s %.2f ns"):format(r.name, r.effective_bw_gbs, r.latency_ns)
      if i > 1 then
        if r.effective_bw_gbs + EPS < series[i - 1].effective_bw_gbs then ok_bw = false end
        if r.latency_ns + EPS < series[i - 1].latency_ns then ok_ms = false end
      end
    end
    check("aggregate BW monotonic in issuers (ctrl_hot_1..3)", ok_bw, table.concat(parts, ", "))
    check("makespan monotonic in issuers (ctrl_hot_1..3)", ok_ms, table.concat(parts, ", "))
  else
    skip_check("aggregate BW monotonic in issuers (ctrl_hot_1..3)", "fewer than 2 scenarios")
  end
  local a, h3 = by_name.all_pe_cube0_to_pe0, by_name.ctrl_hot_3
  if a and h3 and a.n > h3.n then
    check(("%d-PE hotspot makespan > 3-PE hotspot"):format(a.n), a.latency_ns > h3.latency_ns,
      ("%.2f ns vs %.2f ns"):format(a.latency_ns, h3.latency_ns))
  end
end
-- (6) all_pe_cube0_to_pe0 reaches >= 70 % of its shared peak.
do
  local r = by_name.all_pe_cube0_to_pe0
  check("all_pe_cube0_to_pe0 >= 70% of its shared peak", r.util_aggregate_pct >= 70,
    ("%.2f%% of %.2f GB/s"):format(r.util_aggregate_pct, r.peak_aggregate_bw_gbs))
end
-- (7) ucie_eastbound: util_aggregate meaningfully below util_single.
if by_name.ucie_eastbound then
  local r = by_name.ucie_eastbound
  check("ucie_eastbound util_aggregate < util_single", r.util_aggregate_pct < r.util_single_pct,
    ("%.2f%% vs %.2f%%"):format(r.util_aggregate_pct, r.util_single_pct))
end
-- sip_local_all: disjoint paths, so the aggregate peak is n x the local path's peak
-- (128 x 256 GB/s on the default topology).
do
  local r = by_name.sip_local_all
  local want = r.n * r.peak_bw_gbs
  check(("sip_local_all aggregate peak = %d x %g GB/s"):format(r.n, r.peak_bw_gbs),
    math.abs(r.peak_aggregate_bw_gbs - want) < 1e-6,
    ("%.2f GB/s vs %.2f GB/s"):format(r.peak_aggregate_bw_gbs, want))
  if topo.name == "default" then
    check("sip_local_all aggregate peak = 128 x 256 GB/s on the default topology",
      r.n == 128 and math.abs(r.peak_aggregate_bw_gbs - 128 * 256) < 1e-6,
      ("%d issuers, %.2f GB/s"):format(r.n, r.peak_aggregate_bw_gbs))
  end
end

print(("%d invariant(s) checked, %d failed"):format(#checks, failed))
print(("sip_local_all wall: %.4f s (%d transfers; target < 0.2 s on the default topology)"):format(
  by_name.sip_local_all.wall_s, by_name.sip_local_all.n))
print(("wall clock: %.3f s"):format(os.clock() - wall0))
if failed > 0 then
  error(("pe_dma.lua: %d invariant(s) failed"):format(failed), 0)
end
