--- Ring all-reduce (docs/ccl.md): the bandwidth-optimal reduce-scatter then
-- all-gather over a ring of every PE 0 of every cube of every SIP, W ranks.
-- Each rank's row is cut into W segments; in W - 1 steps of the
-- reduce-scatter every rank sends one segment east and adds the one that
-- arrives from the west, after which rank r holds the sum of segment
-- (r + 1) mod W; W - 1 steps of the all-gather pass the sums around. Every
-- rank moves 2 (W - 1) / W of its row, whatever W is: the time grows with
-- the bytes, not with W times the bytes. A segment larger than a slot goes
-- in slot-sized pieces, each sent and received in turn, so the ring never
-- holds more than one piece per rank.
--
-- The wiring (M.wiring): the ring visits the cubes of a SIP in a snake
-- (row by row, every other row backwards) so that neighbours are mesh
-- neighbours, then the next SIP's, and closes from the last SIP to the
-- first. Same tensor as LRAB: per SIP [cubes, n_elem] (f16, bf16, f32), row c on cube
-- c's PE 0. The row stays in the kernel's scratch: 3 x its bytes
-- must fit it (pe_cpu.attrs.scratch_kb).
local M = {}

M.SIP_TOPO_RING, M.SIP_TOPO_TORUS, M.SIP_TOPO_MESH = 0, 1, 2
M.TOPO_NAME_TO_KIND = { ring_1d = 0, torus_2d = 1, mesh_2d_no_wrap = 2 }
M.OPS = { sum = 0, max = 1, min = 2 }

local dtypes = require "kernbench.ccl.dtypes"
local lines = require "kernbench.ccl.lines"
local args = require "kernbench.ccl.args"

--- The ring's PEs in order and its neighbour tables (E: next, W: previous).
function M.wiring(P)
  local pes = {}
  for s = 0, P.sips - 1 do
    for row = 0, P.cube_h - 1 do
      for i = 0, P.cube_w - 1 do
        local col = row % 2 == 0 and i or P.cube_w - 1 - i
        pes[#pes + 1] = { sip = s, cube = row * P.cube_w + col, pe = 0 }
      end
    end
  end
  return { pes = pes, world = #pes, topology = "ring_1d" }
end

--- After the tensor: n_elem, piece (elements per message), op, the dtype's
-- code and the layout (0: a row per cube on PE 0, the SIP-wide tensor; 1:
-- row r on ring rank r, any set of PEs: opts.rows_by_rank); then the SIP
-- group (unused: the ring is the same on every SIP topology).
M.ARGS = args.declare("ring_allreduce", { "n_elem", "piece", { "op", default = M.OPS.sum }, "dtype",
  { "layout", default = 0 } })

--- kernel_args(world_size, n_elem, opts): the packed arguments (M.ARGS).
function M.kernel_args(world_size, n_elem, o)
  o = o or {}
  local dt = dtypes.code(o.dtype, "ring_allreduce")
  local item = dtypes.SIZE[dt]
  local piece = (o.slot_size or 4096) // item
  if piece < 1 then error(("ring_allreduce: slot_size %s holds no element"):format(tostring(o.slot_size)), 2) end
  local op = M.OPS[o.op or "sum"]
  if not op then error(("ring_allreduce: op must be sum, max or min, got %s"):format(tostring(o.op)), 2) end
  if o.cubes and o.cubes_per_sip and o.cubes ~= o.cubes_per_sip then
    error(("ring_allreduce: the ring runs through every cube: the tensor must have a row on each of the %d "
      .. "cubes, it has %d"):format(o.cubes_per_sip, o.cubes), 2)
  end
  local scratch = o.scratch_bytes or 1024 * 1024
  if 3 * n_elem * item > scratch then
    error(("ring_allreduce: a row of %d elements must fit three times in the kernel's scratch (%d bytes, "
      .. "pe_cpu.attrs.scratch_kb)"):format(n_elem, scratch), 2)
  end
  return args.pack(M.ARGS, { n_elem = n_elem, piece = piece, op = op, dtype = dt, layout = o.rows_by_rank and 1 or 0 })
end

function M.kernel(tl, t_ptr, n_elem, piece, op, dtype, layout)
  local rank, world = tl.ipcq_rank(), tl.ipcq_world_size()
  if not rank or (layout ~= 1 and tl.program_id(0) ~= 0) then return end -- not on the ring
  local cube = layout == 1 and rank or tl.program_id(1) -- the row
  local dt, item = dtypes.NAME[dtype], dtypes.SIZE[dtype]
  local cx = { op = op, dt = dt }
  local base = t_ptr + cube * n_elem * item
  -- segment i: elements [start(i), start(i + 1)), the first n_elem % world one longer
  local q, rem = n_elem // world, n_elem % world
  local function start(i) return i * q + math.min(i, rem) end
  -- each segment as pieces of at most `piece` elements, kept as handles
  local seg = {}
  for i = 0, world - 1 do
    local pieces = {}
    for off = start(i), start(i + 1) - 1, piece do
      local n = math.min(piece, start(i + 1) - off)
      pieces[#pieces + 1] = { off = off, n = n, h = tl.load(base + off * item, { n }, dt) }
    end
    seg[i] = pieces
  end
  -- one step: send segment `out` east piece by piece, taking segment `into`'s
  -- pieces from the west (combined, or replacing them)
  local function step(out, into, reduce)
    local send, recv = seg[out], seg[into] -- their piece counts may differ by one
    for j = 1, math.max(#send, #recv) do
      if send[j] then tl.send("E", send[j].h) end
      if recv[j] then
        local got = tl.recv("W", { recv[j].n }, dt)
        recv[j].h = reduce and lines.combine(tl, cx, recv[j].h, got) or got
      end
    end
  end
  for s = 0, world - 2 do step((rank - s) % world, (rank - s - 1) % world, true) end
  for s = 0, world - 2 do step((rank - s + 1) % world, (rank - s) % world, false) end
  for i = 0, world - 1 do
    for _, p in ipairs(seg[i]) do tl.store(base + p.off * item, p.h) end
  end
end

return M
