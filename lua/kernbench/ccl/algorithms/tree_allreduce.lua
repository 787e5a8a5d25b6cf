--- Tree all-reduce (docs/ccl.md): the latency-optimal binary tree over
-- every PE 0 of every cube of every SIP, W ranks in the ring's snake order
-- (ring_allreduce.wiring), rank r's children 2r + 1 and 2r + 2. A chunk is
-- reduced up the tree (each rank adds its children's partial sums to its
-- own and sends the result to its parent) and the root's sum is broadcast
-- back down: 2 x floor(log2 W) hops, against LRAB's mesh chains and the
-- ring's 2 (W - 1) steps. Chunks of a slot stream through, a group at a
-- time (as many as the kernel's scratch keeps alive). Same tensor as LRAB
-- and the ring: per SIP [cubes, n_elem] (f16, bf16, f32), row c on cube c's
-- PE 0, every cube.
local dtypes = require "kernbench.ccl.dtypes"
local lines = require "kernbench.ccl.lines"
local ring = require "kernbench.ccl.algorithms.ring_allreduce"
local args = require "kernbench.ccl.args"

local M = {}

M.SIP_TOPO_RING, M.SIP_TOPO_TORUS, M.SIP_TOPO_MESH = 0, 1, 2
M.TOPO_NAME_TO_KIND = { ring_1d = 0, torus_2d = 1, mesh_2d_no_wrap = 2 }
M.OPS = { sum = 0, max = 1, min = 2 }

--- The ring's PEs, wired as a binary tree (parent, left, right).
function M.wiring(P)
  local w = ring.wiring(P)
  w.topology = "tree_binary"
  return w
end

--- After the tensor: n_elem, chunk (elements per message), op, group
-- (chunks streamed together) and the dtype's code; then the SIP group.
M.ARGS = args.declare("tree_allreduce", { "n_elem", "chunk", { "op", default = M.OPS.sum }, "group", "dtype" })

--- kernel_args(world_size, n_elem, opts): the packed arguments (M.ARGS).
function M.kernel_args(world_size, n_elem, o)
  o = o or {}
  local dt = dtypes.code(o.dtype, "tree_allreduce")
  local item = dtypes.SIZE[dt]
  local chunk = (o.slot_size or 4096) // item
  if chunk < 1 then error(("tree_allreduce: slot_size %s holds no element"):format(tostring(o.slot_size)), 2) end
  local op = M.OPS[o.op or "sum"]
  if not op then error(("tree_allreduce: op must be sum, max or min, got %s"):format(tostring(o.op)), 2) end
  if o.cubes and o.cubes_per_sip and o.cubes ~= o.cubes_per_sip then
    error(("tree_allreduce: the tree spans every cube: the tensor must have a row on each of the %d cubes, it "
      .. "has %d"):format(o.cubes_per_sip, o.cubes), 2)
  end
  -- a chunk is made anew up to 5 times in the reduce (load, two receives,
  -- two combines): a group's chunks must outlive the broadcast's
  local group = math.max(1, (o.scratch_bytes or 1024 * 1024) // (chunk * item * 6) - 1)
  return args.pack(M.ARGS, { n_elem = n_elem, chunk = chunk, op = op, group = group, dtype = dt })
end

function M.kernel(tl, t_ptr, n_elem, chunk, op, group, dtype)
  if tl.program_id(0) ~= 0 then return end
  local nb = tl.ipcq_neighbors()
  local cube = tl.program_id(1)
  local dt, item = dtypes.NAME[dtype], dtypes.SIZE[dtype]
  local cx = { op = op, dt = dt }
  local base = t_ptr + cube * n_elem * item
  lines.chunked(tl, { base = base, n_elem = n_elem, chunk = chunk, group = group, dt = dt, item = item,
                      load = true, store = true }, function(each)
    each(function(v, n) -- up: the children's partial sums, then to the parent
      if nb.left then v = lines.combine(tl, cx, v, tl.recv("left", { n }, dt)) end
      if nb.right then v = lines.combine(tl, cx, v, tl.recv("right", { n }, dt)) end
      if nb.parent then tl.send("parent", v) end
      return v
    end)
    each(function(v, n) -- down: the root's sum
      if nb.parent then v = tl.recv("parent", { n }, dt) end
      if nb.left then tl.send("left", v) end
      if nb.right then tl.send("right", v) end
      return v
    end)
  end)
end

return M
