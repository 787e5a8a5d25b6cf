--- Profiles (docs/fidelity.md): `profile: NAME` / --profile NAME lays
-- topologies/profiles/NAME.yaml over any topology, after its base chain and
-- before the --set overrides; `*` reaches every element of a list.
local lu = require "luaunit"

TestProfile = {}

local PE = "cube.pe_template.components."

local function attr(t, kind, name, where)
  where = where or { sip = 0, cube = 0, pe = 0 }
  where.kind = kind
  return t:node(t:node_at(where)).attrs[name]
end

local function edge_bw(t, src, dst)
  for _, e in ipairs(t:edges(src)) do
    if e.dst == dst then return e.bw_gbs end
  end
end

function TestProfile:test_original_topology_is_default_with_the_profile()
  local a = kb.topology.load("original")
  local b = kb.topology.load("default", { "profile=original" })
  lu.assertEquals(a:params().profile, "original")
  lu.assertEquals(b:params().profile, "original")
  for _, k in ipairs { { "pe_dma", "overhead_ns" }, { "pe_ipcq", "slot_fits_payload" }, { "pe_math", "simd_bytes" } } do
    lu.assertEquals(attr(a, k[1], k[2]), attr(b, k[1], k[2]))
  end
  lu.assertEquals(edge_bw(a, "sip0.io0.io_ucie-P0.conn0", "sip0.io0.io_ucie-P0"), 0)
end

function TestProfile:test_overlay_reaches_any_topology_and_every_list_element()
  local t = kb.topology.load("torus_2d_6sip_2x3", { "profile=original" })
  lu.assertEquals(attr(t, "pe_dma", "overhead_ns"), 0)
  lu.assertEquals(attr(t, "pe_ipcq", "credit_fast_path"), true)
  lu.assertEquals(attr(t, "pe_ipcq", "window_kb"), 32768)
  -- the IO chiplet's connection <-> port bridges of every SIP: `*` over sip.io_chiplets
  for s = 0, 5 do
    lu.assertEquals(edge_bw(t, ("sip%d.io0.io_ucie-P0.conn0"):format(s), ("sip%d.io0.io_ucie-P0"):format(s)), 0)
  end
  -- the default is untouched
  local d = kb.topology.load("torus_2d_6sip_2x3")
  lu.assertEquals(d:params().profile, "default")
  lu.assertEquals(attr(d, "pe_dma", "overhead_ns"), 2)
  lu.assertEquals(edge_bw(d, "sip0.io0.io_ucie-P0.conn0", "sip0.io0.io_ucie-P0"), 128)
end

function TestProfile:test_a_set_wins_over_the_profile_whatever_its_place()
  for _, ov in ipairs { { PE .. "pe_dma.attrs.overhead_ns=3", "profile=original" },
                        { "profile=original", PE .. "pe_dma.attrs.overhead_ns=3" } } do
    local t = kb.topology.load("default", ov)
    lu.assertEquals(attr(t, "pe_dma", "overhead_ns"), 3)
    lu.assertEquals(attr(t, "pe_dma", "tcm_ports"), false) -- the rest of the profile holds
  end
  -- and profile=default on the original topology removes nothing it wrote itself
  lu.assertEquals(kb.topology.load("original", { "profile=default" }):params().profile, "default")
end

function TestProfile:test_unknown_profile_is_a_clear_error()
  local ok, err = pcall(kb.topology.load, "default", { "profile=nope" })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "--set profile=nope: profile: no profile 'nope' (profiles: default, original)")
end

function TestProfile:test_a_graph_topology_takes_no_profile()
  local ok, err = pcall(kb.topology.load, "chain", { "profile=original" })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "profile: ")
  lu.assertStrContains(tostring(err), "is a `graph:` topology; a profile is laid over a system topology")
end

function TestProfile:test_star_on_a_map_is_refused_with_the_profile_line()
  local dir = os.tmpname()
  os.remove(dir)
  os.execute(("mkdir -p %q/profiles"):format(dir))
  local f = assert(io.open(dir .. "/profiles/bad.yaml", "w"))
  f:write("description: x\noverlay:\n  cube:\n    links:\n      \"*\": { a: 1 }\n")
  f:close()
  f = assert(io.open(dir .. "/t.yaml", "w"))
  f:write("base: default\nprofile: bad\n")
  f:close()
  local ok, err = pcall(kb.topology.load, dir .. "/t.yaml")
  os.execute(("rm -rf %q"):format(dir))
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "`*` stands for every element of a list")
end

os.exit(lu.LuaUnit.run())
