--- Neighbour tables for PE-to-PE queues (lua/kernbench/ccl/topologies.lua):
-- the built-in topologies, the pairing of directions and the checks.
local lu = require "luaunit"
local topo = require "kernbench.ccl.topologies"

TestCclTopologies = {}

-- tables[0..world-1] of a built-in topology.
local function tables_of(name, world, opts)
  return topo.build(name, world, opts)
end

-- The neighbour tables of rank 0..world-1 as a 1-based list (for assertEquals).
local function as_list(tables, world)
  local list = {}
  for r = 0, world - 1 do list[r + 1] = tables[r] end
  return list
end

function TestCclTopologies:test_names_in_order()
  lu.assertEquals(topo.names, { "ring_1d", "ring_1d_unidir", "mesh_2d", "torus_2d", "mesh_2d_no_wrap", "tree_binary" })
  for _, name in ipairs(topo.names) do
    local info = topo.info(name)
    lu.assertEquals(info.name, name)
    lu.assertIsBoolean(info.unidirectional)
    lu.assertIsBoolean(info.grid)
    lu.assertStrMatches(info.description, "[^\n]+")
  end
end

function TestCclTopologies:test_info()
  lu.assertTrue(topo.info("ring_1d_unidir").unidirectional)
  lu.assertFalse(topo.info("ring_1d").unidirectional)
  lu.assertTrue(topo.info("mesh_2d").grid)
  lu.assertTrue(topo.info("torus_2d").grid)
  lu.assertTrue(topo.info("mesh_2d_no_wrap").grid)
  lu.assertFalse(topo.info("tree_binary").grid)
  lu.assertNil(topo.info("hypercube"))
  lu.assertNil(topo.info(nil))
end

function TestCclTopologies:test_ring_1d()
  lu.assertEquals(as_list(tables_of("ring_1d", 1), 1), { {} })
  lu.assertEquals(as_list(tables_of("ring_1d", 2), 2), { { E = 1, W = 1 }, { E = 0, W = 0 } })
  lu.assertEquals(as_list(tables_of("ring_1d", 4), 4),
                  { { E = 1, W = 3 }, { E = 2, W = 0 }, { E = 3, W = 1 }, { E = 0, W = 2 } })
  local f = topo.neighbors("ring_1d", 4)
  lu.assertEquals(f(3), { E = 0, W = 2 })
end

function TestCclTopologies:test_ring_1d_unidir_has_the_ring_tables()
  for _, world in ipairs({ 1, 2, 4, 5 }) do
    lu.assertEquals(as_list(tables_of("ring_1d_unidir", world), world),
                    as_list(tables_of("ring_1d", world), world))
  end
end

