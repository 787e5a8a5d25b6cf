--- kernbench probe: single-flow reference transfers and latency invariants
-- (spec topology-fabric-latency.md §5.3 and §6.4; docs/cli.md).
--
--   kernbench [-t T] [--set K=V] probe [--case NAME] [--json] [--topology T] [--set K=V]
--
-- Cases, 32 KiB each, every one on a fresh simulation of the same topology:
--   H2D    host MemoryWrite to sip0.cube{C}.pe0 offset 0, for hop k = 1..4 the
--          cube at mesh row k-1, column 0 (cube (k-1)*cube_w): h2d-1hop..h2d-4hop
--   D2H    host MemoryRead of the same targets: d2h-1hop..d2h-4hop
--   PE DMA writes from sip0.cube0.pe0 to: its own slice (pe-local-hbm), pe1's
--          slice (pe-same-half-hbm), pe4's (pe-cross-half-hbm), cube 1's pe0
--          (pe-cross-cube-hbm-best) and the last cube's pe0 (pe-cross-cube-hbm-worst)
-- Cases the topology cannot hold are skipped (and said so).
--
-- Per case: Actual (simulated latency), Ovhd (the overhead_ns the model
-- charges on the legs; see leg_overhead), Wire (sum of edge prop_ns over the
-- legs), Drain (nbytes / min edge bandwidth of the data leg), Eff.BW =
-- nbytes / Actual, BN.BW = that minimum, Util% = Eff.BW / BN.BW * 100, and the
-- path formula Ovhd + Wire + Drain, a lower bound of Actual.
--
-- Library use: M.run(opts) -> result table (opts: topology = name, file or
-- loaded topology; sets = {"k=v", ...}; case = name), M.report(result) and
-- M.to_json(result) -> strings, M.main(args) -> exit status (0 ok, 1 an
-- invariant failed); a usage error is raised (kernbench.usage: the command
-- line prints it and exits 2).
-- The report, the JSON form and the command line are in probe_cli.lua; this
-- module re-exports them.
local options = require "kernbench.options"

local M = {}

M.NBYTES = 32768
M.SWEEP_SIZES = { 4096, 16384, 65536, 262144, 1048576 }
M.SWEEP_LABELS = { "4KB", "16KB", "64KB", "256KB", "1MB" }
local EPS_NS = 1e-6 -- float slack of "formula <= actual" (times are exact to the ps)

