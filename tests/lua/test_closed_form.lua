--- Closed-form checks of the fabric (issue 18, item 3; spec
-- topology-fabric-latency.md §4.1-4.6, §4.16, §5.1; docs/fidelity.md, "Closed forms").
--
-- 1. A single transfer on an idle fabric takes what the analytic wormhole form
--    says, within 1 %, on every profile of PROFILES: PE DMA writes from a PE
--    (local slice, farthest slice of the same cube, a slice of the next and of
--    the last cube, a slice of the next SIP) and host MemoryWrites from the PCIe
--    endpoint (into the IO-adjacent cube and the farthest cube), at whole-flit
--    sizes and one size that ends in a partial flit.
-- 2. Several issuers at once never move more bytes per ns than the max-min fair
--    share of the route set allows.
--
-- Everything is computed from the topology (t:path, t:edges, t:node(id).attrs,
-- t:params()); no number of a profile is written here.
--
-- The form of one transfer. A path is cut at its store-and-forward nodes (a
-- node that reassembles the whole transaction before sending it on: PCIe
-- endpoint, IO_CPU, M_CPU, SRAM); each piece is a wormhole segment whose train
-- of n flits (sizes b_1 = min(nbytes, F), ..., b_n, F = flit_bytes) is all
-- ready at the segment's first node at once. On a segment with edges 1..K
-- (serialisation s_k(b) = b / bw_k, 0 on an unpaced edge with bw 0; propagation
-- p_k) and flit-aware nodes 1..K-1 between them (overhead o_k on a
-- transaction's first flit only):
--   first flit:  FF  = sum_k (s_k(b_1) + p_k) + sum_{k<K} o_k
--   spec form:   S   = FF + (nbytes - b_1) / bn,   bn = min bw over paced edges
--                      (= (n-1) x F / bn for whole flits)
-- and the whole transfer is
--   setup (PE DMA overhead, or the entry PCIe endpoint's)
--   + sum over segments of S_seg + each store-and-forward node's overhead
--   + the target controller's first-flit overhead
--   + one HBM commit, chunk_time = burst_bytes / (hbm_channel_bw x efficiency)
--   + for a PE DMA write, the 0-byte acknowledgement back along the reverse
--     path: sum of its edges' propagation + every node's overhead between
--     target and PE (it carries no payload, so no serialisation).
--
-- The spec form is not the model's exact time (docs/fidelity.md, "Closed forms"):
--  (a) a node's first-flit overhead after the segment's last bottleneck edge
--      is hidden once the flits queued behind the first one catch up (the
--      train is paced by the bottleneck anyway): S over by those overheads;
--  (b) a partial last flit is charged a whole flit's serialisation on the
--      edges after the bottleneck: S over by the difference;
--  (c) a partial last flit that arrives less than chunk_time after the flit
--      C = hbm_channels_per_pe before it (same channel) waits for that
--      channel: S under by the wait.
-- The exact form: the last flit's arrival is the longest path through the
-- (wire, flit) lattice of a tandem of FIFO wires (max-plus algebra):
--   L = max(FF, max_{j <= j2} [ A_j + (n-1) s_j(F) + sum_{j<k<=j2} (p_{k-1} + s_k(F))
--                               + s_j2(b_n) + p_j2 + sum_{k>j2} (s_k(b_n) + p_k) ])
--   A_j = sum_{k<j} (s_k(b_1) + p_k + o_k)   (flit 1 reaches wire j)
-- (flit 1 pays every overhead before wire j, flits 1..n-1 cross wire j, flit
-- n-1 goes on to wire j2, the last flit crosses j2 behind it and goes on
-- without overheads; j2 > j matters only for a partial last flit), the target
-- commits flit m at H_m = max(L_m, FF + o_target) in channel (m-1) mod C, and
-- the last commit starts at max(H_n, H_{n-C} + chunk_time).
-- The checks: the hop log's first and last flit at the target equal the
-- exact form's (to the ps rounding of each flit on each wire), the latency is
-- within 1 % of the exact form, and the spec form is off by no more than
-- (a) + (b) above and under by no more than (c). The worst error of both forms
-- per case is printed; KB_CLOSED_FORM_VERBOSE=1 prints every case and size.
--
-- Assumptions, checked: only the implementations of FLIT_AWARE and
-- STORE_FORWARD on a path (a latency_model replacing a formula is not
-- visible from Lua and not checked); the HBM controller commits one burst per
-- flit (burst_bytes = flit_bytes); transfers start at offset 0 (flit m in
-- channel (m-1) mod C). Whole flits never wait for a channel: the router ->
-- controller edge runs at C x channel bw, so they arrive at least
-- chunk_time / C apart.
local lu = require "luaunit"

-- The profiles every check runs on: a shipped topology and overrides.
local PROFILES = {
  { name = "default" },
  { name = "original" },
  { name = "small_2x2" },
  { name = "torus_2d_6sip_2x3" },
  -- unpaced UCIe connection <-> port edges (bw 0: propagation only)
  { name = "default", label = "default+unpaced_ucie", set = { "cube.links.ucie_conn_to_port_bw_gbs=0" } },
  -- long wires: propagation is a large part of every case
  { name = "default", label = "default+ns_per_mm=1", set = { "system.ns_per_mm=1" } },
}
local SIZES = { 4096, 16384, 65536, 16384 + 100 } -- the last ends in a 100-byte flit
local TOL = 0.01         -- relative, model vs exact form
local EPS_NS = 0.064     -- absolute: the model rounds each flit's time on each wire to the ps
local NBYTES_MULTI = 16384
local VERBOSE = os.getenv("KB_CLOSED_FORM_VERBOSE") -- set: one line per case and size

-- How each implementation handles a transaction (docs/decisions.md, "Flit-aware
-- nodes", "Store-and-forward nodes"). Any other on a path is an error: the form
-- would not know it.
local FLIT_AWARE = { ["builtin.forwarding"] = true, ["builtin.noc"] = true, ["builtin.switch"] = true,
                     ["builtin.ucie"] = true, ["builtin.hbm_ctrl"] = true }
local STORE_FORWARD = { ["builtin.pcie_ep"] = true, ["builtin.io_cpu"] = true, ["builtin.m_cpu"] = true,
                        ["builtin.sram"] = true, ["builtin.pe_dma"] = true }

local function profile_label(p) return p.label or p.name end

local loaded = {}
local function load(p)
  local key = profile_label(p)
  if not loaded[key] then loaded[key] = kb.topology.load(p.name, p.set) end
  return loaded[key]
end

-- ---------------------------------------------------------------------------
-- Topology access.

local function node(t, id)
  local n = t:node(id)
  local ovh = tonumber(n.attrs and n.attrs.overhead_ns) or 0
  if not (FLIT_AWARE[n.impl] or STORE_FORWARD[n.impl]) then
    error(("closed form: %s has implementation %s, which the form does not model"):format(id, n.impl))
  end
  return { id = id, kind = n.kind, impl = n.impl, ovh = ovh, sf = STORE_FORWARD[n.impl] or false, attrs = n.attrs }
end

local function edge(t, a, b)
  for _, e in ipairs(t:edges(a)) do if e.dst == b then return e end end
  error(("closed form: no edge %s -> %s"):format(a, b))
end

local function ser(e, bytes) return e.bw_gbs > 0 and bytes / e.bw_gbs or 0 end

-- ---------------------------------------------------------------------------
-- The forms.

-- One wormhole segment: nodes[1] sends the whole train at time 0, nodes[#]
-- receives it. Returns the first flit's and (exact) the last flit's arrival
-- at the end, at(m) for any flit, the spec form of the last flit's arrival,
-- and how much the spec form may over-count (`hidden`).
local function segment(nodes, edges, nbytes, F)
  local K = #edges
  local n = nbytes == 0 and 1 or (nbytes + F - 1) // F
  local b1, bn_last = math.min(nbytes, F), nbytes - (n - 1) * F
  local A = { 0 }
  for k = 1, K do
    A[k + 1] = A[k] + ser(edges[k], b1) + edges[k].prop_ns + (k < K and nodes[k + 1].ovh or 0)
  end
  local ff = A[K] + ser(edges[K], b1) + edges[K].prop_ns
  -- Arrival of flit m >= 2: the longest staircase through the (wire, flit)
  -- lattice. Flit 1 pays every overhead up to wire j, flits 1..m-1 (all
  -- whole) cross wire j, flit m-1 goes on to wire j2 >= j, flit m crosses
  -- j2 behind it and goes on to the end (no overheads after flit 1). Only
  -- the last flit may be partial, so j2 > j matters only for it (it queues
  -- behind the whole flit before it on wires after the bottleneck).
  local function at(m)
    if m == 1 then return ff end
    local size = m < n and F or bn_last
    local tail = {} -- tail[j]: flit m from the end of wire j's serialisation on
    tail[K] = edges[K].prop_ns
    for j = K - 1, 1, -1 do tail[j] = edges[j].prop_ns + ser(edges[j + 1], size) + tail[j + 1] end
    local best = ff
    for j = 1, K do
      local prev = A[j] + ser(edges[j], (m - 1) * F) -- flit m-1 leaves wire j
      for j2 = j, K do
        if j2 > j then prev = prev + edges[j2 - 1].prop_ns + ser(edges[j2], F) end
        best = math.max(best, prev + ser(edges[j2], size) + tail[j2])
      end
    end
    return best
  end
  local last = at(n)
  local bw, jb = math.huge, nil
  for k, e in ipairs(edges) do
    if e.bw_gbs > 0 and e.bw_gbs <= bw then bw, jb = e.bw_gbs, k end
  end
  -- What the spec form may count that the model does not: the overheads of
  -- the nodes after the last bottleneck edge (hidden behind the queued
  -- flits), and a partial last flit's serialisation on the edges after it
  -- charged as a whole flit's.
  local hidden = 0
  if jb then
    for k = jb, K - 1 do hidden = hidden + nodes[k + 1].ovh end
    for k = jb + 1, K do hidden = hidden + ser(edges[k], b1) - ser(edges[k], bn_last) end
  end
  local streaming = jb and (nbytes - b1) / bw or 0
  return { ff = ff, last = last, at = at, n = n, spec = ff + streaming, hidden = hidden, bn = bw,
           streaming = streaming }
end

-- The form of a write along `ids` (source .. HBM controller); ack = true adds
-- the PE DMA acknowledgement. Times from the operation's start.
local function closed_form(t, ids, nbytes, ack)
  local P = t:params()
  local F = P.flit_bytes
  local nodes, edges = {}, {}
  for i, id in ipairs(ids) do nodes[i] = node(t, id) end
  for i = 2, #ids do edges[i - 1] = edge(t, ids[i - 1], ids[i]) end
  local target = nodes[#nodes]
  if target.impl ~= "builtin.hbm_ctrl" then error("closed form: the target must be an HBM controller") end
  local burst = tonumber(target.attrs.burst_bytes)
  if burst ~= F then
    error(("closed form: burst_bytes %d ~= flit_bytes %d: one commit per flit is assumed"):format(burst, F))
  end
  local chunk = burst / (P.hbm_channel_bw_gbs * tonumber(target.attrs.efficiency))
  local f = { exact = nodes[1].ovh, spec = nodes[1].ovh, hidden = 0, segments = 0, chunk = chunk }
  local a = 1
  for b = 2, #nodes do
    if nodes[b].sf or b == #nodes then
      local sn, se = {}, {}
      for i = a, b do sn[#sn + 1] = nodes[i] end
      for i = a, b - 1 do se[#se + 1] = edges[i] end
      local s = segment(sn, se, nbytes, F)
      f.segments = f.segments + 1
      f.streaming = (f.streaming or 0) + s.streaming
      if b < #nodes then
        f.exact = f.exact + s.last + nodes[b].ovh
        f.spec = f.spec + s.spec + nodes[b].ovh
        f.hidden = f.hidden + s.hidden
      else
        -- the target handles flit m once it is in and the first flit's
        -- decode is done, and commits it then in channel (m-1) mod C (offset
        -- 0), once that channel's previous burst (flit m-C) is committed
        local t0 = f.exact
        local function handled(m) return t0 + math.max(s.at(m), s.ff + target.ovh) end
        local C = P.hbm_channels_per_pe
        local start = handled(s.n)
        if s.n > C then start = math.max(start, handled(s.n - C) + chunk) end
        f.hbm_wait = start - handled(s.n)
        f.ff_target = t0 + s.ff
        f.last_target = t0 + s.last
        f.exact = start + chunk
        f.spec = f.spec + s.spec + target.ovh + chunk
        f.hidden = f.hidden + s.hidden + target.ovh
      end
      a = b
    end
  end
  f.commit = f.exact
  if ack then
    local back = 0
    for i = #ids, 2, -1 do
      back = back + edge(t, ids[i], ids[i - 1]).prop_ns
      if i - 1 > 1 then back = back + nodes[i - 1].ovh end
    end
    f.ack = back
    f.exact, f.spec = f.exact + back, f.spec + back
  end
  return f
end

-- ---------------------------------------------------------------------------
-- Cases.

local function dma_id(t, sip, cube, pe) return t:node_at { kind = "pe_dma", sip = sip, cube = cube, pe = pe } end
local function hbm_id(t, sip, cube, pe) return t:node_at { kind = "hbm_ctrl", sip = sip, cube = cube, pe = pe } end

local function path_mm(t, src, dst, view)
  local mm = 0
  local es = t:path_edges(src, dst, view)
  for _, e in ipairs(es) do mm = mm + e.mm end
  return mm, #es
end

-- The PE of (sip, cube) whose controller is farthest from src (path mm, then hops).
local function farthest_pe(t, src, sip, cube, view)
  local best, bmm, bh
  for pe = 0, t:params().pes_per_cube - 1 do
    local mm, h = path_mm(t, src, hbm_id(t, sip, cube, pe), view)
    if not best or mm > bmm + 1e-9 or (math.abs(mm - bmm) <= 1e-9 and h > bh) then best, bmm, bh = pe, mm, h end
  end
  return best
end

-- The single-issuer cases of a topology: {name, dma = {sip, cube, pe} | nil, dst = {sip, cube, pe}}.
local function single_cases(t)
  local P = t:params()
  local cases = {}
  local function add(name, src, dst) cases[#cases + 1] = { name = name, src = src, dst = dst } end
  local src0 = dma_id(t, 0, 0, 0)
  add("dma_local", { 0, 0, 0 }, { 0, 0, 0 })
  if P.pes_per_cube > 1 then add("dma_same_cube_far", { 0, 0, 0 }, { 0, 0, farthest_pe(t, src0, 0, 0) }) end
  if P.cubes_per_sip > 1 then
    add("dma_next_cube", { 0, 0, 0 }, { 0, 1, 0 })
    local last = P.cubes_per_sip - 1
    add("dma_last_cube_far", { 0, 0, 0 }, { 0, last, farthest_pe(t, src0, 0, last) })
  end
  if P.sips > 1 then add("dma_cross_sip", { 0, 0, 0 }, { 1, 0, 0 }) end
  -- host writes: the cube nearest the PCIe endpoint (fewest hops) and the
  -- farthest (path mm, then hops), each to its pe0 / farthest slice
  local ep = t:node_at { kind = "pcie_ep", sip = 0, io = 0 }
  local near, nh, far, fmm, fh
  for c = 0, P.cubes_per_sip - 1 do
    local mm, h = path_mm(t, ep, hbm_id(t, 0, c, 0), "memory")
    if not near or h < nh then near, nh = c, h end
    if not far or mm > fmm + 1e-9 or (math.abs(mm - fmm) <= 1e-9 and h > fh) then far, fmm, fh = c, mm, h end
  end
  add("host_write_io_cube", nil, { 0, near, 0 })
  if far ~= near then add("host_write_far_cube", nil, { 0, far, farthest_pe(t, ep, 0, far, "memory") }) end
  return cases, ep
end

-- Runs one case at one size: the model's result and the form.
local function run_single(t, c, ep, nbytes)
  local s = sim.new { topology = t }
  local d = c.dst
  local ev, ids
  if c.src then
    ev = s:pe_dma { sip = c.src[1], cube = c.src[2], pe = c.src[3], write = true, nbytes = nbytes, hops = true,
                    dst = { sip = d[1], cube = d[2], pe = d[3], offset = 0 } }
    ids = t:path(dma_id(t, c.src[1], c.src[2], c.src[3]), hbm_id(t, d[1], d[2], d[3]))
  else
    ev = s:memory_write { sip = d[1], cube = d[2], pe = d[3], offset = 0, nbytes = nbytes, hops = true }
    ids = t:path(ep, hbm_id(t, d[1], d[2], d[3]), "memory")
  end
  s:run()
  local v = ev:value()
  s:close()
  lu.assertEquals(v.path, ids, c.name .. ": the model's route is t:path's")
  local f = closed_form(t, ids, nbytes, c.src ~= nil)
  local n = #ids
  return {
    latency = v.latency_ns, f = f,
    ff_target = v.hops[n].first_ns - v.start_ns, last_target = v.hops[n].last_ns - v.start_ns,
  }
end

local function rel(a, b) return math.abs(a - b) / b end

local function check_singles(p)
  local t = load(p)
  local cases, ep = single_cases(t)
  local lines, worst_exact, worst_spec = {}, 0, 0
  for _, c in ipairs(cases) do
    local we, ws, wh = 0, 0, 0
    for _, nb in ipairs(SIZES) do
      local r = run_single(t, c, ep, nb)
      local f = r.f
      local what = ("%s %s %d B"):format(profile_label(p), c.name, nb)
      -- the hop log: first and last flit at the target, as the form says
      lu.assertTrue(math.abs(r.ff_target - f.ff_target) <= EPS_NS,
        ("%s: first flit at the target at %.4f ns, form %.4f ns"):format(what, r.ff_target, f.ff_target))
      lu.assertTrue(math.abs(r.last_target - f.last_target) <= EPS_NS,
        ("%s: last flit at the target at %.4f ns, form %.4f ns"):format(what, r.last_target, f.last_target))
      -- the whole latency: the exact form within 1 %
      local e = rel(r.latency, f.exact)
      lu.assertTrue(e <= TOL, ("%s: latency %.4f ns, exact form %.4f ns (%.3f %%)"):format(
        what, r.latency, f.exact, 100 * e))
      -- the spec form: over by at most the hidden overheads and the partial
      -- flit's whole-flit charge, under by at most the wait of a partial last
      -- flit for its HBM channel
      lu.assertTrue(r.latency <= f.spec + f.hbm_wait + EPS_NS and f.spec - r.latency <= f.hidden + EPS_NS,
        ("%s: latency %.4f ns, spec form %.4f ns, over-count bound %.4f ns, channel wait %.4f ns"):format(
          what, r.latency, f.spec, f.hidden, f.hbm_wait))
      if VERBOSE then
        print(("    %-22s %6d B  model %9.3f  exact %9.3f  spec %9.3f  (ff %.3f, last %.3f, wait %.3f, ack %s, %d segment(s))"):format(
          c.name, nb, r.latency, f.exact, f.spec, f.ff_target, f.last_target, f.hbm_wait, f.ack and ("%.3f"):format(f.ack) or "-",
          f.segments))
      end
      we, ws = math.max(we, e), math.max(ws, rel(r.latency, f.spec))
      wh = math.max(wh, math.abs(f.spec - r.latency))
    end
    lines[#lines + 1] = ("  %-22s exact %.5f %%  spec %.3f %% (|spec - model| up to %.3f ns)"):format(
      c.name, 100 * we, 100 * ws, wh)
    worst_exact, worst_spec = math.max(worst_exact, we), math.max(worst_spec, ws)
  end
  print(("closed forms on %s: worst error exact %.5f %%, spec %.3f %%"):format(
    profile_label(p), 100 * worst_exact, 100 * worst_spec))
  print(table.concat(lines, "\n"))
end

-- ---------------------------------------------------------------------------
-- Multi-issuer bounds.

-- Max-min fair rates of flows (lists of edges) by progressive filling; unpaced
-- edges (bw 0) constrain nothing. Also the first filling level, min over
-- edges of bw / users: with equal transfers that all must finish, the
-- makespan is at least users x nbytes / bw on every edge, so the aggregate
-- n x nbytes / makespan is at most n x that level (<= the max-min sum).
local function max_min(flows)
  local users, cap = {}, {}
  for i, fl in ipairs(flows) do
    for _, e in ipairs(fl) do
      if e.bw_gbs > 0 then
        local k = e.src .. ">" .. e.dst
        users[k] = users[k] or {}
        users[k][#users[k] + 1] = i
        cap[k] = e.bw_gbs
      end
    end
  end
  local rate, frozen, level1 = {}, {}, nil
  for i = 1, #flows do rate[i] = 0 end
  local active = #flows
  while active > 0 do
    local inc, hit = math.huge, nil
    for k, us in pairs(users) do
      local n = 0
      for _, i in ipairs(us) do if not frozen[i] then n = n + 1 end end
      if n > 0 and cap[k] / n < inc then inc, hit = cap[k] / n, k end
    end
    if not hit then break end -- the rest cross unpaced edges only
    level1 = level1 or inc
    for k, us in pairs(users) do
      for _, i in ipairs(us) do if not frozen[i] then cap[k] = cap[k] - inc end end
    end
    for i = 1, #flows do if not frozen[i] then rate[i] = rate[i] + inc end end
    for k, us in pairs(users) do
      if cap[k] <= 1e-9 then
        for _, i in ipairs(us) do if not frozen[i] then frozen[i] = true active = active - 1 end end
      end
    end
  end
  local sum = 0
  for i = 1, #flows do sum = sum + rate[i] end
  return sum, level1
end

-- The multi-issuer scenarios of benches/perf/pe_dma.lua: {name, issuers = {{src, dst, offset}}}.
local function multi_scenarios(t)
  local P = t:params()
  local out = {}
  local function add(name, list) out[#out + 1] = { name = name, issuers = list } end
  for k = 2, 3 do
    if P.pes_per_cube > k then
      local l = {}
      for pe = 1, k do l[#l + 1] = { { 0, 0, pe }, { 0, 0, 0 }, (pe - 1) * NBYTES_MULTI } end
      add("ctrl_hot_" .. k, l)
    end
  end
  local all, east, loc = {}, {}, {}
  for pe = 0, P.pes_per_cube - 1 do
    all[#all + 1] = { { 0, 0, pe }, { 0, 0, 0 }, pe * NBYTES_MULTI }
    east[#east + 1] = { { 0, 0, pe }, { 0, 1, pe }, 0 }
  end
  add("all_pe_cube0_to_pe0", all)
  if P.cubes_per_sip > 1 then add("ucie_eastbound", east) end
  for c = 0, P.cubes_per_sip - 1 do
    for pe = 0, P.pes_per_cube - 1 do loc[#loc + 1] = { { 0, c, pe }, { 0, c, pe }, 0 } end
  end
  add("sip_local_all", loc)
  local hot = {}
  for i, it in ipairs(loc) do hot[i] = { it[1], { 0, 0, 0 }, (i - 1) * NBYTES_MULTI } end
  add("sip_hotspot_pe0", hot)
  return out
end

local function check_bounds(p)
  local t = load(p)
  local lines = {}
  for _, sc in ipairs(multi_scenarios(t)) do
    local s = sim.new { topology = t }
    local evs, flows = {}, {}
    for i, it in ipairs(sc.issuers) do
      local a, d = it[1], it[2]
      evs[i] = s:pe_dma { sip = a[1], cube = a[2], pe = a[3], write = true, nbytes = NBYTES_MULTI,
                          dst = { sip = d[1], cube = d[2], pe = d[3], offset = it[3] } }
      flows[i] = t:path_edges(dma_id(t, a[1], a[2], a[3]), hbm_id(t, d[1], d[2], d[3]))
    end
    s:run()
    local t0, t1 = math.huge, -math.huge
    for i, ev in ipairs(evs) do
      local v = ev:value()
      lu.assertEquals(#v.path, #flows[i] + 1, sc.name .. ": the model's route is t:path_edges'")
      t0, t1 = math.min(t0, v.start_ns), math.max(t1, v.end_ns)
    end
    s:close()
    local n = #sc.issuers
    local agg = n * NBYTES_MULTI / (t1 - t0)
    local mm, level1 = max_min(flows)
    lu.assertTrue(agg <= mm * (1 + 1e-9), ("%s %s: %.3f GB/s above the max-min fair share %.3f GB/s"):format(
      profile_label(p), sc.name, agg, mm))
    lu.assertTrue(agg <= n * level1 * (1 + 1e-9), ("%s %s: %.3f GB/s above n x the first level %.3f GB/s"):format(
      profile_label(p), sc.name, agg, n * level1))
    lines[#lines + 1] = ("  %-20s n=%3d  %9.2f GB/s <= max-min %9.2f (%.1f %%), n x level %9.2f (%.1f %%)"):format(
      sc.name, n, agg, mm, 100 * agg / mm, n * level1, 100 * agg / (n * level1))
  end
  print(("aggregate bounds on %s (%d B each):"):format(profile_label(p), NBYTES_MULTI))
  print(table.concat(lines, "\n"))
end

-- ---------------------------------------------------------------------------
-- Tests: one pair per profile, so a failure names it.

TestClosedForm = {}

for _, p in ipairs(PROFILES) do
  local key = profile_label(p):gsub("[^%w]", "_")
  TestClosedForm["test_single_transfers_match_the_wormhole_form_" .. key] = function() check_singles(p) end
  TestClosedForm["test_aggregate_within_max_min_fair_share_" .. key] = function() check_bounds(p) end
end

-- The check can fail: the model run with wires 10x slower to propagate than
-- the form assumes (ns_per_mm 10x) is off by more than 1 % on the cross-SIP
-- case (4 x 100 mm of PCIe wire there and back).
function TestClosedForm:test_a_wrong_propagation_term_is_detected()
  local t = load(PROFILES[1])
  local P = t:params()
  local slow = kb.topology.load(PROFILES[1].name, { "system.ns_per_mm=" .. (10 * P.ns_per_mm) })
  local cases, ep = single_cases(slow)
  local c
  for _, x in ipairs(cases) do if x.name == "dma_cross_sip" then c = x end end
  lu.assertNotNil(c, "PROFILES[1] needs 2 SIPs for this check")
  local r = run_single(slow, c, ep, 16384)
  local ids = t:path(dma_id(t, 0, 0, 0), hbm_id(t, c.dst[1], c.dst[2], c.dst[3]))
  local f = closed_form(t, ids, 16384, true)
  lu.assertTrue(rel(r.latency, f.exact) > TOL, ("%s: %.4f ns vs %.4f ns"):format(c.name, r.latency, f.exact))
end

-- The max-min bound is tight enough to bite: one flow alone on the local path
-- reaches more than the share it would have with one more user on its
-- narrowest edge (half its bandwidth) on long transfers.
function TestClosedForm:test_a_halved_bound_is_exceeded()
  local t = load(PROFILES[1])
  local s = sim.new { topology = t }
  local nb = 1 << 20
  local ev = s:pe_dma { sip = 0, cube = 0, pe = 0, write = true, nbytes = nb, dst = { sip = 0, cube = 0, pe = 0 } }
  s:run()
  local v = ev:value()
  s:close()
  local flow = t:path_edges(dma_id(t, 0, 0, 0), hbm_id(t, 0, 0, 0))
  local mm = max_min { flow, flow } -- the same route twice: each gets half
  lu.assertTrue(nb / v.latency_ns > mm / 2, ("%.3f GB/s vs %.3f GB/s"):format(nb / v.latency_ns, mm / 2))
end
