--- kernbench draw (lua/kernbench/draw.lua): the DOT of each view on the
-- default topology (node and edge counts, ids), the route highlighted, link
-- colours from statistics, determinism, option errors, the graph form.
local lu = require "luaunit"
local draw = require "kernbench.draw"

local T = kb.topology.load("default")

-- The DOT text parsed: nodes[id] = {class =, line =}, edges[id] = {class =,
-- src =, dst =, line =} (links only; the logical SIP neighbours apart).
local function parse(text)
  local d = { nodes = {}, edges = {}, logical = {}, nnodes = 0, nedges = 0 }
  for line in text:gmatch("[^\n]+") do
    local src, dst, id, class = line:match('^  "([^"]+)" %-> "([^"]+)" %[id="([^"]+)", class="([^"]+)"')
    if src then
      if class == "logical" then
        d.logical[#d.logical + 1] = id
      else
        lu.assertNil(d.edges[id], "edge id twice: " .. id)
        d.edges[id] = { class = class, src = src, dst = dst, line = line }
        d.nedges = d.nedges + 1
      end
    else
      local nid, nid2, nclass = line:match('^  "([^"]+)" %[id="([^"]+)", class="([^"]+)"')
      if nid then
        lu.assertEquals(nid2, nid)
        d.nodes[nid] = { class = nclass, line = line }
        if nid ~= "legend" then d.nnodes = d.nnodes + 1 end
      end
    end
  end
  return d
end

local function pair_key(a, b)
  if a > b then a, b = b, a end
  return a .. "->" .. b
end

-- The unordered pairs of the edges with class "link route".
local function route_pairs(d)
  local out = {}
  for _, e in pairs(d.edges) do
    if e.class == "link route" then out[#out + 1] = pair_key(e.src, e.dst) end
  end
  table.sort(out)
  return out
end

TestDraw = {}

function TestDraw:test_system_view()
  local d = parse(draw.dot(T, { view = "system" }))
  lu.assertEquals(d.nnodes, 5)
  for _, id in ipairs { "fabric.switch0", "sip0", "sip1", "sip0.io0", "sip1.io0" } do
    lu.assertNotNil(d.nodes[id], id)
  end
  lu.assertEquals(d.nodes.sip0.class, "sip")
  lu.assertEquals(d.nodes["sip0.io0"].class, "io_chiplet")
  lu.assertEquals(d.nodes["fabric.switch0"].class, "switch")
  lu.assertEquals(d.nedges, 4)
  lu.assertNotNil(d.edges["fabric.switch0->sip0.io0"])
  lu.assertNotNil(d.edges["sip0->sip0.io0"])
  lu.assertEquals(d.logical, { "logical:sip0->sip1" })
  -- the aggregated edge says what it stands for
  lu.assertStrContains(d.edges["sip0->sip0.io0"].line, "2 links, 1024 GB/s in all")
  lu.assertStrContains(d.edges["fabric.switch0->sip0.io0"].line, "64 GB/s, latency 1 ns (100 mm)")
end

function TestDraw:test_sip_view_is_the_cube_grid()
  local d = parse(draw.dot(T, { view = "sip", sip = 1 }))
  lu.assertEquals(d.nnodes, 16 + 1 + 1) -- cubes, the IO chiplet, the switch (outside)
  for c = 0, 15 do lu.assertEquals(d.nodes["sip1.cube" .. c].class, "cube") end
  lu.assertEquals(d.nodes["fabric.switch0"].class, "switch external")
  lu.assertEquals(d.nedges, 24 + 2 + 1) -- the 4x4 mesh, IO to cubes 0 and 1, IO to the switch
  lu.assertNotNil(d.edges["sip1.cube0->sip1.cube1"])
  lu.assertNotNil(d.edges["sip1.cube0->sip1.cube4"])
  lu.assertNil(d.edges["sip1.cube0->sip1.cube5"])
  lu.assertNotNil(d.edges["sip1.cube0->sip1.io0"])
  -- laid out as the grid: cube c at column c % 4, row c // 4
  local function pos(id) local x, y = d.nodes[id].line:match('pos="([-%d.]+),([-%d.]+)!"') return tonumber(x), tonumber(y) end
  local x0, y0 = pos("sip1.cube0")
  local x1, y1 = pos("sip1.cube1")
  local x4, y4 = pos("sip1.cube4")
  lu.assertTrue(x1 > x0) lu.assertEquals(y1, y0)
  lu.assertEquals(x4, x0) lu.assertTrue(y4 < y0)
end

function TestDraw:test_cube_view_has_every_component()
  local d = parse(draw.dot(T, { view = "cube", sip = 0, cube = 5 }))
  local routers = T:nodes("sip0.cube5.r*")
  lu.assertEquals(#routers, 32)
  for _, id in ipairs(routers) do lu.assertEquals(d.nodes[id].class, "noc_router", id) end
  for _, id in ipairs(T:nodes("sip0.cube5.hbm_ctrl.*")) do lu.assertEquals(d.nodes[id].class, "hbm_ctrl") end
  lu.assertEquals(d.nodes["sip0.cube5.sram"].class, "sram")
  lu.assertEquals(d.nodes["sip0.cube5.m_cpu"].class, "m_cpu")
  for p = 0, 7 do lu.assertEquals(d.nodes["sip0.cube5.pe" .. p].class, "pe") end
  for _, s in ipairs { "N", "E", "S", "W" } do lu.assertEquals(d.nodes["sip0.cube5.ucie-" .. s].class, "ucie") end
  -- cube 5 (1,1) has four neighbours, shown outside the view
  for _, c in ipairs { 1, 4, 6, 9 } do lu.assertEquals(d.nodes["sip0.cube" .. c].class, "cube external") end
  lu.assertEquals(d.nnodes, 32 + 8 + 1 + 1 + 8 + 4 + 4)
  -- 48 mesh links, 8 PEs, 8 HBM controllers, SRAM, M_CPU, 4 ports x 4
  -- connections' routers, 4 neighbours
  lu.assertEquals(d.nedges, 48 + 8 + 8 + 1 + 1 + 16 + 4)
  lu.assertNotNil(d.edges["sip0.cube5.r0c0->sip0.cube5.r0c1"])
  lu.assertNotNil(d.edges["sip0.cube5.pe0->sip0.cube5.r0c0"])
  lu.assertNotNil(d.edges["sip0.cube1->sip0.cube5.ucie-N"])
  -- no connection is drawn on its own: they are part of their port
  for id in pairs(d.nodes) do lu.assertNil(id:find("conn", 1, true), id) end
end

function TestDraw:test_default_cube_view_of_cube0()
  local d = parse(draw.dot(T, { view = "cube" }))
  -- cube 0: the IO chiplet north, cubes 1 and 4 east and south, nothing west
  lu.assertEquals(d.nnodes, 54 + 3)
  lu.assertEquals(d.nedges, 85)
  lu.assertEquals(d.nodes["sip0.io0"].class, "io_chiplet external")
end

function TestDraw:test_pe_view_has_the_engines()
  local d = parse(draw.dot(T, { view = "pe", sip = 1, cube = 2, pe = 3 }))
  local parts = T:nodes("sip1.cube2.pe3.*")
  lu.assertEquals(#parts, 9)
  for _, id in ipairs(parts) do lu.assertEquals(d.nodes[id].class, T:node(id).kind) end
  local router = T:path("sip1.cube2.pe3.pe_dma", "sip1.cube2.hbm_ctrl.pe3", "local")[2]
  lu.assertEquals(d.nodes[router].class, "noc_router external")
  lu.assertEquals(d.nnodes, 10)
  lu.assertEquals(d.nedges, 13 + 2) -- PE-internal pairs, DMA and CPU to the router
  lu.assertNotNil(d.edges["sip1.cube2.pe3.pe_gemm->sip1.cube2.pe3.pe_math"])
end

function TestDraw:test_tooltips_give_attributes_bandwidth_and_latency()
  local d = parse(draw.dot(T, { view = "cube" }))
  local r = d.nodes["sip0.cube0.r0c0"].line
  lu.assertStrContains(r, 'tooltip="sip0.cube0.r0c0\\nkind: noc_router\\nimpl: builtin.forwarding\\noverhead_ns: 2')
  local e = d.edges["sip0.cube0.r0c0->sip0.cube0.r0c1"].line
  lu.assertStrContains(e, "sip0.cube0.r0c0 -> sip0.cube0.r0c1 (router_mesh): 256 GB/s, latency 0.025 ns (2.5 mm)")
  lu.assertStrContains(e, "sip0.cube0.r0c1 -> sip0.cube0.r0c0 (router_mesh)")
end

function TestDraw:test_route_is_the_routers()
  local src, dst = "sip0.cube0.pe0.pe_dma", "sip0.cube0.hbm_ctrl.pe5"
  local path = draw.route(T, src, dst)
  lu.assertEquals(path, T:path(src, dst))
  -- in the cube view each hop is drawn between the nodes standing for its ends
  local function rep(id)
    return (id:gsub("^(sip0%.cube0%.pe%d+)%..*$", "%1"):gsub("^(sip0%.cube0%.ucie%-%a)%.conn%d+$", "%1"))
  end
  local want, seen = {}, {}
  for i = 2, #path do
    local a, b = rep(path[i - 1]), rep(path[i])
    if a ~= b and not seen[pair_key(a, b)] then
      seen[pair_key(a, b)] = true
      want[#want + 1] = pair_key(a, b)
    end
  end
  table.sort(want)
  local text = draw.dot(T, { view = "cube", route = { src, dst } })
  local d = parse(text)
  lu.assertEquals(route_pairs(d), want)
  lu.assertTrue(#want >= 3)
  lu.assertStrContains(d.nodes["sip0.cube0.pe0"].class, "route")
  lu.assertStrContains(d.nodes["sip0.cube0.hbm_ctrl.pe5"].class, "route")
  lu.assertNotNil(d.nodes.legend)
  lu.assertStrContains(text, ("route %s -> %s: %d hops"):format(src, dst, #path - 1))
end

function TestDraw:test_route_across_sips_in_the_system_view()
  local src, dst = "sip0.cube0.pe0.pe_dma", "sip1.cube5.pe3.pe_dma"
  local d = parse(draw.dot(T, { view = "system", route = { src, dst } }))
  lu.assertEquals(route_pairs(d), {
    "fabric.switch0->sip0.io0", "fabric.switch0->sip1.io0", "sip0->sip0.io0", "sip1->sip1.io0",
  })
  -- the direction of travel: from the SIP to its IO chiplet, "dir=forward" on sip0->sip0.io0
  lu.assertStrContains(d.edges["sip0->sip0.io0"].line, "dir=forward")
  lu.assertStrContains(d.edges["sip1->sip1.io0"].line, "dir=back")
end

function TestDraw:test_route_errors_name_close_ids()
  local ok, err = pcall(draw.dot, T, { view = "cube", route = { "sip0.cube0.pe0.pe_dam", "sip0.cube0.sram" } })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "no node 'sip0.cube0.pe0.pe_dam' in topology default; did you mean sip0.cube0.pe0.pe_dma")
end

function TestDraw:test_stats_colour_links_with_a_legend()
  local stats = { simulations = { {
    topology = "default",
    links = {
      { src = "sip0.cube0.r0c0", dst = "sip0.cube0.r0c1", util = 0.76 },
      { src = "sip0.cube0.r0c2", dst = "sip0.cube0.r0c1", util = 0.1 },
      { src = "sip0.cube0.r1c0", dst = "sip0.cube0.r0c0", util = 0.95 },
      { src = "sip0.cube0.r1c0", dst = "sip0.cube0.r0c0", util = 0.2 }, -- smaller: the larger wins
    },
    components = { { id = "sip0.cube0.r0c0", util = 0.5 } },
  }, {
    topology = "other", -- another topology's simulation is left out
    links = { { src = "sip0.cube0.r0c3", dst = "sip0.cube0.r0c2", util = 0.9 } },
  } } }
  local text = draw.dot(T, { view = "cube", stats = stats })
  local d = parse(text)
  lu.assertStrContains(d.edges["sip0.cube0.r0c0->sip0.cube0.r0c1"].line, 'color="#fc8d59"')
  lu.assertStrContains(d.edges["sip0.cube0.r0c0->sip0.cube0.r0c1"].line, "util 76.0%")
  lu.assertStrContains(d.edges["sip0.cube0.r0c1->sip0.cube0.r0c2"].line, 'color="#1a9850"')
  lu.assertStrContains(d.edges["sip0.cube0.r0c0->sip0.cube0.r1c0"].line, 'color="#d73027"')
  lu.assertStrContains(d.edges["sip0.cube0.r0c2->sip0.cube0.r0c3"].line, 'color="' .. draw.NO_TRAFFIC .. '"')
  lu.assertStrContains(d.nodes["sip0.cube0.r0c0"].line, "busy: 50.0%")
  lu.assertEquals(d.nodes.legend.class, "legend")
  for _, s in ipairs(draw.SCALE) do lu.assertStrContains(d.nodes.legend.line, s[2]) end
  lu.assertStrContains(d.nodes.legend.line, "80% - 100%")
  lu.assertStrContains(text, "the largest of 1 simulation(s)")
  lu.assertEquals(draw.util_color(0), "#1a9850")
  lu.assertEquals(draw.util_color(1), "#d73027")
  lu.assertEquals(draw.util_color(nil), draw.NO_TRAFFIC)
  -- aggregated: the sip view's cube0 - cube1 edge stands for two UCIe ports' links
  local stats2 = { simulations = { { topology = "default", links = {
    { src = "sip0.cube0.ucie-E", dst = "sip0.cube1.ucie-W", util = 0.45 } } } } }
  local d2 = parse(draw.dot(T, { view = "sip", stats = stats2 }))
  lu.assertStrContains(d2.edges["sip0.cube0->sip0.cube1"].line, 'color="#fee08b"')
end

function TestDraw:test_stats_from_a_run()
  local s = sim.new { topology = T }
  s:spawn { name = "w", fn = function()
    s:memory_write { sip = 0, cube = 4, pe = 0, offset = 0, nbytes = 32768 }:wait()
  end }
  s:run()
  local d = parse(draw.dot(T, { view = "sip", stats = { simulations = { s:stats() } } }))
  lu.assertStrContains(d.edges["sip0.cube0->sip0.io0"].line, "util up to")
  lu.assertNotStrContains(d.edges["sip0.cube0->sip0.io0"].line, draw.NO_TRAFFIC)
  lu.assertStrContains(d.edges["sip0.cube2->sip0.cube3"].line, draw.NO_TRAFFIC)
end

function TestDraw:test_deterministic()
  local opts = { view = "cube", sip = 1, cube = 6, route = { "sip1.cube6.pe2.pe_dma", "sip0.cube3.sram" } }
  local a = draw.dot(T, opts)
  lu.assertEquals(draw.dot(T, opts), a)
  lu.assertEquals(draw.dot(kb.topology.load("default"), opts), a) -- another load of the same file
  for _, v in ipairs(draw.VIEWS) do
    lu.assertEquals(draw.dot(kb.topology.load("default"), { view = v }), draw.dot(T, { view = v }))
  end
end

function TestDraw:test_option_errors_name_the_option_and_range()
  local function err(opts)
    local ok, e = pcall(draw.dot, T, opts)
    lu.assertFalse(ok)
    return e
  end
  lu.assertStrContains(err { view = "sip", sip = 2 }, "--sip 2 is out of range: topology default has 2 SIP(s) (0 .. 1)")
  lu.assertStrContains(err { view = "cube", cube = 16 }, "(0 .. 15)")
  lu.assertStrContains(err { view = "pe", pe = 8 }, "(0 .. 7)")
  lu.assertStrContains(err { view = "tray" }, "--view tray: expected one of system, sip, cube, pe")
end

function TestDraw:test_graph_form_draws_the_whole_graph_in_every_view()
  local chain = kb.topology.load("chain")
  for _, v in ipairs(draw.VIEWS) do
    local d = parse(draw.dot(chain, { view = v }))
    lu.assertEquals(d.nnodes, 8, v)
    lu.assertEquals(d.nedges, 7, v)
    lu.assertNotNil(d.edges["n0->n1"])
  end
  local ok, e = pcall(draw.dot, chain, { view = "sip", sip = 1 })
  lu.assertFalse(ok)
  lu.assertStrContains(e, "graph-form topology")
end

function TestDraw:test_every_shipped_topology_and_view()
  for _, name in ipairs { "default", "original", "small_1cube_1pe", "small_1cube_8pe", "small_2x2", "ring_1d_6sip",
                          "torus_2d_6sip_2x3", "mesh_2d_no_wrap_6sip_2x3", "chain" } do
    local t = kb.topology.load(name)
    for _, v in ipairs(draw.VIEWS) do
      local d = parse(draw.dot(t, { view = v }))
      lu.assertTrue(d.nnodes > 0 and d.nedges > 0, name .. " " .. v)
    end
  end
  -- the torus's logical layout: 2x3 with wrap-around (columns of 2 wrap onto the same neighbour)
  local d = parse(draw.dot(kb.topology.load("torus_2d_6sip_2x3"), { view = "system" }))
  lu.assertEquals(#d.logical, 3 + 6)
  local m = parse(draw.dot(kb.topology.load("mesh_2d_no_wrap_6sip_2x3"), { view = "system" }))
  lu.assertEquals(#m.logical, 3 + 4)
end

function TestDraw:test_render_svg_keeps_the_ids()
  local svg = draw.render(draw.dot(T, { view = "cube" }), "svg")
  lu.assertStrContains(svg, "<svg")
  lu.assertStrContains(svg, 'id="sip0.cube0.r0c0"')
  lu.assertStrContains(svg, 'id="sip0.cube0.r0c0&#45;&gt;sip0.cube0.r0c1"')
  lu.assertStrContains(svg, 'class="node noc_router"')
  local ok, e = pcall(draw.render, "digraph {}", "jpg")
  lu.assertFalse(ok)
  lu.assertStrContains(e, "--format jpg")
end
