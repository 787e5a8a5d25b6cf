--- DPPolicy and its resolver (lua/kernbench/placement.lua): every policy
-- combination yields shards that tile the tensor exactly.
local lu = require "luaunit"
local placement = require "kernbench.placement"
local DPPolicy = placement.DPPolicy

TestPlacement = {}

local KINDS = { "replicate", "row_wise", "column_wise" }

-- Checks that the distinct (non-replica) shards cover every element of the
-- 2-D view exactly once per replica set, and that byte ranges match blocks.
local function check_tiling(policy, shape, itemsize, nc, np)
  local shards = placement.resolve(policy, shape, itemsize, { num_cubes = nc, num_pes = np, sip = 1 })
  local rows, cols = placement.shape_2d(shape)
  local copies = (policy.cube == "replicate" and nc or 1) * (policy.pe == "replicate" and np or 1)
  lu.assertEquals(#shards, nc * np)
  local seen = {}
  local bytes_at = {}
  for _, s in ipairs(shards) do
    lu.assertEquals(s.sip, 1)
    lu.assertEquals(s.nbytes, s.rows * s.cols * itemsize)
    lu.assertTrue(s.offset_bytes >= 0 and s.offset_bytes + s.nbytes <= rows * cols * itemsize)
    for r = s.row0, s.row0 + s.rows - 1 do
      for c = s.col0, s.col0 + s.cols - 1 do
        local k = r * cols + c
        seen[k] = (seen[k] or 0) + 1
      end
    end
    bytes_at[s.offset_bytes] = (bytes_at[s.offset_bytes] or 0) + s.nbytes
  end
  for k = 0, rows * cols - 1 do
    lu.assertEquals(seen[k], copies, ("element %d with %s"):format(k, tostring(policy)))
  end
  -- the device layout is covered exactly `copies` times too
  local total = 0
  for _, n in pairs(bytes_at) do total = total + n end
  lu.assertEquals(total, rows * cols * itemsize * copies)
  return shards
end

function TestPlacement:test_every_combination_tiles_the_tensor()
  for _, cube in ipairs(KINDS) do
    for _, pe in ipairs(KINDS) do
      for _, shape in ipairs { { 16, 24 }, { 17, 29 }, { 4, 6, 40 } } do
        check_tiling(DPPolicy { cube = cube, pe = pe }, shape, 2, 4, 3)
      end
    end
  end
end

function TestPlacement:test_row_wise_offsets_follow_tensor_split()
  local s = placement.resolve(DPPolicy { cube = "row_wise", pe = "row_wise" }, { 10, 4 }, 4,
                              { num_cubes = 2, num_pes = 2 })
  -- cube 0 gets rows 0-4, cube 1 rows 5-9; PEs split again: 3 + 2 rows
  lu.assertEquals({ s[1].row0, s[1].rows, s[2].row0, s[2].rows, s[3].row0, s[4].row0 }, { 0, 3, 3, 2, 5, 8 })
  lu.assertEquals({ s[1].offset_bytes, s[2].offset_bytes, s[3].offset_bytes }, { 0, 48, 80 })
  lu.assertEquals(s[3].nbytes, 48)
end

function TestPlacement:test_column_wise_blocks_are_stored_one_after_another()
  local s = placement.resolve(DPPolicy { cube = "column_wise", pe = "replicate" }, { 3, 8 }, 2,
                              { num_cubes = 2, num_pes = 2 })
  lu.assertEquals(#s, 4)
  lu.assertEquals({ s[1].col0, s[1].cols, s[1].offset_bytes, s[1].nbytes }, { 0, 4, 0, 24 })
  lu.assertEquals({ s[2].col0, s[2].offset_bytes }, { 0, 0 }) -- replica on PE 1
  lu.assertEquals({ s[3].col0, s[3].cols, s[3].offset_bytes }, { 4, 4, 24 })
end

function TestPlacement:test_policy_counts_override_the_topology()
  local s = placement.resolve(DPPolicy { cube = "row_wise", pe = "replicate", num_cubes = 2, num_pes = 1 },
                              { 2, 64 }, 2, { num_cubes = 16, num_pes = 8 })
  lu.assertEquals(#s, 2)
  lu.assertEquals({ s[2].cube, s[2].pe, s[2].offset_bytes }, { 1, 0, 128 })
end

function TestPlacement:test_errors_name_the_problem()
  lu.assertErrorMsgContains("'sip' was removed", DPPolicy, { sip = 1 })
  lu.assertErrorMsgContains("unknown field 'cubes'", DPPolicy, { cubes = 1 })
  lu.assertErrorMsgContains("cube = 'rows' (replicate, row_wise, column_wise)", DPPolicy, { cube = "rows" })
  lu.assertErrorMsgContains("num_pes must be a positive integer", DPPolicy, { num_pes = 0 })
  lu.assertErrorMsgContains("row_wise over 4 needs at least 4 rows, the block has 2", placement.resolve,
                            DPPolicy { cube = "row_wise" }, { 2, 8 }, 2, { num_cubes = 4, num_pes = 1 })
  lu.assertErrorMsgContains("num_cubes = 32, but a SIP has 16 cubes", placement.resolve,
                            DPPolicy { num_cubes = 32 }, { 2, 8 }, 2, { num_cubes = 16, num_pes = 1 })
end