-- The case catalogue, in report order. H2D/D2H: hop k. PE DMA: target.
local CATALOGUE = {}
for k = 1, 4 do
  CATALOGUE[#CATALOGUE + 1] = { name = ("h2d-%dhop"):format(k), category = "H2D", hop = k }
end
for k = 1, 4 do
  CATALOGUE[#CATALOGUE + 1] = { name = ("d2h-%dhop"):format(k), category = "D2H", hop = k }
end
for _, c in ipairs {
  { name = "pe-local-hbm", pe = 0, cube = "own" },
  { name = "pe-same-half-hbm", pe = 1, cube = "own" },
  { name = "pe-cross-half-hbm", pe = 4, cube = "own" },
  { name = "pe-cross-cube-hbm-best", pe = 0, cube = "adjacent" },
  { name = "pe-cross-cube-hbm-worst", pe = 0, cube = "last" },
} do
  c.category = "PE DMA"
  CATALOGUE[#CATALOGUE + 1] = c
end

--- The names of every case, in order.
function M.case_names()
  local names = {}
  for i, c in ipairs(CATALOGUE) do names[i] = c.name end
  return names
end

local function find_case(name)
  for _, c in ipairs(CATALOGUE) do
    if c.name == name then return c end
  end
end
--- The catalogue entry of a case (name, category; hop, or pe and cube), or nil.
M.find_case = find_case

-- ---------------------------------------------------------------------------
-- Planning: which cases this topology holds, and their targets.

-- Returns {op=, sip=, cube=, pe=, target=} or nil and the reason it is skipped.
local function plan(c, p)
  if (p.sips or 0) < 1 or (p.cubes_per_sip or 0) < 1 or (p.pes_per_cube or 0) < 1 then
    return nil, "the topology has no SIP with cubes and PEs"
  end
  if (p.hbm_slice_bytes or 0) <= 0 then return nil, "the topology has no HBM" end
  if c.category == "H2D" or c.category == "D2H" then
    local rows = math.min(4, p.cube_h or 0)
    if c.hop > rows then
      return nil, ("the cube mesh has %d row(s); hop %d needs row %d"):format(p.cube_h or 0, c.hop,
        c.hop - 1)
    end
    local cube = (c.hop - 1) * p.cube_w
    if cube >= p.cubes_per_sip then
      return nil, ("cube %d is beyond the %d cubes of a SIP"):format(cube, p.cubes_per_sip)
    end
    return { op = c.category == "H2D" and "memory_write" or "memory_read", sip = 0, cube = cube,
             pe = 0, target = { sip = 0, cube = cube, pe = 0, offset = 0 } }
  end
  local cube = 0
  if c.cube == "adjacent" then
    if p.cubes_per_sip < 2 then return nil, "the SIP has a single cube" end
    cube = 1
  elseif c.cube == "last" then
    if p.cubes_per_sip < 2 then return nil, "the SIP has a single cube" end
    if p.cubes_per_sip - 1 == 1 then
      return nil, "the last cube is the adjacent one (see pe-cross-cube-hbm-best)"
    end
    cube = p.cubes_per_sip - 1
  end
  if c.pe >= p.pes_per_cube then
    return nil, ("a cube has %d PE(s); this case targets pe%d"):format(p.pes_per_cube, c.pe)
  end
  if c.name == "pe-cross-half-hbm" and p.pes_per_cube <= 4 then
    return nil, ("a cube has %d PEs, no second half"):format(p.pes_per_cube)
  end
  return { op = "pe_dma", sip = 0, cube = 0, pe = 0,
           target = { sip = 0, cube = cube, pe = c.pe, offset = 0 } }
end

-- ---------------------------------------------------------------------------
-- Topology helpers (cached per topology: node attributes and edges).

local function topo_cache(t)
  local cache = { over = {}, kind = {}, out = {} }
  function cache.node(id)
    if cache.kind[id] == nil then
      local n = t:node(id)
      cache.kind[id] = n.kind
      cache.over[id] = (n.attrs and tonumber(n.attrs.overhead_ns)) or 0
    end
  end
  function cache.overhead(id) cache.node(id) return cache.over[id] end
  function cache.kind_of(id) cache.node(id) return cache.kind[id] end
  function cache.edge(a, b)
    local m = cache.out[a]
    if not m then
      m = {}
      for _, e in ipairs(t:edges(a)) do
        if m[e.dst] == nil then m[e.dst] = e end
      end
      cache.out[a] = m
    end
    local e = m[b]
    if not e then error(("kernbench probe: no edge %s -> %s in topology %s"):format(a, b, t.name), 0) end
    return e
  end
  return cache
end

local function reversed(list)
  local r = {}
  for i = #list, 1, -1 do r[#r + 1] = list[i] end
  return r
end

-- The overhead the model charges on a leg: every node of a request leg
-- (the PE DMA setup and the PCIe endpoint included); on a response leg every
-- node but the first (the target answers at once, its overhead was paid on
-- the request) and but a PE DMA terminal (the transfer completes when the
-- response reaches it, with no second setup).
local function leg_overhead(cache, leg)
  local sum = 0
  for i, id in ipairs(leg.nodes) do
    local skip = leg.response and (i == 1 or (i == #leg.nodes and cache.kind_of(id) == "pe_dma"))
    if not skip then sum = sum + cache.overhead(id) end
  end
  return sum
end

-- ---------------------------------------------------------------------------
-- Running one case.

local function run_case(t, cache, c, pl, nbytes)
  local s = sim.new { topology = t }
  local ev
  if pl.op == "pe_dma" then
    ev = s:pe_dma { sip = pl.sip, cube = pl.cube, pe = pl.pe, dst = pl.target, nbytes = nbytes,
                    write = true, hops = true }
  else
    local args = { nbytes = nbytes, hops = true }
    for k, v in pairs(pl.target) do args[k] = v end
    ev = s[pl.op](s, args)
  end
  s:run()
  local v = ev:value()
  s:close()

  local path = v.path
  local legs
  if c.category == "H2D" then
    legs = { { label = "data", nodes = path, data = true } }
  elseif c.category == "D2H" then
    legs = { { label = "command", nodes = path },
             { label = "data (reverse)", nodes = reversed(path), data = true, response = true } }
  else
    legs = { { label = "data", nodes = path, data = true },
             { label = "ack (reverse)", nodes = reversed(path), response = true } }
  end
  -- The hop log: the request leg's nodes, then each response leg's nodes but
  -- its first (which is the request's last entry).
  local hops = v.hops or {}
  local base = 0
  for li, leg in ipairs(legs) do
    if li > 1 then base = base - 1 end
    leg.first, leg.last = {}, {}
    for i, id in ipairs(leg.nodes) do
      local h = hops[base + i]
      if h and h.node == id and not (leg.response and i == 1) then
        leg.first[i] = h.first_ns - v.start_ns
        leg.last[i] = h.last_ns - v.start_ns
      end
    end
    base = base + #leg.nodes
  end

  local ovhd, wire, bn, bn_leg, bn_hop = 0, 0, nil, nil, nil
  for li, leg in ipairs(legs) do
    ovhd = ovhd + leg_overhead(cache, leg)
    leg.edges = {}
    for i = 2, #leg.nodes do
      local e = cache.edge(leg.nodes[i - 1], leg.nodes[i])
      leg.edges[i] = e
      wire = wire + (e.prop_ns or 0)
      if leg.data and e.bw_gbs and e.bw_gbs > 0 and (bn == nil or e.bw_gbs < bn) then
        bn, bn_leg, bn_hop = e.bw_gbs, li, i
      end
    end
  end
  if bn_leg then legs[bn_leg].bn_hop = bn_hop end
  local drain = bn and nbytes / bn or 0
  local actual = v.latency_ns
  local eff = actual > 0 and nbytes / actual or 0
  return {
    name = c.name, category = c.category, kind = v.kind, nbytes = nbytes,
    target = pl.target, actual_ns = actual, overhead_ns = ovhd, drain_ns = drain, wire_ns = wire,
    formula_ns = ovhd + wire + drain, eff_bw_gbs = eff, bottleneck_bw_gbs = bn,
    util_pct = (bn and bn > 0) and eff / bn * 100 or 0, path = path, legs = legs,
  }
end

local function sweep(cases)
  local rows = {}
  for _, r in ipairs(cases) do
    for i, n in ipairs(M.SWEEP_SIZES) do
      local bn = r.bottleneck_bw_gbs
      local drain = (bn and bn > 0) and n / bn or 0
      local total = r.overhead_ns + r.wire_ns + drain
      local eff = total > 0 and n / total or 0
      rows[#rows + 1] = {
        case = r.name, size = M.SWEEP_LABELS[i], nbytes = n, overhead_ns = r.overhead_ns,
        wire_ns = r.wire_ns, drain_ns = drain, total_ns = total, eff_bw_gbs = eff,
        bottleneck_bw_gbs = bn, util_pct = (bn and bn > 0) and eff / bn * 100 or 0,
      }
    end
  end
  return rows
end

-- ---------------------------------------------------------------------------
-- Invariants.

local function fmt_num(x) return ("%.2f"):format(x) end

local function check_invariants(by_name, cases)
  local inv, skipped = {}, {}
  local function add(name, pass, detail) inv[#inv + 1] = { name = name, pass = pass, detail = detail } end
  local function skip(name, why) skipped[#skipped + 1] = { name = name, reason = why } end

  local function series(prefix)
    local out = {}
    for k = 1, 4 do
      local r = by_name[("%s-%dhop"):format(prefix, k)]
      if r then out[#out + 1] = r end
    end
    return out
  end
  for _, cat in ipairs { { "h2d", "H2D" }, { "d2h", "D2H" } } do
    local name = cat[2] .. " latency strictly increasing with hops"
    local s = series(cat[1])
    if #s < 2 then
      skip(name, ("%d data point(s)"):format(#s))
    else
      local ok, parts = true, {}
      for i, r in ipairs(s) do
        parts[#parts + 1] = r.name .. "=" .. fmt_num(r.actual_ns)
        if i > 1 and not (s[i - 1].actual_ns < r.actual_ns) then ok = false end
      end
      add(name, ok, table.concat(parts, (ok and " < " or ", ")))
    end
  end
  do
    local name = "D2H >= H2D per hop"
    local ok, parts = true, {}
    for k = 1, 4 do
      local h, d = by_name[("h2d-%dhop"):format(k)], by_name[("d2h-%dhop"):format(k)]
      if h and d then
        local good = d.actual_ns >= h.actual_ns
        ok = ok and good
        parts[#parts + 1] = ("hop %d: %s %s %s"):format(k, fmt_num(d.actual_ns), good and ">=" or "<",
          fmt_num(h.actual_ns))
      end
    end
    if #parts == 0 then skip(name, "no hop with both an H2D and a D2H data point")
    else add(name, ok, table.concat(parts, ", ")) end
  end
  do
    local name = "PE DMA cross-cube best < worst"
    local b, w = by_name["pe-cross-cube-hbm-best"], by_name["pe-cross-cube-hbm-worst"]
    if b and w then
      add(name, b.actual_ns < w.actual_ns, ("%s < %s"):format(fmt_num(b.actual_ns), fmt_num(w.actual_ns)))
    else
      skip(name, ("%d data point(s)"):format((b and 1 or 0) + (w and 1 or 0)))
    end
  end
  for _, r in ipairs(cases) do
    local ok = r.formula_ns <= r.actual_ns + EPS_NS
    add("path formula <= actual: " .. r.name, ok,
      ("%s %s %s (ovhd %s + wire %s + drain %s)"):format(fmt_num(r.formula_ns), ok and "<=" or ">",
        fmt_num(r.actual_ns), fmt_num(r.overhead_ns), fmt_num(r.wire_ns), fmt_num(r.drain_ns)))
  end
  return inv, skipped
end

-- Informational lines (not invariants).
local function infos(by_name)
  local out = {}
  local l = by_name["pe-local-hbm"]
  if l then
    for _, n in ipairs { "pe-same-half-hbm", "pe-cross-half-hbm", "pe-cross-cube-hbm-best",
                         "pe-cross-cube-hbm-worst" } do
      local r = by_name[n]
      if r then
        out[#out + 1] = ("PE DMA bottleneck BW: pe-local-hbm %gGB/s vs %s %gGB/s"):format(
          l.bottleneck_bw_gbs or 0, n, r.bottleneck_bw_gbs or 0)
      end
    end
  end
  return out
end

-- ---------------------------------------------------------------------------
-- Loading the topology: --topology / --set of the probe on top of the
-- command line's global ones.

local function load_topology(opts)
  local T = kb.topology
  local topo = opts.topology
  if type(topo) == "userdata" or (type(topo) == "table" and topo.params) then return topo end
  local sets = opts.sets or {}
  if topo == nil and #sets == 0 then return T.load() end
  local list = {}
  local dflt = T.default_overrides or {}
  for _, s in ipairs(dflt) do list[#list + 1] = s end
  local keys = {}
  for k in pairs(dflt) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do list[#list + 1] = k .. "=" .. tostring(dflt[k]) end
  for _, s in ipairs(sets) do list[#list + 1] = s end
  return T.load(topo or T.default_path or "default", list)
end
--- The topology run(opts) uses: opts.topology if it is one already, else
-- that file or name (default: the command line's) with the command line's
-- --set overrides, then opts.sets.
M.load_topology = load_topology

--- Runs the probe. opts: topology (name, file or loaded topology; default:
-- the command line's), sets (list of "key.path=value"), case (a name; nil or
-- "all" = every case), nbytes (default 32768).
-- Returns {topology, nbytes, cases, skipped, sweep, invariants, skipped_checks, info}.
function M.run(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("kb.probe.run: takes {topology =, sets =, case =, nbytes =} or nothing, got %s"):format(type(opts)), 2)
  end
  opts = opts or {}
  options.check("kb.probe.run", opts, { "topology", "sets", "case", "nbytes" }, 2)
  local only = opts.case
  if only == "all" then only = nil end
  if only and not find_case(only) then
    error(("kernbench probe: unknown case '%s' (cases: %s)"):format(only,
      table.concat(M.case_names(), ", ")), 2)
  end
  local nbytes = opts.nbytes or M.NBYTES
  local t = load_topology(opts)
  local p = t:params()
  local cache = topo_cache(t)
  local cases, skipped, by_name = {}, {}, {}
  for _, c in ipairs(CATALOGUE) do
    if only == nil or c.name == only then
      local pl, why = plan(c, p)
      if pl then
        local r = run_case(t, cache, c, pl, nbytes)
        cases[#cases + 1] = r
        by_name[r.name] = r
      else
        skipped[#skipped + 1] = { name = c.name, reason = why }
      end
    end
  end
  local inv, skipped_checks = check_invariants(by_name, cases)
  return {
    topology = t.name, nbytes = nbytes, cases = cases, skipped = skipped, sweep = sweep(cases),
    invariants = inv, skipped_checks = skipped_checks, info = infos(by_name),
  }
end

--- Whether every invariant of a result passed.
function M.passed(result)
  for _, i in ipairs(result.invariants) do
    if not i.pass then return false end
  end
  return true
end

-- ---------------------------------------------------------------------------
-- The text report, the JSON form and the command line (probe_cli.lua).

local cli = require "kernbench.probe_cli"
M.report, M.to_json, M.json_encode = cli.report, cli.to_json, cli.json_encode
M.usage, M.parse, M.main = cli.usage, cli.parse, cli.main

return M
