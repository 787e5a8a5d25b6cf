--- broadcast(src) and reduce(dst) on the LRAB wiring (kernbench.ccl.sfr
-- intercube_multisip, docs/ccl.md): the same [cubes, n_elem] tensor per
-- rank (SIP), a row per cube on PE 0.
--
--   broadcast: every rank's tensor becomes rank src's. Each cube's PE 0 of
--     SIP src sends its row out along the SIP topology (global_E/W along a
--     ring or a grid row, then global_N/S down the columns); nothing moves
--     inside a SIP.
--   copy: a rank's rows into another tensor of its own (all_gather's own
--     slot).
--   reduce: rank dst's tensor becomes the all-reduce of every rank's (every
--     row the combination of all rows of all SIPs); the others keep theirs.
--     Each cube's row is reduced across the SIPs towards dst (columns to
--     dst's row, then the row to dst), then inside dst the cubes reduce to
--     the root cube and broadcast back (LRAB's phases 1, 2, 4, 5).
-- Chunks of a slot stream a group at a time, as in LRAB.
local dtypes = require "kernbench.ccl.dtypes"
local lines = require "kernbench.ccl.lines"
local args = require "kernbench.ccl.args"

local M = {}

M.SIP_RING = 0

-- The positions of SIP s and of the root SIP on the SIP topology's lines:
-- a ring is one line of n_sips; a grid w x h, (s % w, s // w).
local function place(s, kind, sw)
  if kind == M.SIP_RING then return s, 0 end
  return s % sw, s // sw
end

--- The kernels' arguments after the tensor (kernbench.ccl.args), in the
-- order each takes them; the SIP group (sip_rank, sip_topo_kind,
-- sip_topo_w, sip_topo_h) is part of them.
M.ARGS = {
  broadcast = args.declare("broadcast", { "n_elem", "chunk", "group", "dtype", "src", "n_sips", "sip_rank",
                                          "sip_topo_kind", "sip_topo_w", "sip_topo_h" }),
  reduce = args.declare("reduce", { "out_ptr", "n_elem", "cube_w", "cube_h", { "root", default = -1 }, "chunk",
                                    { "op", default = 0 }, "group", "dtype", "dst", "n_sips", "sip_rank",
                                    "sip_topo_kind", "sip_topo_w", "sip_topo_h" }),
  copy = args.declare("copy", { "dst_ptr", "n_elem", "chunk", "dtype" }),
}

--- broadcast(tl, t_ptr, <M.ARGS.broadcast>)
function M.broadcast(tl, t_ptr, n_elem, chunk, group, dtype, src, n_sips, sip_rank, sip_topo_kind, sip_topo_w,
                     sip_topo_h)
  local kind, sw, sh = sip_topo_kind, sip_topo_w, sip_topo_h
  if tl.program_id(0) ~= 0 or n_sips < 2 then return end
  local cx = { op = 0, dt = dtypes.NAME[dtype] }
  local item = dtypes.SIZE[dtype]
  local base = t_ptr + tl.program_id(1) * n_elem * item
  local x, y = place(sip_rank, kind, sw)
  local rx, ry = place(src, kind, sw)
  local w, h = kind == M.SIP_RING and n_sips or sw, kind == M.SIP_RING and 1 or sh
  lines.chunked(tl, { base = base, n_elem = n_elem, chunk = chunk, group = group, dt = cx.dt, item = item,
                      load = sip_rank == src, store = sip_rank ~= src }, function(each)
    if y == ry then each(function(a, n) return lines.broadcast(tl, cx, a, n, x, w, rx, "global_W", "global_E") end) end
    if h > 1 then each(function(a, n) return lines.broadcast(tl, cx, a, n, y, h, ry, "global_N", "global_S") end) end
  end)
end

--- reduce(tl, t_ptr, <M.ARGS.reduce>): the result lands at out_ptr (t_ptr
-- for a plain reduce) on rank dst.
function M.reduce(tl, t_ptr, out_ptr, n_elem, cube_w, cube_h, root, chunk, op, group, dtype, dst, n_sips, sip_rank,
                  sip_topo_kind, sip_topo_w, sip_topo_h)
  local kind, sw, sh = sip_topo_kind, sip_topo_w, sip_topo_h
  if tl.program_id(0) ~= 0 then return end
  local cube = tl.program_id(1)
  local cx = { op = op, dt = dtypes.NAME[dtype] }
  local item = dtypes.SIZE[dtype]
  local base = t_ptr + cube * n_elem * item
  local out = out_ptr + cube * n_elem * item
  local x, y = place(sip_rank, kind, sw)
  local rx, ry = place(dst, kind, sw)
  local w, h = kind == M.SIP_RING and n_sips or sw, kind == M.SIP_RING and 1 or sh
  if root < 0 then root = (cube_h // 2) * cube_w + cube_w // 2 end
  local col, row, rc, rr = cube % cube_w, cube // cube_w, root % cube_w, root // cube_w
  local single = cube_w * cube_h == 1
  lines.chunked(tl, { base = base, out = out, n_elem = n_elem, chunk = chunk, group = group, dt = cx.dt,
                      item = item, load = true, store = sip_rank == dst }, function(line)
    if n_sips > 1 then
      if h > 1 then line(function(a, n) return lines.reduce(tl, cx, a, n, y, h, ry, "global_N", "global_S") end) end
      if y == ry then line(function(a, n) return lines.reduce(tl, cx, a, n, x, w, rx, "global_W", "global_E") end) end
    end
    if sip_rank ~= dst or single then return end
    line(function(a, n) return lines.reduce(tl, cx, a, n, col, cube_w, rc, "W", "E") end)
    if col == rc then line(function(a, n) return lines.reduce(tl, cx, a, n, row, cube_h, rr, "N", "S") end) end
    if col == rc then line(function(a, n) return lines.broadcast(tl, cx, a, n, row, cube_h, rr, "N", "S") end) end
    line(function(a, n) return lines.broadcast(tl, cx, a, n, col, cube_w, rc, "W", "E") end)
  end)
end

--- copy(tl, src_ptr, <M.ARGS.copy>): each cube's PE 0 copies its row
-- (through its TCM), a chunk at a time.
function M.copy(tl, src_ptr, dst_ptr, n_elem, chunk, dtype)
  if tl.program_id(0) ~= 0 then return end
  local dt, item = dtypes.NAME[dtype], dtypes.SIZE[dtype]
  local off = tl.program_id(1) * n_elem * item
  for k = 0, n_elem - 1, chunk do
    local n = math.min(chunk, n_elem - k)
    tl.store(dst_ptr + off + k * item, tl.load(src_ptr + off + k * item, { n }, dt))
  end
end

return M
