--- kernbench web: the compiled topology as an interactive page served on
-- 127.0.0.1 (docs/web.md). The HTTP server is C (kernbench.httpd,
-- src/cli/web.c: libmicrohttpd, one thread); this module is its command
-- line, its request handler and the JSON endpoints:
--
--   GET /                           the page (web/index.html, app.js, style.css)
--   GET /api/topology[?view=...]    summary, and the items and links of a view
--   GET /api/node/<id>              a node (or a SIP, cube or PE) and its links
--   GET /api/route?src=&dst=[&view=]  the route the router picks
--   GET /api/svg?view=system|sip|cube|pe&sip=&cube=&pe=[&src=&dst=]
--                                   the view drawn by kernbench.draw
--
-- M.app(t, opts) builds the handler without a server, for tests.
local json = require "kernbench.json"
local cli_opts = require "kernbench.cli_opts"

local M = {}

M.DEFAULT_PORT = 8765
M.MAX_ID = 200        -- the longest node id a request may name
M.SVG_CACHE = 64      -- views kept rendered
-- The page's files, served by exact name only (no path from a request ever
-- reaches the file system).
M.ASSETS = {
  ["index.html"] = "text/html; charset=utf-8",
  ["app.js"] = "text/javascript; charset=utf-8",
  ["style.css"] = "text/css; charset=utf-8",
}

local function dir_of(file) return file:match("^(.*)/[^/]*$") or "." end

-- The page sits beside the Lua library: <lua>/../web, in the source tree
-- and after `make install` (share/kernbench/web).
local here = debug.getinfo(1, "S").source:match("^@(.*)$")
M.assets_dir = here and (dir_of(dir_of(dir_of(here))) .. "/web") or "web"

local obj = json.obj

-- ---------------------------------------------------------------------------
-- Responses.

local JSON_TYPE = "application/json"

local function clean(msg)
  msg = tostring(msg):gsub("[^\32-\126]", "?")
  if #msg > 300 then msg = msg:sub(1, 300) .. "..." end
  return msg
end

local function reply(status, doc) return status, JSON_TYPE, json.encode(doc) .. "\n" end

local function fail(status, msg)
  return reply(status, obj({ "error", clean(msg) }, { "status", status }))
end

-- A node id as a request may give it: letters, digits, _ . - and not too long.
local function valid_id(id)
  return type(id) == "string" and #id > 0 and #id <= M.MAX_ID and id:match("^[%w_.%-]+$") ~= nil
end

-- ---------------------------------------------------------------------------
-- Statistics (--stats FILE: a `kernbench --stats-json` file).