function TestCclTopologies:test_torus_2x3_wraps()
  -- w = 2, h = 3: rank r at (r % 2, r // 2)
  local t = tables_of("torus_2d", 6, { w = 2, h = 3 })
  -- x has size 2: E and W reach the same peer
  lu.assertEquals(t[0], { E = 1, W = 1, N = 4, S = 2 })
  lu.assertEquals(t[3], { E = 2, W = 2, N = 1, S = 5 })
  lu.assertEquals(t[5], { E = 4, W = 4, N = 3, S = 1 })
end

function TestCclTopologies:test_torus_leaves_out_self_in_size_1_dimension()
  local t = tables_of("torus_2d", 3, { w = 3, h = 1 })
  lu.assertEquals(as_list(t, 3), { { E = 1, W = 2 }, { E = 2, W = 0 }, { E = 0, W = 1 } })
  lu.assertEquals(tables_of("torus_2d", 1)[0], {})
end

function TestCclTopologies:test_mesh_edges_do_not_wrap()
  -- default grid for 6 ranks: w = 3, h = 2
  --   0 1 2
  --   3 4 5
  local t = tables_of("mesh_2d", 6)
  lu.assertEquals(t[0], { E = 1, S = 3 })
  lu.assertEquals(t[1], { E = 2, W = 0, S = 4 })
  lu.assertEquals(t[2], { W = 1, S = 5 })
  lu.assertEquals(t[4], { E = 5, W = 3, N = 1 })
  lu.assertEquals(t[5], { W = 4, N = 2 })
  lu.assertEquals(tables_of("mesh_2d", 1)[0], {})
end

function TestCclTopologies:test_mesh_2d_no_wrap_is_mesh_2d()
  for _, case in ipairs({ { 6 }, { 8 }, { 9, { w = 3 } }, { 12, { h = 2 } } }) do
    local world, opts = case[1], case[2]
    lu.assertEquals(as_list(tables_of("mesh_2d_no_wrap", world, opts), world),
                    as_list(tables_of("mesh_2d", world, opts), world))
  end
end

function TestCclTopologies:test_tree_binary()
  local t = tables_of("tree_binary", 6)
  lu.assertEquals(as_list(t, 6), {
    { left = 1, right = 2 },
    { parent = 0, left = 3, right = 4 },
    { parent = 0, left = 5 },
    { parent = 1 }, { parent = 1 }, { parent = 2 },
  })
  lu.assertEquals(tables_of("tree_binary", 1)[0], {})
end

function TestCclTopologies:test_grid_resolution()
  local function wh(world, opts) return { topo.grid(world, opts) } end
  lu.assertEquals(wh(8), { 4, 2 })
  lu.assertEquals(wh(6), { 3, 2 })
  lu.assertEquals(wh(16), { 4, 4 })
  lu.assertEquals(wh(7), { 7, 1 })
  lu.assertEquals(wh(1), { 1, 1 })
  lu.assertEquals(wh(8, { w = 2 }), { 2, 4 })
  lu.assertEquals(wh(8, { h = 8 }), { 1, 8 })
  lu.assertEquals(wh(8, { w = 8, h = 1 }), { 8, 1 })
  -- the neighbour tables follow the resolved grid: 8 ranks -> 4 x 2
  local t = tables_of("mesh_2d", 8)
  lu.assertEquals(t[0], { E = 1, S = 4 })
  lu.assertEquals(t[7], { W = 6, N = 3 })
end

function TestCclTopologies:test_grid_errors()
  lu.assertErrorMsgContains("w=3 does not divide world 8", topo.neighbors, "mesh_2d", 8, { w = 3 })
  lu.assertErrorMsgContains("h=3 does not divide world 8", topo.neighbors, "torus_2d", 8, { h = 3 })
  lu.assertErrorMsgContains("w=2 x h=2 = 4 ranks, but world is 8", topo.build, "mesh_2d", 8, { w = 2, h = 2 })
  lu.assertErrorMsgContains("w must be an integer >= 1, got 0 (world 8)", topo.grid, 8, { w = 0 })
  lu.assertErrorMsgContains("h must be an integer >= 1, got 1.5", topo.grid, 8, { h = 1.5 })
  lu.assertErrorMsgContains("opts must be a table", topo.neighbors, "mesh_2d", 8, 4)
end

function TestCclTopologies:test_unknown_name_and_bad_world()
  lu.assertErrorMsgContains(
    "unknown topology 'hypercube' (known: ring_1d, ring_1d_unidir, mesh_2d, torus_2d, mesh_2d_no_wrap, tree_binary)",
    topo.neighbors, "hypercube", 4)
  lu.assertErrorMsgContains("unknown topology 'hypercube'", topo.build, "hypercube", 4)
  lu.assertErrorMsgContains("world must be an integer >= 1, got 0", topo.neighbors, "ring_1d", 0)
  lu.assertErrorMsgContains("world must be an integer >= 1, got 2.5", topo.build, "ring_1d", 2.5)
  lu.assertErrorMsgContains("rank must be an integer in [0, 4), got 4", topo.neighbors("ring_1d", 4), 4)
  lu.assertErrorMsgContains("topology must be a name or a function", topo.build, 42, 4)
end

function TestCclTopologies:test_errors_point_at_the_caller()
  local ok, err = pcall(function() topo.neighbors("hypercube", 4) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "test_ccl_topologies.lua:")
  ok, err = pcall(function() topo.build("mesh_2d", 8, { w = 3 }) end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "test_ccl_topologies.lua:")
end

function TestCclTopologies:test_reverse_direction_prefers_the_opposite()
  local t2 = tables_of("ring_1d", 2)
  lu.assertEquals(topo.reverse_direction(t2, 0, 1, "E"), "W")
  lu.assertEquals(topo.reverse_direction(t2, 0, 1, "W"), "E")
  lu.assertEquals(topo.reverse_direction(t2, 1, 0, "E"), "W")
  lu.assertEquals(topo.reverse_direction(t2, 1, 0, "W"), "E")
  local t4 = tables_of("ring_1d", 4)
  lu.assertEquals(topo.reverse_direction(t4, 0, 1, "E"), "W")
  lu.assertEquals(topo.reverse_direction(t4, 0, 3, "W"), "E")
  lu.assertEquals(topo.reverse_direction(t4, 3, 0, "E"), "W")
end

function TestCclTopologies:test_opposite()
  for a, b in pairs({ E = "W", N = "S", global_E = "global_W", global_N = "global_S",
                      intra_E = "intra_W", intra_N = "intra_S" }) do
    lu.assertEquals(topo.opposite[a], b)
    lu.assertEquals(topo.opposite[b], a)
  end
  lu.assertNil(topo.opposite.parent)
  lu.assertNil(topo.opposite.left)
  lu.assertNil(topo.opposite.right)
end

function TestCclTopologies:test_reverse_direction_first_match_fallback()
  -- rank 1's W (the opposite of E) points elsewhere; of the directions that
  -- point back to 0, "a" comes first ("W" < "a" < "b" as strings)
  local t = topo.build(function(rank)
    if rank == 0 then return { E = 1 } end
    if rank == 1 then return { b = 0, a = 0, W = 2 } end
    return {}
  end, 3)
  lu.assertEquals(topo.reverse_direction(t, 0, 1, "E"), "a")
  -- tree directions have no opposite: the fallback pairs them
  local tree = tables_of("tree_binary", 3)
  lu.assertEquals(topo.reverse_direction(tree, 1, 0, "parent"), "left")
  lu.assertEquals(topo.reverse_direction(tree, 2, 0, "parent"), "right")
  lu.assertEquals(topo.reverse_direction(tree, 0, 2, "right"), "parent")
end

function TestCclTopologies:test_reverse_direction_nil()
  local t = { [0] = { E = 1 }, [1] = { E = 2 }, [2] = {} }
  lu.assertNil(topo.reverse_direction(t, 0, 1, "E"))
  lu.assertNil(topo.reverse_direction(t, 1, 2, "E"))
  lu.assertNil(topo.reverse_direction(t, 0, 5, "E")) -- no table for rank 5
end

function TestCclTopologies:test_pairs_of_ring()
  local p = topo.pairs_of(tables_of("ring_1d", 4), 4)
  lu.assertEquals(#p, 8)
  lu.assertEquals(p[1], { rank = 0, dir = "E", peer = 1, peer_dir = "W" })
  lu.assertEquals(p[2], { rank = 0, dir = "W", peer = 3, peer_dir = "E" })
  lu.assertEquals(p[8], { rank = 3, dir = "W", peer = 2, peer_dir = "E" })
  lu.assertEquals(topo.pairs_of(tables_of("ring_1d", 1), 1), {})
end

-- For every built-in topology the pairing is symmetric: (r, d) -> (p, pd)
-- exactly when (p, pd) -> (r, d).
function TestCclTopologies:test_pairs_of_is_symmetric_for_builtins()
  for _, name in ipairs(topo.names) do
    for _, case in ipairs({ { 1 }, { 2 }, { 4 }, { 6 }, { 6, { w = 2, h = 3 } }, { 7 }, { 8, { w = 2 } }, { 16 } }) do
      local world, opts = case[1], case[2]
      local p = topo.pairs_of(topo.build(name, world, opts), world)
      local back = {}
      for _, e in ipairs(p) do back[e.rank .. "/" .. e.dir] = e end
      for _, e in ipairs(p) do
        local other = back[e.peer .. "/" .. e.peer_dir]
        local where = ("%s world %d: rank %d %s"):format(name, world, e.rank, e.dir)
        lu.assertNotNil(other, where)
        lu.assertEquals(other.peer, e.rank, where)
        lu.assertEquals(other.peer_dir, e.dir, where)
      end
    end
  end
end

function TestCclTopologies:test_pairs_of_no_way_back()
  local t = { [0] = {}, [1] = {}, [2] = {}, [3] = { E = 4 }, [4] = { E = 0 } }
  lu.assertErrorMsgContains("rank 3 direction E -> rank 4: rank 4 has no direction back to rank 3",
                            topo.pairs_of, t, 5)
  lu.assertErrorMsgContains("rank 1 has no neighbour table", topo.pairs_of, { [0] = {} }, 2)
end

function TestCclTopologies:test_pairs_of_distinct_slots()
  -- rank 0 sends E and W to rank 1, which answers only on W: both of rank
  -- 0's directions would pair with rank 1's W (invariant I3)
  local t = { [0] = { E = 1, W = 1 }, [1] = { W = 0 } }
  lu.assertErrorMsgContains("rank 0 directions E and W both pair with rank 1 direction W",
                            topo.pairs_of, t, 2)
  local ok, err = pcall(topo.pairs_of, t, 2)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "I3")
end

function TestCclTopologies:test_build_accepts_a_function()
  local t = topo.build(function(rank, world) return { E = (rank + 1) % world, W = (rank - 1) % world } end, 3)
  lu.assertEquals(as_list(t, 3), as_list(tables_of("ring_1d", 3), 3))
  -- an integral float is stored as an integer
  t = topo.build(function(rank) return { E = (rank + 1) % 2 + 0.0 } end, 2)
  lu.assertEquals(math.type(t[0].E), "integer")
  -- the result is a copy
  local mine = { [0] = { E = 1 }, [1] = { W = 0 } }
  t = topo.build(function(rank) return mine[rank] end, 2)
  t[0].E = nil
  lu.assertEquals(mine[0], { E = 1 })
end

function TestCclTopologies:test_build_validation()
  local function with(tbl, world)
    return function()
      return topo.build(function(rank)
        if rank == 1 then return tbl end
        return {}
      end, world or 4)
    end
  end
  lu.assertErrorMsgContains("rank 1: direction E -> 1 points to the rank itself", with({ E = 1 }))
  lu.assertErrorMsgContains("rank 1: direction E -> 4 is out of range [0, 4)", with({ E = 4 }))
  lu.assertErrorMsgContains("rank 1: direction W -> -1 is out of range [0, 4)", with({ W = -1 }))
  lu.assertErrorMsgContains("rank 1: direction E -> 1.5 is not an integer rank", with({ E = 1.5 }))
  lu.assertErrorMsgContains("rank 1: direction E -> two is not an integer rank", with({ E = "two" }))
  lu.assertErrorMsgContains("rank 1: direction 1 is not a non-empty string", with({ 2 }))
  lu.assertErrorMsgContains('rank 1: direction "" is not a non-empty string', with({ [""] = 2 }))
  lu.assertErrorMsgContains("rank 1: the neighbour function returned nil, not a table", with(nil))
  local many = {}
  for i = 1, 17 do many["d" .. i] = 0 end
  lu.assertErrorMsgContains("rank 1: 17 directions, at most 16 allowed", with(many, 20))
  many.d17 = nil
  lu.assertEquals(topo.build(function(rank) return rank == 1 and many or {} end, 20)[1], many)
end
