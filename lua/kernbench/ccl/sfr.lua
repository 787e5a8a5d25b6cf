--- The wiring collectives install (the spec's SFR configurations, §2.4-§2.5):
-- which PEs take part, in which rank order, and their neighbour tables, for
-- torch.install_ipcq (docs/ipcq.md). docs/ccl.md describes the algorithms
-- that use them.
--
--   local w = sfr.intercube_multisip(P)   -- P = topology:params()
--   torch.install_ipcq { topology = w.neighbors, pes = w.pes, ... }
local M = {}

--- The SIP grid of the topology's `system.sips` (§2.5): ring_1d gives 0, 0
-- (a line); torus_2d and mesh_2d_no_wrap take sips.w x sips.h, which must
-- hold every SIP, or without them a square of SIPs. Errors as the spec's.
function M.sip_grid(P)
  local n, kind = P.sips, P.sip_topology
  if kind == "ring_1d" then return 0, 0 end
  local w, h = P.sip_grid_w or 0, P.sip_grid_h or 0
  if w > 0 or h > 0 then
    if w * h ~= n then error(("sip layout %dx%d != sips.count (%d)"):format(w, h, n), 2) end
    return w, h
  end
  local side = math.floor(math.sqrt(n) + 0.5)
  if side * side ~= n then error("non-square sips.count requires explicit sips.w/h", 2) end
  return side, side
end

--- The SIP topology's kind as the algorithms number it (§4.1).
M.TOPO_KIND = { ring_1d = 0, torus_2d = 1, mesh_2d_no_wrap = 2 }

-- The neighbour of SIP s one step in direction (dx, dy) on the SIP topology,
-- or nil: a ring over all SIPs (ring_1d, x only), a w x h grid with wrap
-- (torus_2d) or without (mesh_2d_no_wrap).
local function sip_step(P, s, dx, dy)
  local n = P.sips
  if P.sip_topology == "ring_1d" then
    if dy ~= 0 or n < 2 then return nil end
    return (s + dx) % n
  end
  local w, h = M.sip_grid(P)
  local x, y = s % w + dx, s // w + dy
  if P.sip_topology == "torus_2d" then
    x, y = x % w, y % h
  elseif x < 0 or x >= w or y < 0 or y >= h then
    return nil
  end
  local t = y * w + x
  return t ~= s and t or nil
end

--- pe0 of every cube of every SIP (rank = sip x cubes_per_sip + cube), wired
-- N/S/E/W to the cubes next to it in its SIP's cube mesh (no wrap-around)
-- and global_N/S/E/W to the same cube of the neighbouring SIPs on the
-- system's SIP topology (§2.4, "intercube_multisip"). Every cube is wired,
-- so any root can be used without rewiring. Returns {pes, neighbors, world}.
function M.intercube_multisip(P)
  local w, h, nc = P.cube_w, P.cube_h, P.cubes_per_sip
  local kind = P.sip_topology
  if not M.TOPO_KIND[kind] then
    error(("system.sips.topology %s: the collectives know ring_1d, torus_2d and mesh_2d_no_wrap"):format(
      tostring(kind)), 2)
  end
  if kind ~= "ring_1d" then M.sip_grid(P) end -- its errors, now
  local pes = {}
  for s = 0, P.sips - 1 do
    for c = 0, nc - 1 do pes[#pes + 1] = { sip = s, cube = c, pe = 0 } end
  end
  local function neighbors(rank)
    local s, c = rank // nc, rank % nc
    local x, y = c % w, c // w
    local t = {}
    if x + 1 < w then t.E = rank + 1 end
    if x > 0 then t.W = rank - 1 end
    if y > 0 then t.N = rank - w end
    if y + 1 < h then t.S = rank + w end
    local dirs = { global_E = { 1, 0 }, global_W = { -1, 0 }, global_N = { 0, -1 }, global_S = { 0, 1 } }
    for name, d in pairs(dirs) do
      local peer = sip_step(P, s, d[1], d[2])
      if peer then t[name] = peer * nc + c end
    end
    return t
  end
  return { pes = pes, world = #pes, neighbors = function(rank) return neighbors(rank) end }
end

return M