--- Reads a statistics file into {path, sims, links = {["src->dst"] = {...}},
-- components = {[id] = {...}}}: for every link and component the largest
-- utilisation over the file's simulations of this topology (all of them
-- when none names it), with the simulation it came from. Raises a message
-- when the file cannot be read or is not one.
function M.load_stats(path, topo_name)
  local f, err = io.open(path, "rb")
  if not f then error(("--stats %s: %s"):format(path, err), 0) end
  local text = f:read("a")
  f:close()
  local ok, doc = pcall(json.decode, text)
  if not ok then error(("--stats %s: %s"):format(path, doc), 0) end
  if type(doc) ~= "table" or type(doc.simulations) ~= "table" then
    error(("--stats %s: not a statistics file (no \"simulations\" list; write one with --stats-json)"):format(path), 0)
  end
  local sims = {}
  for _, s in ipairs(doc.simulations) do
    if type(s) == "table" and s.topology == topo_name then sims[#sims + 1] = s end
  end
  local matched = #sims > 0
  if not matched then
    for _, s in ipairs(doc.simulations) do if type(s) == "table" then sims[#sims + 1] = s end end
  end
  local st = { path = path, doc = doc, sims = #sims, matched = matched, links = {}, components = {},
               interrupted = doc.interrupted == true }
  local function better(old, util) return not old or (tonumber(util) or 0) > old.util end
  for _, s in ipairs(sims) do
    for _, l in ipairs(type(s.links) == "table" and s.links or {}) do
      if type(l) == "table" and type(l.src) == "string" and type(l.dst) == "string" then
        local key = l.src .. "->" .. l.dst
        if better(st.links[key], l.util) then
          st.links[key] = { util = tonumber(l.util) or 0, busy_ns = l.busy_ns, bytes = l.bytes,
                            flits = l.flits, peak_queue_ns = l.peak_queue_ns, sim = s.sim }
        end
      end
    end
    for _, c in ipairs(type(s.components) == "table" and s.components or {}) do
      if type(c) == "table" and type(c.id) == "string" and better(st.components[c.id], c.util) then
        st.components[c.id] = { util = tonumber(c.util) or 0, busy_ns = c.busy_ns, txns = c.txns,
                                bytes = c.bytes, sim = s.sim }
      end
    end
  end
  return st
end

local function link_util(st, src, dst)
  local l = st and st.links[src .. "->" .. dst]
  if not l then return nil end
  return obj({ "util", l.util }, { "busy_ns", l.busy_ns }, { "bytes", l.bytes }, { "flits", l.flits },
    { "peak_queue_ns", l.peak_queue_ns }, { "sim", l.sim })
end

-- ---------------------------------------------------------------------------
-- Views: what each level shows. A view's items are topology nodes, or groups
-- standing for a SIP ("sip0"), a cube ("sip0.cube3") or a PE
-- ("sip0.cube3.pe5") drawn as one box; its links join two items.

M.VIEWS = { system = true, sip = true, cube = true, pe = true }

--- The item of view v a node id belongs to, or nil when it is outside it.
function M.item_of(v, id)
  if v.view == "system" then
    local sip = id:match("^(sip%d+)%.")
    return sip or id
  end
  local prefix
  if v.view == "sip" then prefix = ("sip%d."):format(v.sip)
  elseif v.view == "cube" then prefix = ("sip%d.cube%d."):format(v.sip, v.cube)
  else prefix = ("sip%d.cube%d.pe%d."):format(v.sip, v.cube, v.pe) end
  if id:sub(1, #prefix) ~= prefix then return nil end
  local rest = id:sub(#prefix + 1)
  if v.view == "sip" then
    local cube = rest:match("^(cube%d+)%.")
    if cube then return prefix .. cube end
  elseif v.view == "cube" then
    local pe = rest:match("^(pe%d+)%.")
    if pe then return prefix .. pe end
  end
  return id
end

local function group_kind(id)
  if id:match("^sip%d+$") then return "sip" end
  if id:match("^sip%d+%.cube%d+$") then return "cube" end
  if id:match("^sip%d+%.cube%d+%.pe%d+$") then return "pe" end
  return "group"
end

-- ---------------------------------------------------------------------------
-- The application: a topology and what is derived from it once.

local App = {}
App.__index = App

--- The handler of a server for topology t. opts: stats (M.load_stats's
-- result), draw (a module with dot and render; default: kernbench.draw if
-- it loads), assets_dir.
function M.app(t, opts)
  opts = opts or {}
  local self = setmetatable({ t = t, stats = opts.stats, params = t:params(), svg_cache = {},
                              svg_order = {}, assets = {}, assets_dir = opts.assets_dir or M.assets_dir }, App)
  self.ids = t:nodes()
  self.is_node = {}
  for _, id in ipairs(self.ids) do self.is_node[id] = true end
  local ok, digest = pcall(function() return require("kernbench.results").topology_digest(t) end)
  self.digest = ok and digest or nil
  if opts.draw ~= nil then
    self.draw = opts.draw or nil
  else
    local dok, draw = pcall(require, "kernbench.draw")
    self.draw = dok and draw or nil
    self.draw_error = not dok and tostring(draw) or nil
  end
  return self
end

--- Reads the page's files; raises naming the first one missing.
function App:load_assets()
  for name, ctype in pairs(M.ASSETS) do
    local path = self.assets_dir .. "/" .. name
    local f, err = io.open(path, "rb")
    if not f then
      error(("the page's file %s is missing (%s); reinstall kernbench (make install)"):format(path, err), 0)
    end
    self.assets[name] = { ctype = ctype, body = f:read("a") }
    f:close()
  end
end

-- Links into each node (built on first use: one pass over every edge).
function App:in_edges(id)
  if not self.ins then
    local ins = {}
    for _, src in ipairs(self.ids) do
      for _, e in ipairs(self.t:edges(src)) do
        local l = ins[e.dst]
        if not l then l = {} ins[e.dst] = l end
        l[#l + 1] = e
      end
    end
    self.ins = ins
  end
  return self.ins[id] or {}
end

local function link_doc(self, e)
  return obj({ "src", e.src }, { "dst", e.dst }, { "id", e.src .. "->" .. e.dst }, { "kind", e.kind },
    { "bw_gbs", e.bw_gbs }, { "latency_ns", e.prop_ns }, { "length_mm", e.mm },
    { "utilisation", link_util(self.stats, e.src, e.dst) })
end

-- The view named by a request's arguments, or nil, message.
function App:view_of(args)
  local v = { view = args.view or "system" }
  if not M.VIEWS[v.view] then
    return nil, ("view must be system, sip, cube or pe, got '%s'"):format(v.view)
  end
  local p = self.params
  local limits = { sip = p.sips, cube = p.cubes_per_sip, pe = p.pes_per_cube }
  local needs = { system = {}, sip = { "sip" }, cube = { "sip", "cube" }, pe = { "sip", "cube", "pe" } }
  for _, k in ipairs(needs[v.view]) do
    if limits[k] == 0 then
      return nil, ("topology %s has no SIPs, cubes or PEs: only the system view"):format(self.t.name)
    end
    local s = args[k] or "0"
    local n = s:match("^%d+$") and tonumber(s)
    if not n or n >= limits[k] then
      return nil, ("%s must be a whole number from 0 to %d, got '%s'"):format(k, limits[k] - 1, s)
    end
    v[k] = math.tointeger(n)
  end
  return v
end

--- The items and links of view v by the prefix rule alone (M.item_of): what
-- /api/topology lists when kernbench.draw is not available.
function App:plain_view_items(v)
  local items, order, links, lorder = {}, {}, {}, {}
  for _, id in ipairs(self.ids) do
    local it = M.item_of(v, id)
    if it then
      local rec = items[it]
      if not rec then
        rec = { id = it, nodes = 0, group = it ~= id }
        items[it] = rec
        order[#order + 1] = it
      end
      rec.nodes = rec.nodes + 1
      if not rec.group then rec.kind = self.t:node(id).kind end
      for _, e in ipairs(self.t:edges(id)) do
        local to = M.item_of(v, e.dst)
        if to and to ~= it then
          local key = it .. "->" .. to
          local l = links[key]
          if not l then
            l = { src = it, dst = to, n = 0, bw = 0, kinds = {} }
            links[key] = l
            lorder[#lorder + 1] = key
          end
          l.n = l.n + 1
          l.bw = l.bw + (e.bw_gbs or 0)
          l.kinds[e.kind] = true
        end
      end
    end
  end
  local out_items, out_links = {}, {}
  for i, id in ipairs(order) do
    local r = items[id]
    out_items[i] = obj({ "id", id }, { "kind", r.group and group_kind(id) or r.kind }, { "group", r.group },
      { "nodes", r.nodes })
  end
  for i, key in ipairs(lorder) do
    local l = links[key]
    local kinds = {}
    for k in pairs(l.kinds) do kinds[#kinds + 1] = k end
    table.sort(kinds)
    out_links[i] = obj({ "src", l.src }, { "dst", l.dst }, { "id", key }, { "kind", table.concat(kinds, ",") },
      { "links", l.n }, { "bw_gbs", l.bw }, { "utilisation", link_util(self.stats, l.src, l.dst) })
  end
  return out_items, out_links
end

-- The nodes and edges kernbench.draw draws for view v, read from its DOT
-- text (every drawn node and edge carries its id and class there).
function App:drawn(v)
  local key = table.concat({ v.view, v.sip or "", v.cube or "", v.pe or "" }, "|")
  self.drawn_cache = self.drawn_cache or {}
  local d = self.drawn_cache[key]
  if d then return d end
  local dot = self.draw.dot(self.t, { view = v.view, sip = v.sip, cube = v.cube, pe = v.pe })
  d = { nodes = {}, edges = {} }
  for line in dot:gmatch("[^\n]+") do
    local src, dst, eid, ecls = line:match('^%s*"([^"]*)" %-> "([^"]*)" %[id="([^"]*)", class="([^"]*)"')
    if src then
      if (" " .. ecls .. " "):find(" link ", 1, true) then
        d.edges[#d.edges + 1] = { id = eid, src = src, dst = dst }
      end
    else
      local nid, ncls = line:match('^%s*"[^"]*" %[id="([^"]*)", class="([^"]*)"')
      if nid and ncls ~= "legend" then d.nodes[#d.nodes + 1] = { id = nid, class = ncls } end
    end
  end
  self.drawn_cache[key] = d
  return d
end

--- The items and links of view v: what kernbench.draw draws, each drawn link
-- with the topology links it stands for (both directions).
function App:view_items(v)
  if not self.draw then return self:plain_view_items(v) end
  local d = self:drawn(v)
  local drawn = {}
  for _, n in ipairs(d.nodes) do drawn[n.id] = true end
  local rep, count = {}, {}
  for _, id in ipairs(self.ids) do -- the drawn node standing for id: itself or its longest drawn prefix
    local p = id
    while p and not drawn[p] do p = p:match("^(.*)%.[^.]*$") end
    if p then
      rep[id] = p
      count[p] = (count[p] or 0) + 1
    end
  end
  local by_pair = {}
  for _, e in ipairs(d.edges) do
    local rec = { e = e, fwd = {}, back = {}, kinds = {} }
    by_pair[e.src .. "\0" .. e.dst] = rec
    by_pair[e.dst .. "\0" .. e.src] = rec
  end
  for _, id in ipairs(self.ids) do
    local ru = rep[id]
    if ru then
      for _, l in ipairs(self.t:edges(id)) do
        local rv = rep[l.dst]
        local rec = rv and rv ~= ru and by_pair[ru .. "\0" .. rv]
        if rec then
          local list = rec.e.src == ru and rec.fwd or rec.back
          list[#list + 1] = l
          rec.kinds[l.kind] = true
        end
      end
    end
  end
  local items, links = {}, {}
  for i, n in ipairs(d.nodes) do
    local kind = n.class:match("^(%S+)") or "node"
    items[i] = obj({ "id", n.id }, { "kind", kind }, { "group", not self.is_node[n.id] },
      { "external", (" " .. n.class .. " "):find(" external ", 1, true) ~= nil }, { "nodes", count[n.id] or 0 })
  end
  local st = self.stats
  for i, e in ipairs(d.edges) do
    local rec = by_pair[e.src .. "\0" .. e.dst]
    local bw, bw_back, lat, best = 0, 0, 0, nil
    for _, l in ipairs(rec.fwd) do bw = bw + (l.bw_gbs or 0) lat = math.max(lat, l.prop_ns or 0) end
    for _, l in ipairs(rec.back) do bw_back = bw_back + (l.bw_gbs or 0) lat = math.max(lat, l.prop_ns or 0) end
    if st then
      for _, list in ipairs { rec.fwd, rec.back } do
        for _, l in ipairs(list) do
          local u = st.links[l.src .. "->" .. l.dst]
          if u and (not best or u.util > best.u.util) then best = { u = u, l = l } end
        end
      end
    end
    local kinds = {}
    for k in pairs(rec.kinds) do kinds[#kinds + 1] = k end
    table.sort(kinds)
    links[i] = obj({ "src", e.src }, { "dst", e.dst }, { "id", e.id }, { "kind", table.concat(kinds, ",") },
      { "links", #rec.fwd }, { "links_back", #rec.back }, { "bw_gbs", bw }, { "bw_back_gbs", bw_back },
      { "latency_ns", lat },
      { "utilisation", best and obj({ "util", best.u.util }, { "link", best.l.src .. "->" .. best.l.dst },
        { "busy_ns", best.u.busy_ns }, { "bytes", best.u.bytes }, { "peak_queue_ns", best.u.peak_queue_ns },
        { "sim", best.u.sim }) or nil })
  end
  return items, links
end

-- ---------------------------------------------------------------------------
-- Endpoints.

function App:api_topology(args)
  local v, err = self:view_of(args)
  if not v then return fail(400, err) end
  local t, p = self.t, self.params
  local kinds, korder = {}, {}
  for _, id in ipairs(self.ids) do
    local k = t:node(id).kind
    if not kinds[k] then korder[#korder + 1] = k kinds[k] = 0 end
    kinds[k] = kinds[k] + 1
  end
  table.sort(korder)
  local kind_counts = {}
  for i, k in ipairs(korder) do kind_counts[i] = { k, kinds[k] } end
  local sips = {}
  for s = 0, p.sips - 1 do sips[#sips + 1] = ("sip%d"):format(s) end
  local iok, items, links = pcall(self.view_items, self, v)
  if not iok then return fail(500, items) end
  local st = self.stats
  return reply(200, obj(
    { "name", t.name }, { "file", t.file }, { "digest", self.digest },
    { "counts", obj({ "sips", p.sips }, { "cubes_per_sip", p.cubes_per_sip }, { "cubes", p.sips * p.cubes_per_sip },
      { "pes_per_cube", p.pes_per_cube }, { "pes", p.sips * p.cubes_per_sip * p.pes_per_cube },
      { "io_per_sip", p.io_per_sip }, { "nodes", p.nodes }, { "links", p.edges }) },
    { "sip_topology", p.sip_topology }, { "cube_mesh", obj({ "w", p.cube_w }, { "h", p.cube_h }) },
    { "node_kinds", #kind_counts > 0 and obj(table.unpack(kind_counts)) or obj() },
    { "sips", sips },
    { "stats", st and obj({ "file", st.path }, { "simulations", st.sims }, { "same_topology", st.matched },
      { "interrupted", st.interrupted }) or nil },
    { "draw", self.draw ~= nil },
    { "view", obj({ "view", v.view }, { "sip", v.sip }, { "cube", v.cube }, { "pe", v.pe }) },
    { "nodes", items }, { "links", links }))
end

-- A SIP, cube, PE or other group of nodes ("sip0.cube0.hbm_ctrl"): what it holds.
function App:group_doc(id)
  local prefix = id .. "."
  local kinds, korder, n, busiest = {}, {}, 0, nil
  local st = self.stats
  for _, nid in ipairs(self.ids) do
    if nid:sub(1, #prefix) == prefix then
      n = n + 1
      local k = self.t:node(nid).kind
      if not kinds[k] then korder[#korder + 1] = k kinds[k] = 0 end
      kinds[k] = kinds[k] + 1
      local c = st and st.components[nid]
      if c and (not busiest or c.util > busiest.util) then busiest = { id = nid, util = c.util } end
    end
  end
  if n == 0 then return nil end
  table.sort(korder)
  local kc = {}
  for i, k in ipairs(korder) do kc[i] = { k, kinds[k] } end
  return obj({ "id", id }, { "kind", group_kind(id) }, { "group", true }, { "nodes", n },
    { "node_kinds", obj(table.unpack(kc)) },
    { "busiest", busiest and obj({ "id", busiest.id }, { "util", busiest.util }) or nil })
end

function App:api_node(id)
  if not valid_id(id) then
    return fail(400, ("bad node id '%s': letters, digits, '_', '.' and '-', at most %d"):format(id, M.MAX_ID))
  end
  if not self.is_node[id] then
    local g = self:group_doc(id)
    if g then return reply(200, g) end
    return fail(404, ("no node '%s' in topology %s"):format(id, self.t.name))
  end
  local n = self.t:node(id)
  local outs, ins = {}, {}
  for i, e in ipairs(self.t:edges(id)) do outs[i] = link_doc(self, e) end
  for i, e in ipairs(self:in_edges(id)) do ins[i] = link_doc(self, e) end
  local c = self.stats and self.stats.components[id]
  local attrs = n.attrs or {}
  return reply(200, obj({ "id", n.id }, { "kind", n.kind }, { "impl", n.impl }, { "role", n.role },
    { "sip", n.sip }, { "cube", n.cube }, { "pe", n.pe }, { "io", n.io },
    { "pos_mm", n.pos_mm }, { "attrs", next(attrs) and attrs or obj() },
    { "utilisation", c and obj({ "util", c.util }, { "busy_ns", c.busy_ns }, { "txns", c.txns },
      { "bytes", c.bytes }, { "sim", c.sim }) or nil },
    { "links_out", outs }, { "links_in", ins }))
end

M.ROUTE_VIEWS = { all = true, data = true, memory = true, ["local"] = true }

function App:api_route(args)
  local src, dst = args.src, args.dst
  if not src or not dst or src == "" or dst == "" then
    return fail(400, "a route needs two nodes: /api/route?src=NODE&dst=NODE[&view=all|data|memory|local]")
  end
  for _, id in ipairs { src, dst } do
    if not valid_id(id) then return fail(400, ("bad node id '%s'"):format(id)) end
    if not self.is_node[id] then return fail(404, ("no node '%s' in topology %s"):format(id, self.t.name)) end
  end
  local view = args.view
  if view ~= nil and not M.ROUTE_VIEWS[view] then
    return fail(400, ("route view must be all, data, memory or local, got '%s'"):format(view))
  end
  local t = self.t
  local ok, nodes = pcall(t.path, t, src, dst, view)
  if not ok then return fail(404, nodes) end
  local edges = t:path_edges(src, dst, view)
  local links, bn = {}, nil
  for i, e in ipairs(edges) do
    links[i] = link_doc(self, e)
    if (e.bw_gbs or 0) > 0 and (not bn or e.bw_gbs < bn) then bn = e.bw_gbs end
  end
  local lok, lat = pcall(t.path_latency_ns, t, src, dst, view)
  return reply(200, obj({ "src", src }, { "dst", dst }, { "view", view or "default" }, { "hops", #edges },
    { "nodes", nodes }, { "links", links }, { "bottleneck_bw_gbs", bn },
    { "latency_ns", lok and lat or nil }))
end

function App:api_svg(args)
  local v, err = self:view_of(args)
  if not v then return fail(400, err) end
  local route
  if args.src or args.dst then
    local src, dst = args.src or "", args.dst or ""
    for _, id in ipairs { src, dst } do
      if not valid_id(id) then return fail(400, ("bad node id '%s' (src and dst go together)"):format(id)) end
      if not self.is_node[id] then return fail(404, ("no node '%s' in topology %s"):format(id, self.t.name)) end
    end
    route = { src, dst }
  end
  if not self.draw then
    return fail(501, "not implemented: the drawing module kernbench.draw is not available" ..
      (self.draw_error and (" (" .. self.draw_error:match("^[^\n]*") .. ")") or ""))
  end
  local key = table.concat({ v.view, v.sip or "", v.cube or "", v.pe or "", route and route[1] or "",
                             route and route[2] or "" }, "|")
  local svg = self.svg_cache[key]
  if not svg then
    local ok, dot = pcall(self.draw.dot, self.t, { view = v.view, sip = v.sip, cube = v.cube, pe = v.pe,
                                                   stats = self.stats and self.stats.doc or nil, route = route })
    if not ok then return fail(route and 404 or 500, dot) end
    local rok, out = pcall(self.draw.render, dot, "svg")
    if not rok then
      local missing = self.draw.MISSING_DOT and tostring(out):find(self.draw.MISSING_DOT, 1, true)
      return fail(missing and 501 or 500, (missing and "not implemented: " or "") .. tostring(out))
    end
    svg = out
    if #self.svg_order >= M.SVG_CACHE then self.svg_cache[table.remove(self.svg_order, 1)] = nil end
    self.svg_cache[key] = svg
    self.svg_order[#self.svg_order + 1] = key
  end
  return 200, "image/svg+xml", svg
end

--- handle(method, path, args) -> status, content type, body: what the
-- server sends (path is already percent-decoded, args the query).
function App:handle(method, path, args)
  local _ = method -- GET or HEAD (the server refuses the others)
  args = args or {}
  for k, v in pairs(args) do
    if #k > 32 or #v > 2 * M.MAX_ID then return fail(400, ("query parameter '%s' is too long"):format(k:sub(1, 32))) end
  end
  if path == "/" then path = "/index.html" end
  if path == "/api/topology" then return self:api_topology(args) end
  if path == "/api/route" then return self:api_route(args) end
  if path == "/api/svg" then return self:api_svg(args) end
  local id = path:match("^/api/node/(.*)$")
  if id then return self:api_node(id) end
  local name = path:match("^/([%w][%w_%-]*%.[%w]+)$")
  local asset = name and self.assets[name]
  if asset then return 200, asset.ctype, asset.body end
  if path:sub(1, 5) == "/api/" then
    return fail(404, ("no endpoint %s (endpoints: /api/topology, /api/node/ID, /api/route, /api/svg)"):format(path))
  end
  return fail(404, ("no such page: %s"):format(path))
end

-- ---------------------------------------------------------------------------
-- Command line.

local function usage()
  return table.concat({
    "usage: kernbench [-t T] [--set K=V] web [--port N] [--no-open] [--stats FILE]",
    "",
    "Serves the topology (the global -t/--topology and --set) as an interactive",
    "page on http://127.0.0.1:PORT/: the topology drawn as SVG with pan and zoom,",
    "hover for attributes, click a SIP or cube to drill down, a route finder.",
    "Runs until Ctrl-C (SIGINT) or SIGTERM. JSON endpoints: docs/web.md.",
    "",
    "options:",
    ("  --port N       the port on 127.0.0.1 (default %d; 0: any free port)"):format(M.DEFAULT_PORT),
    "  --no-open      do not open the page in the default browser",
    "  --stats FILE   a statistics file (kernbench --stats-json FILE ...): links",
    "                 and components show their utilisation",
    "  --topology T   the topology (as the global -t/--topology)",
    "  --set K=V      override a topology field, on top of the global --set ones",
    "                 (repeatable)",
    "  -h, --help     print this help and exit",
    "",
    "exit status: 0 stopped by SIGINT or SIGTERM, 1 the server could not start",
    "(port in use, page files missing), 2 usage error",
    "",
  }, "\n")
end
M.usage = usage

-- A usage error of `kernbench web`: raised, reported by the command line
-- (kernbench.usage: one line, the hint, exit status 2).
local function usage_error(msg)
  require("kernbench.usage").raise(msg, "web", "try 'kernbench web --help'")
end

--- Parses web's arguments; raises {usage = message}.
function M.parse(args)
  local opts = { sets = {}, port = M.DEFAULT_PORT }
  local seen = {}
  local i = 1
  while i <= #args do
    local a = args[i]
    local key, inline = a:match("^(%-%-[%w-]+)=(.*)$")
    if key then a = key end
    local function arg_of(flag)
      if inline then return inline end
      i = i + 1
      if args[i] == nil then error({ usage = ("option '%s' needs an argument"):format(flag) }) end
      return args[i]
    end
    local function once(flag)
      if seen[flag] then error({ usage = ("option '%s' given twice"):format(flag) }) end
      seen[flag] = true
    end
    if a == "-h" or a == "--help" then
      opts.help = true
    elseif a == "--no-open" and not inline then
      opts.no_open = true
    elseif a == "--port" then
      once(a)
      local s = arg_of(a)
      local n = s:match("^%d+$") and #s <= 5 and tonumber(s)
      if not n or n > 65535 then
        error({ usage = ("--port '%s': expected a port number from 0 to 65535 (0: any free port)"):format(s) })
      end
      opts.port = math.tointeger(n)
    elseif a == "--stats" then
      once(a)
      opts.stats = arg_of(a)
      if opts.stats == "" then error({ usage = "option '--stats' needs a file" }) end
    elseif a == "--topology" or a == "-t" then
      opts.topology = arg_of(a)
    elseif a == "--set" then
      cli_opts.add_set(opts.sets, arg_of(a))
    elseif a == "--profile" then
      cli_opts.add_profile(opts.sets, arg_of(a))
    else
      cli_opts.reject(a, args[i])
    end
    i = i + 1
  end
  return opts
end

-- Opens url in the default browser when one is configured; says what it did.
local function open_browser(url)
  local function has(cmd) return os.execute("command -v " .. cmd .. " >/dev/null 2>&1") == true end
  local display = (os.getenv("DISPLAY") or "") ~= "" or (os.getenv("WAYLAND_DISPLAY") or "") ~= ""
  local browser = os.getenv("BROWSER") or ""
  -- url is http://127.0.0.1:PORT/: nothing in it a shell would read
  if (display or browser ~= "") and has("xdg-open") then
    os.execute("xdg-open '" .. url .. "' >/dev/null 2>&1 &")
    print("kernbench web: opened " .. url .. " in the default browser (xdg-open)")
  elseif browser ~= "" then
    os.execute("sh -c '$BROWSER \"$1\"' sh '" .. url .. "' >/dev/null 2>&1 &")
    print("kernbench web: opened " .. url .. " with $BROWSER")
  else
    print("kernbench web: no browser configured (no $DISPLAY, $WAYLAND_DISPLAY or $BROWSER, or no xdg-open): open "
      .. url .. " yourself")
  end
end

function M.main(args)
  local ok, opts = pcall(M.parse, args or {})
  if not ok then
    if type(opts) == "table" and opts.usage then return usage_error(opts.usage) end
    error(opts, 0)
  end
  if opts.help then
    io.write(usage())
    return 0
  end
  local lok, t = pcall(require("kernbench.probe").load_topology, opts)
  if not lok then return usage_error(tostring(t)) end
  local stats
  if opts.stats then
    local sok, st = pcall(M.load_stats, opts.stats, t.name)
    if not sok then return usage_error(tostring(st)) end
    stats = st
    if not st.matched then
      io.stderr:write(("kernbench web: --stats %s: no simulation in it ran on topology %s; "
        .. "utilisation is shown where the node ids match\n"):format(opts.stats, t.name))
    end
  end
  local app = M.app(t, { stats = stats })
  local aok, aerr = pcall(app.load_assets, app)
  if not aok then
    io.stderr:write("kernbench web: ", tostring(aerr), "\n")
    return 1
  end
  if not app.draw then
    io.stderr:write("kernbench web: the drawing module kernbench.draw is not available; /api/svg answers 501 "
      .. "(not implemented)\n")
  end
  local httpd = require "kernbench.httpd"
  local stopped, err = httpd.serve {
    port = opts.port,
    handler = function(method, path, a) return app:handle(method, path, a) end,
    on_ready = function(port)
      local url = ("http://127.0.0.1:%d/"):format(port)
      print(("kernbench web: serving topology %s (%d nodes) at %s (Ctrl-C stops)"):format(t.name,
        #app.ids, url))
      if not opts.no_open then open_browser(url) end
      io.stdout:flush()
    end,
  }
  if not stopped then
    io.stderr:write("kernbench web: ", err, opts.port ~= 0 and "; choose another with --port N, or --port 0 for "
      .. "any free port" or "", "\n")
    return 1
  end
  if stopped == "sigint" or stopped == "sigterm" then
    print(("kernbench web: stopped (%s)"):format(stopped:upper()))
  end
  return 0
end

return M
