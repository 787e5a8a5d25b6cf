--- kernbench draw: diagrams of a compiled topology (docs/draw.md).
--
--   M.dot(t, opts) -> DOT text
--       opts = {view = "system"|"sip"|"cube"|"pe", sip =, cube =, pe =,
--               stats = <a decoded --stats-json document or nil>,
--               route = {src_id, dst_id} or nil}
--   M.render(dot_text, format) -> bytes      ("svg" or "png", through Graphviz's dot)
--   M.route(t, src_id, dst_id) -> {node ids...}   (the router's route, t:path)
--   M.draw(t, opts, format[, cache]) -> bytes, cache_path_or_nil, hit
--       DOT, or the rendering cached under $XDG_CACHE_HOME/kernbench/draw/
--   M.main(args) -> exit status               (`kernbench draw ...`; a usage
--       error is raised: kernbench.usage, exit status 2)
--
-- Every drawn node has the DOT attribute `id` = its topology node id, or for a
-- node that stands for several (a SIP, an IO chiplet, a cube, a PE) the prefix
-- their ids share ("sip0", "sip0.io0", "sip0.cube3", "sip0.cube3.pe2"). Every
-- edge stands for the links between two drawn nodes, both directions: its `id`
-- is "A->B" (A the smaller id of the two; a one-way link keeps its own
-- direction), its `class` "link" (plus "route" on the route), and its
-- `tooltip` lists the links with bandwidth, latency and, with stats,
-- utilisation. Output is deterministic: everything is emitted sorted.
local M = {}

M.VIEWS = { "system", "sip", "cube", "pe" }
M.FORMATS = { "svg", "png", "dot" }
M.MAX_NODES = 3000 -- a view with more drawn nodes is refused (a huge graph-form file)

-- Utilisation scale (the legend): upper bounds and colours, low to high.
M.SCALE = {
  { 0.2, "#1a9850" }, { 0.4, "#91cf60" }, { 0.6, "#fee08b" }, { 0.8, "#fc8d59" }, { math.huge, "#d73027" },
}
M.NO_TRAFFIC = "#bdbdbd"
M.ROUTE_COLOR = "#1f4fff"
local LINK_COLOR = "#606060"

local function fail(fmt, ...) error(select("#", ...) > 0 and fmt:format(...) or fmt, 0) end

--- The colour of utilisation u (0..1); nil: the link carried nothing.
function M.util_color(u)
  if u == nil then return M.NO_TRAFFIC end
  for _, s in ipairs(M.SCALE) do
    if u < s[1] then return s[2] end
  end
  return M.SCALE[#M.SCALE][2]
end

-- ---------------------------------------------------------------------------
-- The topology as plain tables, read once per topology object.

local cache_graph = setmetatable({}, { __mode = "k" })

local function graph(t)
  local g = cache_graph[t]
  if g then return g end
  g = { ids = t:nodes(), node = {}, out = {}, params = t:params() }
  for _, id in ipairs(g.ids) do
    g.node[id] = t:node(id)
    g.out[id] = t:edges(id)
  end
  g.graph_form = (g.params.sips or 0) == 0
  cache_graph[t] = g
  return g
end

-- ---------------------------------------------------------------------------
-- Options.

local function is_in(list, v)
  for _, x in ipairs(list) do if x == v then return true end end
  return false
end

local function check_index(name, v, n, what)
  if v == nil then return 0 end
  if math.type(v) ~= "integer" then
    fail("--%s %s: expected a whole number", name, tostring(v))
  end
  if n <= 0 then fail("--%s %d: %s", name, v, what) end
  if v < 0 or v >= n then
    fail("--%s %d is out of range: %s (0 .. %d)", name, v, what, n - 1)
  end
  return v
end

local distance = require "kernbench.edit_distance" -- for "did you mean"
local cli_opts = require "kernbench.cli_opts"

--- Up to 5 node ids of t close to `id` (typos, a missing part).
function M.close_ids(t, id)
  local g = graph(t)
  local scored = {}
  local key = id:lower()
  -- the ids under the longest leading part of `id` that some id shares
  -- (sip0.cube0.pe0.pe_dam: the PE's parts), so a typo is cheap to place
  local segs = {}
  for s in key:gmatch("[^.]+") do segs[#segs + 1] = s end
  local cands = g.ids
  for k = #segs - 1, 1, -1 do
    local prefix = table.concat(segs, ".", 1, k) .. "."
    local under = {}
    for _, cand in ipairs(g.ids) do
      if cand:lower():sub(1, #prefix) == prefix then under[#under + 1] = cand end
    end
    if #under > 0 then cands = under break end
  end
  for _, cand in ipairs(cands) do
    if math.abs(#cand - #key) <= 4 then
      local d = distance(key, cand:lower())
      if cand:find(key, 1, true) then d = math.min(d, 2) end
      if d <= math.max(3, #key // 3) then scored[#scored + 1] = { d = d, id = cand } end
    end
  end
  table.sort(scored, function(x, y) return x.d < y.d or (x.d == y.d and x.id < y.id) end)
  local out = {}
  for i = 1, math.min(#scored, 5) do out[i] = scored[i].id end
  return out
end

local function check_node(t, id, what)
  if type(id) ~= "string" or id == "" then fail("%s: expected a node id", what) end
  if graph(t).node[id] then return end
  local near = M.close_ids(t, id)
  fail("%s: no node '%s' in topology %s%s", what, id, t.name,
       #near > 0 and ("; did you mean " .. table.concat(near, ", ") .. "?")
                 or " (kb.topology.load():nodes() lists them)")
end

--- The route the router picks from src to dst: t:path(src, dst), which from a
-- PE DMA engine follows the PE DMA policy (docs/lua-api.md).
function M.route(t, src, dst)
  check_node(t, src, "--route source")
  check_node(t, dst, "--route destination")
  local ok, path = pcall(t.path, t, src, dst)
  if not ok then fail("--route %s %s: %s", src, dst, tostring(path)) end
  return path
end

--- Checks opts against t; returns a normalised copy (raises a message naming
-- the option).
function M.options(t, opts)
  opts = opts or {}
  local g = graph(t)
  local p = g.params
  local o = { view = opts.view or "system", stats = opts.stats, route = opts.route }
  if not is_in(M.VIEWS, o.view) then
    fail("--view %s: expected one of %s", tostring(o.view), table.concat(M.VIEWS, ", "))
  end
  if g.graph_form then
    for _, k in ipairs { "sip", "cube", "pe" } do
      if opts[k] ~= nil and opts[k] ~= 0 then -- 0, the default, means nothing here
        fail("--%s: topology %s is a graph-form topology without SIPs, cubes or PEs", k, t.name)
      end
    end
  else
    o.sip = check_index("sip", opts.sip, p.sips, ("topology %s has %d SIP(s)"):format(t.name, p.sips))
    o.cube = check_index("cube", opts.cube, p.cubes_per_sip,
                         ("topology %s has %d cube(s) per SIP"):format(t.name, p.cubes_per_sip))
    o.pe = check_index("pe", opts.pe, p.pes_per_cube,
                       ("topology %s has %d PE(s) per cube"):format(t.name, p.pes_per_cube))
  end
  if o.route ~= nil then
    if type(o.route) ~= "table" or #o.route ~= 2 then fail("--route: expected {src_id, dst_id}") end
    o.path = M.route(t, o.route[1], o.route[2])
  end
  if o.stats ~= nil and (type(o.stats) ~= "table" or type(o.stats.simulations) ~= "table") then
    fail("--stats: not a statistics document of --stats-json (no 'simulations' list)")
  end
  return o
end

-- ---------------------------------------------------------------------------
-- Views: which node each topology node is drawn as.
--
-- classify(n) -> rep, internal: the drawn node standing for topology node n
-- (nil: not drawn), and whether n belongs to the view (edges are drawn when
-- at least one end belongs to it, so a view shows its neighbours too).

local function io_prefix(id) return id:match("^([^.]+%.[^.]+)") end

local function classifier(g, o)
  local S, C, P = o.sip, o.cube, o.pe
  if g.graph_form then
    return function(n) return n.id, true end
  end
  local function cube_id(n) return ("sip%d.cube%d"):format(n.sip, n.cube) end
  local function pe_part(n) return n.kind:sub(1, 3) == "pe_" and n.pe ~= nil end
  if o.view == "system" then
    return function(n)
      if n.io ~= nil then return io_prefix(n.id), true end
      if n.cube ~= nil then return "sip" .. n.sip, true end
      return n.id, true
    end
  elseif o.view == "sip" then
    return function(n)
      if n.sip == nil then return n.id, false end
      if n.sip ~= S then return "sip" .. n.sip, false end
      if n.io ~= nil then return io_prefix(n.id), true end
      if n.cube ~= nil then return cube_id(n), true end
      return n.id, true
    end
  elseif o.view == "cube" then
    return function(n)
      if n.sip == nil then return n.id, false end
      if n.sip ~= S then return "sip" .. n.sip, false end
      if n.io ~= nil then return io_prefix(n.id), false end
      if n.cube == nil then return n.id, false end
      if n.cube ~= C then return cube_id(n), false end
      if pe_part(n) then return ("%s.pe%d"):format(cube_id(n), n.pe), true end
      if n.kind == "ucie_conn" then return (n.id:gsub("%.[^.]*$", "")), true end
      return n.id, true
    end
  else -- pe
    return function(n)
      if n.sip == S and n.cube == C and n.pe == P and pe_part(n) then return n.id, true end
      return n.id, false
    end
  end
end

-- The links of a stats document, by "src\0dst": the largest utilisation any
-- simulation of this topology saw (all simulations if none names it).
local function link_stats(stats, tname)
  if not stats then return nil end
  local sims = {}
  for _, s in ipairs(stats.simulations) do
    if s.topology == tname then sims[#sims + 1] = s end
  end
  if #sims == 0 then sims = stats.simulations end
  local links, comps = {}, {}
  for _, s in ipairs(sims) do
    for _, l in ipairs(s.links or {}) do
      if type(l.src) == "string" and type(l.dst) == "string" then
        local k = l.src .. "\0" .. l.dst
        local u = tonumber(l.util) or 0
        local cur = links[k]
        if not cur or u > cur.util then
          links[k] = { util = u, bytes = tonumber(l.bytes) or 0, busy_ns = tonumber(l.busy_ns) or 0 }
        end
      end
    end
    for _, c in ipairs(s.components or {}) do
      if type(c.id) == "string" then
        local u = tonumber(c.util) or 0
        if not comps[c.id] or u > comps[c.id] then comps[c.id] = u end
      end
    end
  end
  return { links = links, comps = comps, nsims = #sims }
end

-- ---------------------------------------------------------------------------
-- The drawn graph of a view: nodes (rep -> {id, internal, members}) and
-- edges (unordered pair -> {a, b, fwd = {links a->b}, back = {links b->a}}).

local function build(t, o)
  local g = graph(t)
  local classify = classifier(g, o)
  local cls = {}
  for _, id in ipairs(g.ids) do
    local rep, internal = classify(g.node[id])
    if rep then cls[id] = { rep = rep, internal = internal } end
  end
  local nodes, edges = {}, {}
  local function add_node(rep, internal)
    local n = nodes[rep]
    if not n then
      n = { id = rep, internal = internal, members = {} }
      nodes[rep] = n
    end
    n.internal = n.internal or internal
    return n
  end
  -- internal nodes always; members of every drawn node
  for _, id in ipairs(g.ids) do
    local c = cls[id]
    if c and c.internal then add_node(c.rep, true) end
  end
  for _, id in ipairs(g.ids) do
    local cu = cls[id]
    if cu then
      for _, e in ipairs(g.out[id]) do
        local cv = cls[e.dst]
        if cv and cu.rep ~= cv.rep and (cu.internal or cv.internal) then
          add_node(cu.rep, cu.internal)
          add_node(cv.rep, cv.internal)
          local a, b = cu.rep, cv.rep
          local fwd = a < b
          if not fwd then a, b = b, a end
          local key = a .. "\0" .. b
          local ed = edges[key]
          if not ed then
            ed = { a = a, b = b, fwd = {}, back = {} }
            edges[key] = ed
          end
          local list = fwd and ed.fwd or ed.back
          list[#list + 1] = e
        end
      end
    end
  end
  for _, id in ipairs(g.ids) do
    local c = cls[id]
    if c and nodes[c.rep] then local m = nodes[c.rep].members m[#m + 1] = id end
  end
  return nodes, edges, cls
end

-- ---------------------------------------------------------------------------
-- Layout: positions in points (DOT coordinates: y grows upwards).

local function sorted_keys(t)
  local k = {}
  for key in pairs(t) do k[#k + 1] = key end
  table.sort(k)
  return k
end

local CUBE_SCALE = 48 -- points per mm in the cube view

local function layout_system(g, nodes, edges)
  local p = g.params
  local pos = {}
  local n = p.sips
  local P = 200
  local sw = { 0, 0 }
  local grid = (p.sip_topology == "torus_2d" or p.sip_topology == "mesh_2d_no_wrap") and p.sip_grid_w > 0
  if grid then
    local w, h = p.sip_grid_w, p.sip_grid_h
    for i = 0, n - 1 do pos["sip" .. i] = { (i % w) * P, -(i // w) * P } end
    sw = { (w - 1) * P / 2 + ((w % 2 == 1) and P / 2 or 0), -(h - 1) * P / 2 - ((h % 2 == 1) and P / 2 or 0) }
  else
    local R = math.max(170, n * 55)
    for i = 0, n - 1 do
      local a = n <= 2 and (math.pi - i * math.pi) or (math.pi / 2 - 2 * math.pi * i / n)
      pos["sip" .. i] = { R * math.cos(a), R * math.sin(a) }
    end
    if n <= 2 then sw = { 0, -0.75 * R } end
  end
  for _, id in ipairs(sorted_keys(nodes)) do
    if g.node[id] and g.node[id].kind == "switch" then pos[id] = { sw[1], sw[2] } end
  end
  -- IO chiplets between their SIP and the switch, spread sideways
  local ios = {}
  for _, id in ipairs(sorted_keys(nodes)) do
    local s = id:match("^sip(%d+)%.")
    if s and not pos[id] then
      ios[s] = ios[s] or {}
      ios[s][#ios[s] + 1] = id
    end
  end
  for s, list in pairs(ios) do
    local sp = pos["sip" .. s] or { 0, 0 }
    local dx, dy = sw[1] - sp[1], sw[2] - sp[2]
    local len = math.max(1e-9, math.sqrt(dx * dx + dy * dy))
    local ux, uy = dx / len, dy / len
    local d = math.min(len * 0.45, 95)
    for j, id in ipairs(list) do
      local off = (j - 1 - (#list - 1) / 2) * 70
      pos[id] = { sp[1] + ux * d - uy * off, sp[2] + uy * d + ux * off }
    end
  end
  return pos
end

local SIDE_VEC = { N = { 0, 1 }, S = { 0, -1 }, E = { 1, 0 }, W = { -1, 0 } }

local function layout_sip(g, o, nodes, edges)
  local p = g.params
  local pos = {}
  local P = 150
  local w = p.cube_w
  for c = 0, p.cubes_per_sip - 1 do
    pos[("sip%d.cube%d"):format(o.sip, c)] = { (c % w) * P, -(c // w) * P }
  end
  local cx, cy = (w - 1) * P / 2, -(p.cube_h - 1) * P / 2
  -- an IO chiplet beside the cubes it attaches to, on their sides
  local io_list = {}
  for _, id in ipairs(sorted_keys(nodes)) do
    if not pos[id] and nodes[id].internal then io_list[#io_list + 1] = id end
  end
  for _, id in ipairs(io_list) do
    local sx, sy, vx, vy, k = 0, 0, 0, 0, 0
    for _, key in ipairs(sorted_keys(edges)) do
      local e = edges[key]
      local other = e.a == id and e.b or e.b == id and e.a or nil
      if other and pos[other] and other:match("%.cube%d+$") then
        for _, l in ipairs(e.a == id and e.fwd or e.back) do
          local side = l.dst:match("%.ucie%-([NESW])$")
          if side then
            sx, sy = sx + pos[other][1], sy + pos[other][2]
            vx, vy = vx + SIDE_VEC[side][1], vy + SIDE_VEC[side][2]
            k = k + 1
          end
        end
      end
    end
    if k > 0 then
      local len = math.sqrt(vx * vx + vy * vy)
      if len < 1e-9 then vx, vy, len = 0, 1, 1 end
      pos[id] = { sx / k + vx / len * P * 0.8, sy / k + vy / len * P * 0.8 }
    end
  end
  local n_io, mx, my = 0, 0, 0
  for _, id in ipairs(io_list) do
    if pos[id] then n_io, mx, my = n_io + 1, mx + pos[id][1], my + pos[id][2] end
  end
  local rest = {}
  for _, id in ipairs(sorted_keys(nodes)) do if not pos[id] then rest[#rest + 1] = id end end
  for i, id in ipairs(rest) do
    local node = g.node[id]
    if node and node.kind == "switch" and n_io > 0 then
      mx, my = mx / n_io, my / n_io
      local dx, dy = mx - cx, my - cy
      local len = math.sqrt(dx * dx + dy * dy)
      if len < 1e-9 then dx, dy, len = 0, 1, 1 end
      pos[id] = { mx + dx / len * P * 0.7, my + dy / len * P * 0.7 }
    else
      pos[id] = { (i - 1) * P, P * 1.2 }
    end
  end
  return pos
end

local function layout_cube(g, o, nodes, edges)
  local prefix = ("sip%d.cube%d."):format(o.sip, o.cube)
  local mm = {}
  local routers = {}
  local minx, maxx, miny, maxy = math.huge, -math.huge, math.huge, -math.huge
  for _, id in ipairs(sorted_keys(nodes)) do
    local n = nodes[id]
    if n.internal then
      local src = g.node[id]
      if not src then -- a PE: where its parts are
        for _, m in ipairs(n.members) do
          if g.node[m].pos_mm then src = g.node[m] break end
        end
      end
      if src and src.pos_mm then
        mm[id] = { src.pos_mm[1], src.pos_mm[2] }
        if src.kind == "noc_router" then
          routers[id] = true
          minx, maxx = math.min(minx, src.pos_mm[1]), math.max(maxx, src.pos_mm[1])
          miny, maxy = math.min(miny, src.pos_mm[2]), math.max(maxy, src.pos_mm[2])
        end
      end
    end
  end
  if minx == math.huge then minx, maxx, miny, maxy = 0, 10, 0, 10 end
  local midx, midy = (minx + maxx) / 2, (miny + maxy) / 2
  local pos = {}
  local S = CUBE_SCALE
  -- components sharing a router's place go around it, outermost slot first
  local groups = {}
  for _, id in ipairs(sorted_keys(mm)) do
    if routers[id] then
      pos[id] = { mm[id][1] * S, -mm[id][2] * S }
    else
      local k = ("%.6f,%.6f"):format(mm[id][1], mm[id][2])
      groups[k] = groups[k] or { x = mm[id][1], y = mm[id][2] }
      local grp = groups[k]
      grp[#grp + 1] = id
    end
  end
  local DX, DY = 0.78, 0.55 -- mm
  for _, k in ipairs(sorted_keys(groups)) do
    local grp = groups[k]
    local slots = {}
    for _, d in ipairs { { -1, -1 }, { 1, -1 }, { -1, 1 }, { 1, 1 }, { 0, -1.9 }, { 0, 1.9 } } do
      local x, y = grp.x + d[1] * DX, grp.y + d[2] * DY
      slots[#slots + 1] = { x = x, y = y, out = (x - midx) ^ 2 + (y - midy) ^ 2, i = #slots }
    end
    table.sort(slots, function(a, b) return a.out > b.out or (a.out == b.out and a.i < b.i) end)
    for i, id in ipairs(grp) do
      local s = slots[(i - 1) % #slots + 1]
      pos[id] = { s.x * S, -s.y * S }
    end
  end
  -- UCIe ports outside the mesh, their neighbours beyond them
  local port_at = {
    N = { midx, miny - 1.7 }, S = { midx, maxy + 1.7 }, W = { minx - 2.1, midy }, E = { maxx + 2.1, midy },
  }
  local beyond = { N = { 0, -1.5 }, S = { 0, 1.5 }, W = { -2.2, 0 }, E = { 2.2, 0 } }
  for _, id in ipairs(sorted_keys(nodes)) do
    local side = id:sub(1, #prefix) == prefix and id:match("^ucie%-([NESW])$", #prefix + 1)
    if side and not pos[id] then
      local at = port_at[side]
      pos[id] = { at[1] * S, -at[2] * S }
      for _, key in ipairs(sorted_keys(edges)) do
        local e = edges[key]
        local other = e.a == id and e.b or e.b == id and e.a or nil
        if other and not nodes[other].internal and not pos[other] then
          local b = beyond[side]
          pos[other] = { (at[1] + b[1]) * S, -(at[2] + b[2]) * S }
        end
      end
    end
  end
  local i = 0
  for _, id in ipairs(sorted_keys(nodes)) do
    if not pos[id] then
      pos[id] = { (minx + i * 2.5) * S, -(maxy + 4.5) * S }
      i = i + 1
    end
  end
  return pos
end

local PE_PLACE = {
  pe_cpu = { 0, 0 }, pe_ipcq = { 240, 0 },
  pe_scheduler = { 0, -110 }, pe_dma = { 360, -110 }, pe_mmu = { 560, -110 },
  pe_fetch_store = { 180, -220 }, pe_tcm = { 400, -220 },
  pe_gemm = { 60, -330 }, pe_math = { 300, -330 },
}

local function layout_pe(g, nodes)
  local pos = {}
  local ext, other = 0, 0
  for _, id in ipairs(sorted_keys(nodes)) do
    local n = g.node[id]
    local place = n and nodes[id].internal and PE_PLACE[n.kind]
    if place then
      pos[id] = { place[1], place[2] }
    elseif not nodes[id].internal then
      pos[id] = { 560 + 200 * (ext // 3), 110 * (ext % 3) }
      ext = ext + 1
    else
      pos[id] = { other * 160, -440 }
      other = other + 1
    end
  end
  return pos
end

-- ---------------------------------------------------------------------------
-- DOT text.

local function q(s)
  return '"' .. tostring(s):gsub("\\", "\\\\"):gsub('"', '\\"'):gsub("\n", "\\n") .. '"'
end

local function num(x)
  local s = ("%.2f"):format(x)
  s = s:gsub("%.?0+$", "")
  if s == "-0" or s == "" then s = "0" end
  return s
end

local function fmt_value(v)
  if type(v) == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    return ("%.6g"):format(v)
  end
  return tostring(v)
end

local function bw_text(bw)
  if not bw or bw == 0 then return "unpaced" end
  return ("%s GB/s"):format(fmt_value(bw))
end

local function pct(u) return ("%.1f%%"):format(u * 100) end

local FILL = {
  switch = "#c9c9f5", sip = "#e4e4fb", io_chiplet = "#ffe2b8", pcie_ep = "#ffe2b8", io_noc = "#ffe2b8",
  io_cpu = "#ffe2b8", cube = "#dff0df", noc_router = "#f2f2f2", hbm_ctrl = "#ffd6d6", sram = "#d5e8ff",
  m_cpu = "#fff1a8", pe = "#dde6ff", ucie = "#ead8ff", ucie_conn = "#ead8ff", transit = "#f2f2f2",
}

-- The class (kind) of a drawn node.
local function node_class(g, id, n)
  local src = g.node[id]
  if src then return src.kind end
  if id:match("^sip%d+$") then return "sip" end
  if id:match("%.cube%d+$") then return "cube" end
  if id:match("%.pe%d+$") then return "pe" end
  return "io_chiplet"
end

local function kind_counts(g, members)
  local counts = {}
  for _, m in ipairs(members) do
    local k = g.node[m].kind
    counts[k] = (counts[k] or 0) + 1
  end
  local parts = {}
  for _, k in ipairs(sorted_keys(counts)) do parts[#parts + 1] = ("%s %d"):format(k, counts[k]) end
  return table.concat(parts, ", ")
end

local function node_tooltip(g, id, n, kind, st)
  local lines = {}
  local src = g.node[id]
  if src then
    lines[#lines + 1] = id
    lines[#lines + 1] = "kind: " .. src.kind
    lines[#lines + 1] = "impl: " .. tostring(src.impl)
    for _, k in ipairs(sorted_keys(src.attrs or {})) do
      lines[#lines + 1] = ("%s: %s"):format(k, fmt_value(src.attrs[k]))
    end
    if src.pos_mm then
      lines[#lines + 1] = ("pos_mm: %s, %s"):format(fmt_value(src.pos_mm[1]), fmt_value(src.pos_mm[2]))
    end
    if st and st.comps[id] then lines[#lines + 1] = "busy: " .. pct(st.comps[id]) end
  else
    lines[#lines + 1] = ("%s (%s: %d components)"):format(id, kind, #n.members)
    lines[#lines + 1] = kind_counts(g, n.members)
    if st then
      local best, bid = nil, nil
      for _, m in ipairs(n.members) do
        local u = st.comps[m]
        if u and (not best or u > best) then best, bid = u, m end
      end
      if best then lines[#lines + 1] = ("busiest: %s %s"):format(bid, pct(best)) end
    end
  end
  if not n.internal then lines[#lines + 1] = "(outside this view)" end
  return table.concat(lines, "\n")
end

local function node_label(g, o, id, kind, n)
  local p = g.params
  if g.graph_form then return id end
  if kind == "sip" then
    return ("%s\n%dx%d cubes"):format(id, p.cube_w, p.cube_h)
  elseif kind == "cube" then
    local s, c = id:match("^sip(%d+)%.cube(%d+)$")
    c = tonumber(c)
    if o.view == "sip" and tonumber(s) == o.sip then
      return ("cube%d\n(%d,%d)"):format(c, c % p.cube_w, c // p.cube_w)
    end
    return id
  end
  local scope = ({ sip = ("sip%d."):format(o.sip), cube = ("sip%d.cube%d."):format(o.sip, o.cube),
                   pe = ("sip%d.cube%d.pe%d."):format(o.sip, o.cube, o.pe) })[o.view]
  if scope and n.internal and id:sub(1, #scope) == scope then
    local rest = id:sub(#scope + 1)
    rest = rest:gsub("^hbm_ctrl%.pe", "hbm"):gsub("^pe_", "")
    return rest
  end
  return id
end

local SHAPE = {
  sip = { "box", 1.3, 0.6 }, cube = { "box", 1.0, 0.62 }, io_chiplet = { "box", 0.9, 0.45 },
  switch = { "box", 1.0, 0.5 }, noc_router = { "circle", 0.46, 0.46 }, pe = { "box", 0.62, 0.3 },
  hbm_ctrl = { "box", 0.62, 0.3 }, sram = { "box", 0.62, 0.3 }, m_cpu = { "box", 0.62, 0.3 },
  ucie = { "box", 0.8, 0.32 },
}

local function edge_tooltip(e, st, rep_a, rep_b)
  local lines = {}
  local function dir(list, from, to)
    if #list == 0 then return end
    local total, busiest = 0, nil
    for _, l in ipairs(list) do
      total = total + (l.bw_gbs or 0)
      local s = st and st.links[l.src .. "\0" .. l.dst]
      if s and (not busiest or s.util > busiest) then busiest = s.util end
    end
    local head = ("%s -> %s: %d link%s"):format(from, to, #list, #list == 1 and "" or "s")
    if #list > 1 then head = head .. (", %s in all"):format(bw_text(total)) end
    if st then head = head .. (busiest and (", util up to " .. pct(busiest)) or ", no traffic") end
    lines[#lines + 1] = head
    for i, l in ipairs(list) do
      if i > 6 then
        lines[#lines + 1] = ("  ... and %d more"):format(#list - 6)
        break
      end
      local s = st and st.links[l.src .. "\0" .. l.dst]
      lines[#lines + 1] = ("  %s -> %s (%s): %s, latency %s ns (%s mm)%s"):format(l.src, l.dst, l.kind,
        bw_text(l.bw_gbs), fmt_value(l.prop_ns or 0), fmt_value(l.mm or 0),
        s and (", util %s, %s bytes"):format(pct(s.util), fmt_value(s.bytes)) or "")
    end
  end
  dir(e.fwd, rep_a, rep_b)
  dir(e.back, rep_b, rep_a)
  return table.concat(lines, "\n")
end

-- The largest utilisation of a drawn edge's links (nil: none carried traffic).
local function edge_util(e, st)
  if not st then return nil end
  local best
  for _, list in ipairs { e.fwd, e.back } do
    for _, l in ipairs(list) do
      local s = st.links[l.src .. "\0" .. l.dst]
      if s and (not best or s.util > best) then best = s.util end
    end
  end
  return best
end

local function title(g, o, t)
  local p = g.params
  if g.graph_form then
    return ("%s: graph-form topology, %d nodes (no SIP/cube/PE levels: every view shows the whole graph)")
      :format(t.name, p.nodes)
  end
  if o.view == "system" then
    local layout = p.sip_topology
    if p.sip_grid_w > 0 then layout = ("%s %dx%d"):format(layout, p.sip_grid_w, p.sip_grid_h) end
    return ("%s: system, %d SIP(s), logical layout %s"):format(t.name, p.sips, layout)
  elseif o.view == "sip" then
    return ("%s: sip%d, %dx%d cubes"):format(t.name, o.sip, p.cube_w, p.cube_h)
  elseif o.view == "cube" then
    return ("%s: sip%d.cube%d, NoC, HBM controllers, SRAM, M_CPU, %d PE(s)"):format(t.name, o.sip, o.cube,
      p.pes_per_cube)
  end
  return ("%s: sip%d.cube%d.pe%d"):format(t.name, o.sip, o.cube, o.pe)
end

-- Logical neighbours of the SIP layout (system view), as sorted pairs.
local function logical_pairs(p)
  local pairs_, seen = {}, {}
  local function add(a, b)
    if a == b then return end
    if a > b then a, b = b, a end
    local k = a .. "," .. b
    if not seen[k] then
      seen[k] = true
      pairs_[#pairs_ + 1] = { a, b }
    end
  end
  local n = p.sips
  if p.sip_topology == "ring_1d" then
    for i = 0, n - 1 do add(i, (i + 1) % n) end
  elseif (p.sip_topology == "torus_2d" or p.sip_topology == "mesh_2d_no_wrap") and p.sip_grid_w > 0 then
    local w, h = p.sip_grid_w, p.sip_grid_h
    local wrap = p.sip_topology == "torus_2d"
    for r = 0, h - 1 do
      for c = 0, w - 1 do
        local i = r * w + c
        if c + 1 < w then add(i, i + 1) elseif wrap then add(i, r * w) end
        if r + 1 < h then add(i, i + w) elseif wrap then add(i, c) end
      end
    end
  end
  table.sort(pairs_, function(x, y) return x[1] < y[1] or (x[1] == y[1] and x[2] < y[2]) end)
  return pairs_
end

--- The DOT text of a view of topology t (see the top of this file).
function M.dot(t, opts)
  local o = M.options(t, opts)
  local g = graph(t)
  local nodes, edges, cls = build(t, o)
  local ids = sorted_keys(nodes)
  if #ids > M.MAX_NODES then
    fail("the %s view of topology %s has %d nodes; at most %d are drawn", o.view, t.name, #ids, M.MAX_NODES)
  end
  local st = link_stats(o.stats, t.name)

  local pos
  if g.graph_form then pos = nil
  elseif o.view == "system" then pos = layout_system(g, nodes, edges)
  elseif o.view == "sip" then pos = layout_sip(g, o, nodes, edges)
  elseif o.view == "cube" then pos = layout_cube(g, o, nodes, edges)
  else pos = layout_pe(g, nodes) end

  -- the route: drawn nodes it visits and drawn edges it takes, with their direction
  local route_nodes, route_edges = {}, {}
  local route_hops = 0
  if o.path then
    local prev
    for _, id in ipairs(o.path) do
      local c = cls[id]
      if c and nodes[c.rep] then route_nodes[c.rep] = true end
      if prev then
        local cp = cls[prev]
        if cp and c and cp.rep ~= c.rep and (cp.internal or c.internal) then
          local a, b = cp.rep, c.rep
          local fwd = a < b
          if not fwd then a, b = b, a end
          local key = a .. "\0" .. b
          local r = route_edges[key] or {}
          r[fwd and "fwd" or "back"] = true
          route_edges[key] = r
        end
      end
      prev = id
    end
    route_hops = #o.path - 1
  end

  local out = {}
  local function w(s) out[#out + 1] = s end
  local label = title(g, o, t)
  if o.path then
    label = label .. ("\nroute %s -> %s: %d hops, %d drawn"):format(o.route[1], o.route[2], route_hops,
      #sorted_keys(route_edges))
  end
  if st then label = label .. ("\nlink colours: utilisation, the largest of %d simulation(s)"):format(st.nsims) end
  w(("digraph %s {"):format(q("kernbench " .. t.name)))
  local gattrs = {
    ("label=%s"):format(q(label)), "labelloc=t", "fontname=\"Helvetica\"", "fontsize=14",
    "outputorder=edgesfirst", "bgcolor=\"white\"", "pad=0.3",
    ("class=%s"):format(q("view-" .. o.view)),
  }
  if pos then
    gattrs[#gattrs + 1] = "layout=neato"
    gattrs[#gattrs + 1] = "inputscale=72"
    gattrs[#gattrs + 1] = "overlap=true"
    gattrs[#gattrs + 1] = (o.view == "system" or o.view == "pe") and "splines=true" or "splines=line"
  else
    gattrs[#gattrs + 1] = "layout=dot"
    gattrs[#gattrs + 1] = "rankdir=LR"
  end
  w("  graph [" .. table.concat(gattrs, ", ") .. "];")
  w("  node [fontname=\"Helvetica\", fontsize=9, style=\"filled\", fillcolor=\"#f2f2f2\", color=\"#404040\", "
    .. "margin=\"0.04,0.02\"];")
  w(("  edge [color=%q, arrowsize=0.6, penwidth=1.2];"):format(LINK_COLOR))

  local minx, maxy = math.huge, -math.huge
  local maxx, miny = -math.huge, math.huge
  for _, id in ipairs(ids) do
    local n = nodes[id]
    local kind = node_class(g, id, n)
    local a = {
      ("id=%s"):format(q(id)),
      ("class=%s"):format(q(kind .. (n.internal and "" or " external") .. (route_nodes[id] and " route" or ""))),
      ("label=%s"):format(q(node_label(g, o, id, kind, n))),
      ("tooltip=%s"):format(q(node_tooltip(g, id, n, kind, st))),
    }
    local shape = SHAPE[kind]
    if pos and shape and n.internal then
      a[#a + 1] = ("shape=%s, width=%s, height=%s, fixedsize=true"):format(shape[1], num(shape[2]), num(shape[3]))
    else
      a[#a + 1] = "shape=box"
    end
    a[#a + 1] = ("fillcolor=%s"):format(q(n.internal and (FILL[kind] or "#f2f2f2") or "#ffffff"))
    if not n.internal then a[#a + 1] = "style=\"filled,dashed\"" end
    if route_nodes[id] then a[#a + 1] = ("color=%s, penwidth=2.5"):format(q(M.ROUTE_COLOR)) end
    if pos then
      local pp = pos[id]
      a[#a + 1] = ("pos=\"%s,%s!\""):format(num(pp[1]), num(pp[2]))
      minx, maxx = math.min(minx, pp[1]), math.max(maxx, pp[1])
      miny, maxy = math.min(miny, pp[2]), math.max(maxy, pp[2])
    end
    w(("  %s [%s];"):format(q(id), table.concat(a, ", ")))
  end

  for _, key in ipairs(sorted_keys(edges)) do
    local e = edges[key]
    local a, b = e.a, e.b
    local one_way_back = #e.fwd == 0
    local src, dst = a, b
    if one_way_back then src, dst = b, a end -- a one-way link keeps its direction
    local r = route_edges[key]
    local dir
    if r then
      dir = (r.fwd and r.back) and "both" or ((r.fwd == (not one_way_back)) and "forward" or "back")
    else
      dir = (#e.fwd > 0 and #e.back > 0) and "none" or "forward"
    end
    local attrs = {
      ("id=%s"):format(q(src .. "->" .. dst)),
      ("class=%s"):format(q(r and "link route" or "link")),
      ("dir=%s"):format(dir),
      ("tooltip=%s"):format(q(edge_tooltip(e, st, a, b))),
    }
    local u = edge_util(e, st)
    if r then
      attrs[#attrs + 1] = ("color=%s, penwidth=4"):format(q(M.ROUTE_COLOR))
    elseif st then
      attrs[#attrs + 1] = ("color=%s, penwidth=%s"):format(q(M.util_color(u)), num(1.5 + 3 * (u or 0)))
    end
    if o.view == "system" or o.view == "sip" then
      local bw = 0
      for _, l in ipairs(#e.fwd > 0 and e.fwd or e.back) do bw = bw + (l.bw_gbs or 0) end
      local txt = bw_text(bw)
      if u then txt = txt .. "\n" .. pct(u) end
      attrs[#attrs + 1] = ("label=%s, fontsize=8, fontname=\"Helvetica\""):format(q(txt))
    end
    w(("  %s -> %s [%s];"):format(q(src), q(dst), table.concat(attrs, ", ")))
  end

  if o.view == "system" and not g.graph_form then
    for _, pr in ipairs(logical_pairs(g.params)) do
      local a, b = "sip" .. pr[1], "sip" .. pr[2]
      if nodes[a] and nodes[b] then
        w(("  %s -> %s [id=%s, class=\"logical\", dir=none, style=dashed, color=\"#8a8ad0\", "
           .. "constraint=false, tooltip=%s];"):format(q(a), q(b), q("logical:" .. a .. "->" .. b),
          q(("logical neighbours in the %s layout of the collectives (their data crosses the switch)")
            :format(g.params.sip_topology))))
      end
    end
  end

  if st or o.path then
    local rows = {}
    if st then
      rows[#rows + 1] = '<TR><TD COLSPAN="2"><B>link utilisation</B></TD></TR>'
      local lo = 0
      for _, s in ipairs(M.SCALE) do
        local hi = s[1] == math.huge and 1 or s[1]
        rows[#rows + 1] = ('<TR><TD BGCOLOR="%s" WIDTH="28"> </TD><TD ALIGN="LEFT">%d%% - %d%%</TD></TR>')
          :format(s[2], math.floor(lo * 100 + 0.5), math.floor(hi * 100 + 0.5))
        lo = hi
      end
      rows[#rows + 1] = ('<TR><TD BGCOLOR="%s" WIDTH="28"> </TD><TD ALIGN="LEFT">no traffic</TD></TR>')
        :format(M.NO_TRAFFIC)
    end
    if o.path then
      rows[#rows + 1] = ('<TR><TD BGCOLOR="%s" WIDTH="28"> </TD><TD ALIGN="LEFT">route</TD></TR>')
        :format(M.ROUTE_COLOR)
    end
    local lpos = ""
    if pos then lpos = (", pos=\"%s,%s!\""):format(num(maxx + 150), num(miny)) end
    w(("  \"legend\" [id=\"legend\", class=\"legend\", shape=plaintext, style=\"\", tooltip=\"legend\"%s, "
       .. "label=<<TABLE BORDER=\"1\" CELLBORDER=\"0\" CELLSPACING=\"2\" CELLPADDING=\"2\">%s</TABLE>>];")
      :format(lpos, table.concat(rows)))
  end
  w("}")
  return table.concat(out, "\n") .. "\n"
end

-- ---------------------------------------------------------------------------
-- Rendering through Graphviz.

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

local function read_all(path, mode)
  local f = io.open(path, mode or "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function have_dot()
  return os.execute("command -v dot >/dev/null 2>&1") == true
end

M.MISSING_DOT = "Graphviz's 'dot' program was not found on PATH: install the Debian package graphviz " ..
                "(apt-get install graphviz)"

--- Renders DOT text as "svg" or "png" with Graphviz's dot; returns the bytes.
function M.render(dot_text, format)
  if format ~= "svg" and format ~= "png" then
    fail("--format %s: expected svg or png to render (dot is the text itself)", tostring(format))
  end
  if not have_dot() then fail(M.MISSING_DOT) end
  local input, output, errs = os.tmpname(), os.tmpname(), os.tmpname()
  local function cleanup()
    os.remove(input)
    os.remove(output)
    os.remove(errs)
  end
  local f = io.open(input, "wb")
  if not f then cleanup() fail("cannot write a temporary file %s", input) end
  f:write(dot_text)
  f:close()
  local ok = os.execute(("dot -T%s -o %s %s 2>%s"):format(format, shell_quote(output), shell_quote(input),
                                                         shell_quote(errs)))
  local bytes = read_all(output)
  local err = read_all(errs) or ""
  cleanup()
  if ok ~= true or not bytes or #bytes == 0 then
    fail("Graphviz's dot failed to render the %s: %s", format, err ~= "" and err:gsub("%s+$", "") or "no output")
  end
  return bytes
end

-- FNV-1a 64 of a string, as 16 hex digits.
local function fnv(s)
  local h = -3750763034362895579
  for i = 1, #s do h = (h ~ s:byte(i)) * 1099511628211 end
  return ("%016x"):format(h)
end

local dot_version
local function graphviz_version()
  if dot_version == nil then
    local p = io.popen("dot -V 2>&1")
    dot_version = p and p:read("a") or ""
    if p then p:close() end
  end
  return dot_version
end

--- The cache directory: $XDG_CACHE_HOME/kernbench/draw, else ~/.cache/kernbench/draw
-- (nil when neither is set).
function M.cache_dir()
  local base = os.getenv("XDG_CACHE_HOME")
  if not base or base == "" then
    local home = os.getenv("HOME")
    if not home or home == "" then return nil end
    base = home .. "/.cache"
  end
  return base .. "/kernbench/draw"
end

--- The file name of a rendering in the cache: the topology digest, the view
-- and a hash of the DOT text (which holds every option, the stats and the
-- route) and of Graphviz's version.
function M.cache_name(t, o, dot_text, format)
  local digest = require("kernbench.results").topology_digest(t):gsub("^fnv1a64:", "")
  local where = o.view
  if o.view ~= "system" and o.sip then where = where .. "-sip" .. o.sip end
  if (o.view == "cube" or o.view == "pe") and o.cube then where = where .. "-cube" .. o.cube end
  if o.view == "pe" and o.pe then where = where .. "-pe" .. o.pe end
  return ("%s-%s-%s.%s"):format(digest, where, fnv(dot_text .. "\0" .. format .. "\0" .. graphviz_version()),
                                format)
end

--- The bytes of the view in `format` ("dot", "svg", "png"), from the cache
-- when `cache` is true and the same rendering is there (then written there
-- atomically). Returns bytes, the cache file (or nil), and whether it was a hit.
function M.draw(t, opts, format, cache)
  local o = M.options(t, opts)
  local text = M.dot(t, opts)
  if format == "dot" then return text, nil, false end
  if format ~= "svg" and format ~= "png" then
    fail("--format %s: expected one of %s", tostring(format), table.concat(M.FORMATS, ", "))
  end
  local dir = cache and M.cache_dir()
  local path
  if dir then
    path = dir .. "/" .. M.cache_name(t, o, text, format)
    local hit = read_all(path)
    if hit and #hit > 0 then return hit, path, true end
  end
  local bytes = M.render(text, format)
  if path and os.execute("mkdir -p " .. shell_quote(dir) .. " 2>/dev/null") == true then
    local ok = pcall(kb.write_file, path, bytes) -- a cache that cannot be written is no error
    if not ok then path = nil end
  else
    path = nil
  end
  return bytes, path, false
end

-- ---------------------------------------------------------------------------
-- `kernbench draw`.

local USAGE_LINE = "usage: kernbench [-t T] [--set K=V] draw [--view system|sip|cube|pe] [--sip N] [--cube N] " ..
                   "[--pe N]\n         [--format svg|png|dot] [--stats STATS.json] [--route SRC DST] [-o FILE]"

function M.usage()
  return table.concat({
    USAGE_LINE,
    "",
    "Draws the compiled topology with Graphviz (Debian package graphviz) as SVG,",
    "PNG or DOT. Node ids in the output are topology node ids (docs/draw.md).",
    "",
    "options:",
    "  --view V       system (default: SIPs, IO chiplets, the switch and the",
    "                 logical SIP layout), sip (one SIP's IO chiplets and cube",
    "                 grid), cube (one cube's NoC routers, HBM controllers, SRAM,",
    "                 M_CPU, PEs and UCIe ports) or pe (one PE's engines); without",
    "                 --view, the deepest of --sip/--cube/--pe given chooses it",
    "  --sip N        the SIP of the sip, cube and pe views (default 0)",
    "  --cube N       the cube of the cube and pe views (default 0)",
    "  --pe N         the PE of the pe view (default 0)",
    "  --format F     svg (default), png or dot; without it, -o FILE's extension",
    "                 (.svg, .png, .dot, .gv) chooses",
    "  --stats FILE   colour links by utilisation from the statistics of a run",
    "                 (kernbench --stats-json FILE ...), with a legend",
    "  --route SRC DST  highlight the route the router picks from node SRC to",
    "                 node DST (t:path; ids as in kb.topology.load():nodes())",
    "  -o, --output FILE  write to FILE (written beside it and renamed when",
    "                 complete); default standard output, which must not be a",
    "                 terminal for png",
    "  --no-cache     render again, without reading or writing the cache",
    "  -t, --topology T  topology file or shipped name (default: the global",
    "                 --topology, else \"default\")",
    "  --set K=V      override a topology field (repeatable)",
    "  -h, --help     print this help and exit",
    "",
    "Renderings (svg, png) are cached by topology digest and options under",
    "$XDG_CACHE_HOME/kernbench/draw/ (default ~/.cache/kernbench/draw/);",
    "delete that directory to clear the cache.",
    "",
    "exit status: 0 drawn, 1 Graphviz missing or failing, an output not",
    "written, 2 usage error (bad option or value, unknown node, index out of",
    "range, a topology or stats file that cannot be read)",
    "",
  }, "\n")
end

-- A usage error of `kernbench draw`: raised, reported by the command line
-- (kernbench.usage: one line, the hint, exit status 2).
local function usage_error(msg)
  require("kernbench.usage").raise(msg, "draw", "usage: kernbench [-t T] [--set K=V] draw [--view V] [--sip N] " ..
    "[--cube N] [--pe N] [--format F] [--stats FILE] [--route SRC DST] [-o FILE]\n" ..
    "run 'kernbench draw --help' for the options")
end

--- Parses args into options, or raises {usage = message}.
function M.parse(args)
  local o = { sets = {} }
  local seen = {}
  local i = 1
  local function uerr(fmt, ...) error({ usage = fmt:format(...) }, 0) end
  while i <= #args do
    local a = args[i]
    local key, inline = a:match("^(%-%-[%w-]+)=(.*)$")
    if key then a = key end
    local function value(flag)
      local v = inline
      if v == nil then
        i = i + 1
        v = args[i]
      end
      if v == nil or v == "" then uerr("option '%s' needs an argument", flag) end
      return v
    end
    local function once(flag)
      if seen[flag] then uerr("option '%s' given twice", flag) end
      seen[flag] = true
    end
    local function index(flag)
      once(flag)
      local v = value(flag)
      if not v:match("^%d+$") or #v > 9 then uerr("%s '%s': expected a whole number >= 0", flag, v) end
      return tonumber(v)
    end
    if (a == "-h" or a == "--help") and not inline then
      o.help = true
    elseif a == "--view" then
      once(a)
      o.view = value(a)
      if not is_in(M.VIEWS, o.view) then
        uerr("--view '%s': expected one of %s", o.view, table.concat(M.VIEWS, ", "))
      end
    elseif a == "--sip" then o.sip = index(a)
    elseif a == "--cube" then o.cube = index(a)
    elseif a == "--pe" then o.pe = index(a)
    elseif a == "--format" then
      once(a)
      o.format = value(a)
      if not is_in(M.FORMATS, o.format) then
        uerr("--format '%s': expected one of %s", o.format, table.concat(M.FORMATS, ", "))
      end
    elseif a == "--stats" then
      once(a)
      o.stats_file = value(a)
    elseif a == "--route" then
      once(a)
      if inline then uerr("--route takes two arguments: --route SRC DST") end
      local s, d = args[i + 1], args[i + 2]
      if s == nil or d == nil or s == "" or d == "" then
        uerr("--route needs two node ids: --route SRC DST")
      end
      o.route = { s, d }
      i = i + 2
    elseif a == "-o" or a == "--output" then
      once("--output")
      o.output = value(a)
    elseif a == "--no-cache" and not inline then
      o.no_cache = true
    elseif a == "-t" or a == "--topology" then
      once("--topology")
      o.topology = value(a)
    elseif a == "--set" then
      cli_opts.add_set(o.sets, value(a))
    elseif a == "--profile" then
      cli_opts.add_profile(o.sets, value(a))
    else
      cli_opts.reject(a, args[i])
    end
    i = i + 1
  end
  -- the view: given, or the deepest level an index names
  local deepest = o.pe and "pe" or o.cube and "cube" or o.sip and "sip" or "system"
  if not o.view then
    o.view = deepest
  else
    local applies = { system = {}, sip = { sip = true }, cube = { sip = true, cube = true },
                      pe = { sip = true, cube = true, pe = true } }
    for _, k in ipairs { "sip", "cube", "pe" } do
      if o[k] and not applies[o.view][k] then
        uerr("--%s does not apply to --view %s", k, o.view)
      end
    end
  end
  if not o.format then
    local ext = o.output and o.output:match("%.(%w+)$")
    ext = ext and ext:lower()
    o.format = (ext == "png" and "png") or ((ext == "dot" or ext == "gv") and "dot") or "svg"
  end
  return o
end

local function stdout_is_terminal()
  return os.execute("test -t 1") == true
end

function M.main(args)
  args = args or {}
  local ok, o = pcall(M.parse, args)
  if not ok then
    if type(o) == "table" and o.usage then return usage_error(o.usage) end
    error(o, 0)
  end
  if o.help then
    io.write(M.usage())
    return 0
  end
  -- the topology
  local lok, t = pcall(require("kernbench.probe").load_topology, { topology = o.topology, sets = o.sets })
  if not lok then return usage_error(tostring(t)) end
  -- the stats
  local stats
  if o.stats_file then
    local text = read_all(o.stats_file)
    if not text then
      local _, why = io.open(o.stats_file, "rb")
      why = tostring(why or "cannot be read")
      if why:sub(1, #o.stats_file + 2) == o.stats_file .. ": " then why = why:sub(#o.stats_file + 3) end
      return usage_error(("--stats %s: %s"):format(o.stats_file, why))
    end
    local dok, doc = pcall(require("kernbench.json").decode, text)
    if not dok then return usage_error(("--stats %s: %s"):format(o.stats_file, tostring(doc))) end
    if type(doc) ~= "table" or type(doc.simulations) ~= "table" then
      return usage_error(("--stats %s: not a statistics file of kernbench --stats-json (no 'simulations' list)")
        :format(o.stats_file))
    end
    stats = doc
  end
  local opts = { view = o.view, sip = o.sip, cube = o.cube, pe = o.pe, stats = stats, route = o.route }
  local cok, err = pcall(M.options, t, opts)
  if not cok then return usage_error(tostring(err)) end
  -- the output, checked before anything is rendered
  local out
  if o.output and o.output ~= "-" then
    local ook, f = pcall(kb.open_output, o.output)
    if not ook then
      local why = tostring(f):gsub("^kb%.open_output: ", "")
      if why:sub(1, #o.output + 2) == o.output .. ": " then why = why:sub(#o.output + 3) end
      return usage_error(("-o %s: %s"):format(o.output, why))
    end
    out = f
  elseif o.format == "png" and stdout_is_terminal() then
    return usage_error("refusing to write PNG to a terminal: give -o FILE.png or redirect the output")
  end
  local rok, bytes = pcall(M.draw, t, opts, o.format, not o.no_cache)
  if not rok then
    if out then out:abort() end
    io.stderr:write("kernbench draw: ", tostring(bytes), "\n")
    return 1
  end
  if out then
    out:write(bytes)
    local wok, werr = pcall(out.close, out)
    if not wok then
      io.stderr:write("kernbench draw: ", tostring(werr), "\n")
      return 1
    end
  else
    io.stdout:write(bytes)
    io.stdout:flush()
  end
  return 0
end

return M
