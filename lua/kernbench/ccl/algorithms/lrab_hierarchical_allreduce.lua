--- LRAB hierarchical all-reduce (spec §2.4, ADR-0032): "local reduce (to a
-- root cube) and broadcast" inside each SIP, with an exchange between the
-- SIPs' root cubes in between. Only PE 0 of each cube takes part; the
-- queues are the `intercube_multisip` wiring (kernbench.ccl.sfr): N/S/E/W
-- between neighbouring cubes of a SIP, global_* to the same cube of the
-- neighbouring SIPs.
--
-- Tensor: per SIP, [cubes, n_elem] f16, bf16 or f32, row c on cube c's PE 0 (DPPolicy
-- cube = "row_wise", pe = "replicate", num_pes = 1); launched with the grid
-- {pes = 1, cubes = cubes}. Phases, for chunks of at most `chunk` elements
-- (a message fits a slot), each phase over a group of chunks before the
-- next (so chunks stream along the chains):
--   1. row reduce towards the root column (W->E chain left of it, E->W
--      chain right of it; the root column adds both sides)
--   2. column reduce in the root column towards the root row (N->S, S->N)
--   3. the root cubes of all SIPs exchange: ring_1d n_sips - 1 rounds
--      forwarding the last value received; torus_2d a ring along each row
--      then each column; mesh_2d_no_wrap a chain reduce to x = 0 and a
--      broadcast back, per dimension
--   4. column broadcast from the root row, 5. row broadcast from the root
--      column. Every cube's PE 0 then holds the sum over all SIPs and cubes.
-- One cube per SIP (cube_w = cube_h = 1) skips 1, 2, 4 and 5 (§2.4's fast
-- path). The root is the centre cube (cube_w // 2, cube_h // 2) unless
-- `root` names a cube (the original's corner root: cube_w * cube_h - 1).
--
-- Module contract (docs/ccl.md): kernel, kernel_args, ARGS, TOPO_NAME_TO_KIND and
-- the SIP_TOPO_* constants.
local M = {}

M.SIP_TOPO_RING, M.SIP_TOPO_TORUS, M.SIP_TOPO_MESH = 0, 1, 2
M.TOPO_NAME_TO_KIND = { ring_1d = 0, torus_2d = 1, mesh_2d_no_wrap = 2 }

local dtypes = require "kernbench.ccl.dtypes"
local args = require "kernbench.ccl.args"

--- The reduction ops and their codes (the kernel takes numbers only).
M.OPS = { sum = 0, max = 1, min = 2 }

--- The kernel's arguments after the tensor and before the sip_* group
-- (kernbench.ccl.args): n_elem, cube_w, cube_h, n_sips, root (a cube
-- index, -1: the centre), chunk (elements per message: what a slot holds),
-- op (M.OPS), group (chunks in flight together: as many as the kernel's
-- scratch, opts.scratch_bytes, keeps alive through a phase) and the dtype's
-- code (kernbench.ccl.dtypes: f16, bf16, f32).
M.ARGS = args.declare("lrab_hierarchical_allreduce", { "n_elem", "cube_w", "cube_h", "n_sips", { "root", default = -1 },
  "chunk", { "op", default = M.OPS.sum }, "group", "dtype" })

--- kernel_args(world_size, n_elem, opts): the packed arguments (M.ARGS).
function M.kernel_args(world_size, n_elem, o)
  o = o or {}
  local slot = o.slot_size or 4096
  local dt = dtypes.code(o.dtype, "lrab")
  local item = dtypes.SIZE[dt]
  local chunk = slot // item
  if chunk < 1 then error(("lrab: slot_size %d holds no element"):format(slot), 2) end
  local op = M.OPS[o.op or "sum"]
  if not op then error(("lrab: op must be sum, max or min, got %s"):format(tostring(o.op)), 2) end
  -- a chunk's value is made anew up to 4 + 2 x n_sips times in a phase (recvs
  -- and combines): a group's chunks from one phase must outlive the next's
  local per = chunk * item * (4 + 2 * world_size)
  local group = math.max(1, (o.scratch_bytes or 1024 * 1024) // per - 1)
  return args.pack(M.ARGS, { n_elem = n_elem, cube_w = o.cube_w or 4, cube_h = o.cube_h or 4, n_sips = world_size,
                            root = o.root, chunk = chunk, op = op, group = group, dtype = dt })
end

local lines = require "kernbench.ccl.lines"
local line_reduce, line_broadcast, ring = lines.reduce, lines.broadcast, lines.ring

local function exchange(tl, cx, acc, n, n_sips, sip_rank, kind, sw, sh)
  if n_sips < 2 then return acc end
  if kind == M.SIP_TOPO_RING then
    return ring(tl, cx, acc, n, n_sips, "global_E", "global_W")
  end
  local x, y = sip_rank % sw, sip_rank // sw
  if kind == M.SIP_TOPO_TORUS then
    acc = ring(tl, cx, acc, n, sw, "global_E", "global_W")
    return ring(tl, cx, acc, n, sh, "global_S", "global_N")
  end
  if kind == M.SIP_TOPO_MESH then
    acc = line_reduce(tl, cx, acc, n, x, sw, 0, "global_W", "global_E")
    acc = line_broadcast(tl, cx, acc, n, x, sw, 0, "global_W", "global_E")
    acc = line_reduce(tl, cx, acc, n, y, sh, 0, "global_N", "global_S")
    return line_broadcast(tl, cx, acc, n, y, sh, 0, "global_N", "global_S")
  end
  error(("lrab: unsupported SIP topology kind %s"):format(tostring(kind)))
end

--- kernel(tl, t_ptr, <M.ARGS>, <the SIP group: sip_rank, sip_topo_kind,
-- sip_topo_w, sip_topo_h>)
function M.kernel(tl, t_ptr, n_elem, cube_w, cube_h, n_sips, root, chunk, op, group, dtype, sip_rank, sip_topo_kind,
                  sip_topo_w, sip_topo_h)
  if tl.program_id(0) ~= 0 then return end -- PE 0 of each cube only
  local cube = tl.program_id(1)
  if cube >= cube_w * cube_h then return end
  local col, row = cube % cube_w, cube // cube_w
  if root < 0 then root = (cube_h // 2) * cube_w + cube_w // 2 end
  local root_col, root_row = root % cube_w, root // cube_w
  local single = cube_w == 1 and cube_h == 1
  local cx = { op = op, dt = dtypes.NAME[dtype] }
  local item = dtypes.SIZE[dtype]
  local base = t_ptr + cube * n_elem * item
  lines.chunked(tl, { base = base, n_elem = n_elem, chunk = chunk, group = group, dt = cx.dt, item = item,
                      load = true, store = true }, function(each)
    if not single then
      each(function(a, n) return line_reduce(tl, cx, a, n, col, cube_w, root_col, "W", "E") end)
      if col == root_col then
        each(function(a, n) return line_reduce(tl, cx, a, n, row, cube_h, root_row, "N", "S") end)
      end
    end
    if single or cube == root then
      each(function(a, n) return exchange(tl, cx, a, n, n_sips, sip_rank, sip_topo_kind, sip_topo_w,
        sip_topo_h) end)
    end
    if not single then
      if col == root_col then
        each(function(a, n) return line_broadcast(tl, cx, a, n, row, cube_h, root_row, "N", "S") end)
      end
      each(function(a, n) return line_broadcast(tl, cx, a, n, col, cube_w, root_col, "W", "E") end)
    end
  end)
end

return M
