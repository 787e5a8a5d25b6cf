--- The resolved configuration (t:config(), --dump-config): every value
-- with its source, and a document that rebuilds the same topology.
local lu = require "luaunit"

TestConfig = {}

local TOPOLOGIES = { "default", "small_1cube_1pe", "small_1cube_8pe", "small_2x2", "ring_1d_6sip",
                     "torus_2d_6sip_2x3", "mesh_2d_no_wrap_6sip_2x3", "chain" }

-- The value lines of a dump, without comments (sources differ after a reload).
local function values(yaml)
  local out = {}
  for line in yaml:gmatch("[^\n]+") do
    if not line:match("^#") then out[#out + 1] = (line:gsub("  #.*$", "")) end
  end
  return table.concat(out, "\n")
end

local function without_header(summary) return (summary:gsub("^[^\n]*\n", "")) end

local function line_of(yaml, pattern)
  for line in yaml:gmatch("[^\n]+") do
    if line:match(pattern) then return line end
  end
end

local function reload(t)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(t:config())
  f:close()
  local t2 = kb.topology.load(path)
  os.remove(path)
  return t2
end

function TestConfig:test_dump_rebuilds_the_same_topology()
  for _, name in ipairs(TOPOLOGIES) do
    local t = kb.topology.load(name)
    local t2 = reload(t)
    lu.assertEquals(without_header(t2:summary()), without_header(t:summary()), name)
    lu.assertEquals(#t2:nodes(), #t:nodes(), name)
    local p, p2 = t:params(), t2:params()
    for k, v in pairs(p) do
      if k ~= "path" then lu.assertEquals(p2[k], v, name .. " " .. k) end
    end
    lu.assertEquals(values(t2:config()), values(t:config()), name)
  end
end

function TestConfig:test_sources_name_the_file_the_override_or_the_default()
  local t = kb.topology.load("small_2x2", { "cube.links.router_link_bw_gbs=128" })
  local y = t:config()
  -- written in small_2x2.yaml itself
  lu.assertStrMatches(line_of(y, "^  cube_mesh:") and line_of(y, "^    w: ") or "",
                      "    w: 2  # .*topologies/small_2x2%.yaml:%d+:%d+")
  -- from the base file
  lu.assertStrMatches(line_of(y, "^  ns_per_mm: "), "  ns_per_mm: 0%.01  # .*topologies/default%.yaml:10:14")
  -- from the override
  lu.assertStrMatches(line_of(y, "router_link_bw_gbs: "),
                      "%s+router_link_bw_gbs: 128  # %-%-set cube%.links%.router_link_bw_gbs=128")
  lu.assertStrContains(y, "# override: --set cube.links.router_link_bw_gbs=128")
  -- absent from every file: the implementation's default
  lu.assertStrMatches(line_of(y, "^%s+kind: switch"), "%s+kind: switch  # default")
end

function TestConfig:test_defaults_of_absent_sections_are_listed()
  local t = kb.topology.load("chain", { "graph.line.node={impl: builtin.forwarding}" })
  local y = t:config()
  lu.assertStrMatches(line_of(y, "overhead_ns"), "%s+overhead_ns: 0%.0  # default")
  lu.assertNil(y:match("\nbase:"))
end

function TestConfig:test_dump_is_byte_identical_across_loads()
  lu.assertEquals(kb.topology.load("default"):config(), kb.topology.load("default"):config())
end
