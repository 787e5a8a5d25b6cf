--- kernbench.ccl.topologies: rank-level neighbour tables for PE-to-PE
-- queues (docs/ipcq.md describes them and how they are installed).
--
-- Ranks are 0-based integers 0..world-1. A rank's neighbour table maps a
-- direction name to a peer rank, e.g. {E = 1, W = 3}. A topology is a
-- built-in name (M.names) or a function(rank, world) returning that table.
--
--   M.neighbors(name, world[, opts]) -> function(rank) -> table
--   M.build(topology, world[, opts]) -> tables (tables[rank], rank 0-based)
--   M.reverse_direction(tables, my_rank, peer_rank, my_dir) -> dir or nil
--   M.pairs_of(tables, world) -> list of {rank, dir, peer, peer_dir}
--   M.info(name) -> {name, unidirectional, grid, description} or nil
--   M.grid(world[, opts]) -> w, h (of the 2-D topologies)
--
-- opts.w and opts.h give the grid of the 2-D topologies (see resolve_grid).
local M = {}

-- At most this many directions (queue slots) per rank.
M.MAX_DIRECTIONS = 16

--- The built-in topology names, in a fixed order.
M.names = { "ring_1d", "ring_1d_unidir", "mesh_2d", "torus_2d", "mesh_2d_no_wrap", "tree_binary" }

--- The opposite of each paired direction name. "parent", "left" and
-- "right" (tree_binary) have no entry.
M.opposite = {
  E = "W", W = "E", N = "S", S = "N",
  global_E = "global_W", global_W = "global_E",
  global_N = "global_S", global_S = "global_N",
  intra_E = "intra_W", intra_W = "intra_E",
  intra_N = "intra_S", intra_S = "intra_N",
}

local PREFIX = "ccl.topologies: "

local function is_int(v) return math.type(v) == "integer" end

local function check_world(world, level)
  if not is_int(world) or world < 1 then
    error(PREFIX .. "world must be an integer >= 1, got " .. tostring(world), level + 1)
  end
end

-- The largest divisor d of n with d * d <= n.
local function largest_low_divisor(n)
  local best = 1
  local d = 1
  while d * d <= n do
    if n % d == 0 then best = d end
    d = d + 1
  end
  return best
end

--- The grid (w, h) of a 2-D topology of `world` ranks, or nil and why.
-- Both given: w * h must be world. One given: it must divide world and
-- the other is the quotient. Neither: h is the largest divisor d of world
-- with d * d <= world and w = world / h (8 -> 4x2, 6 -> 3x2, 7 -> 7x1).
local function resolve_grid(name, world, opts)
  local w, h = opts.w, opts.h
  for _, kv in ipairs({ { "w", w }, { "h", h } }) do
    local k, v = kv[1], kv[2]
    if v ~= nil and (not is_int(v) or v < 1) then
      return nil, nil, ("%s: %s must be an integer >= 1, got %s (world %d)"):format(name, k, tostring(v), world)
    end
  end
  if w and h then
    if w * h ~= world then
      return nil, nil, ("%s: w=%d x h=%d = %d ranks, but world is %d"):format(name, w, h, w * h, world)
    end
  elseif w then
    if world % w ~= 0 then
      return nil, nil, ("%s: w=%d does not divide world %d"):format(name, w, world)
    end
    h = world // w
  elseif h then
    if world % h ~= 0 then
      return nil, nil, ("%s: h=%d does not divide world %d"):format(name, h, world)
    end
    w = world // h
  else
    h = largest_low_divisor(world)
    w = world // h
  end
  return w, h
end

--- The grid (w, h) that the 2-D topologies use for `world` ranks and
-- opts {w =, h =} (both optional; see resolve_grid). Raises if they do not
-- fit.
function M.grid(world, opts)
  check_world(world, 2)
  if opts ~= nil and type(opts) ~= "table" then
    error(PREFIX .. "opts must be a table {w =, h =}, got " .. type(opts), 2)
  end
  local w, h, err = resolve_grid("grid", world, opts or {})
  if not w then error(PREFIX .. err, 2) end
  return w, h
end

local function ring(world)
  return function(r)
    if world == 1 then return {} end
    return { E = (r + 1) % world, W = (r - 1) % world }
  end
end

-- A w x h grid, rank r at (r % w, r // w); E/W move in x, N/S in y. With
-- wrap, each dimension is a ring; a neighbour that is the rank itself (a
-- wrapped dimension of size 1) is left out. In a wrapped dimension of size
-- 2, both directions of that dimension reach the same peer.
local function grid(w, h, wrap)
  return function(r)
    local x, y = r % w, r // w
    local t = {}
    local function add(dir, nx, ny)
      if wrap then
        nx, ny = nx % w, ny % h
      elseif nx < 0 or nx >= w or ny < 0 or ny >= h then
        return
      end
      local peer = ny * w + nx
      if peer ~= r then t[dir] = peer end
    end
    add("E", x + 1, y)
    add("W", x - 1, y)
    add("N", x, y - 1)
    add("S", x, y + 1)
    return t
  end
end

local function tree(world)
  return function(r)
    local t = {}
    if r > 0 then t.parent = (r - 1) // 2 end
    if 2 * r + 1 < world then t.left = 2 * r + 1 end
    if 2 * r + 2 < world then t.right = 2 * r + 2 end
    return t
  end
end

-- name -> {info fields, make = function(world, opts) -> fn or nil, err}
local BUILTIN = {
  ring_1d = {
    unidirectional = false, grid = false,
    description = "1-D ring: E to rank+1, W to rank-1 (mod world)",
    make = function(world) return ring(world) end,
  },
  -- The same tables as ring_1d; the name says kernels only send E and
  -- receive W (info().unidirectional).
  ring_1d_unidir = {
    unidirectional = true, grid = false,
    description = "1-D ring used one way: send E to rank+1, receive W from rank-1",
    make = function(world) return ring(world) end,
  },
  mesh_2d = {
    unidirectional = false, grid = true,
    description = "w x h grid without wrap-around: E/W in x, N/S in y",
    make = function(world, opts)
      local w, h, err = resolve_grid("mesh_2d", world, opts)
      if not w then return nil, err end
      return grid(w, h, false)
    end,
  },
  torus_2d = {
    unidirectional = false, grid = true,
    description = "w x h grid wrapping around in both dimensions: E/W in x, N/S in y",
    make = function(world, opts)
      local w, h, err = resolve_grid("torus_2d", world, opts)
      if not w then return nil, err end
      return grid(w, h, true)
    end,
  },
  -- An alias of mesh_2d (no wrap-around), kept for the original's name.
  mesh_2d_no_wrap = {
    unidirectional = false, grid = true,
    description = "alias of mesh_2d: w x h grid without wrap-around",
    make = function(world, opts)
      local w, h, err = resolve_grid("mesh_2d_no_wrap", world, opts)
      if not w then return nil, err end
      return grid(w, h, false)
    end,
  },
  tree_binary = {
    unidirectional = false, grid = false,
    description = "binary tree: parent (rank-1)//2, children left 2*rank+1 and right 2*rank+2",
    make = function(world) return tree(world) end,
  },
}

local function unknown(name)
  return ("%sunknown topology '%s' (known: %s)"):format(PREFIX, tostring(name), table.concat(M.names, ", "))
end

-- neighbors() raising at `level` (relative to its caller).
local function neighbors(name, world, opts, level)
  local b = type(name) == "string" and BUILTIN[name] or nil
  if not b then error(unknown(name), level + 1) end
  check_world(world, level + 1)
  if opts ~= nil and type(opts) ~= "table" then
    error(PREFIX .. "opts must be a table {w =, h =}, got " .. type(opts), level + 1)
  end
  local fn, err = b.make(world, opts or {})
  if not fn then error(PREFIX .. err, level + 1) end
  return function(rank)
    if not is_int(rank) or rank < 0 or rank >= world then
      error(("%s%s: rank must be an integer in [0, %d), got %s"):format(PREFIX, name, world, tostring(rank)), 2)
    end
    return fn(rank)
  end
end

--- The neighbour function of built-in topology `name` for `world` ranks:
-- function(rank) -> {direction = peer}. opts.w and opts.h set the grid of
-- mesh_2d, torus_2d and mesh_2d_no_wrap. Raises for an unknown name, a
-- bad world or a grid that does not fit the world.
function M.neighbors(name, world, opts)
  local fn = neighbors(name, world, opts, 2) -- not a tail call: keeps error levels
  return fn
end

--- {name, unidirectional, grid, description} of built-in topology `name`,
-- or nil if there is none.
function M.info(name)
  local b = type(name) == "string" and BUILTIN[name] or nil
  if not b then return nil end
  return { name = name, unidirectional = b.unidirectional, grid = b.grid, description = b.description }
end

local function sorted_dirs(t)
  local dirs = {}
  for d in pairs(t) do
    if type(d) == "string" then dirs[#dirs + 1] = d end
  end
  table.sort(dirs)
  return dirs
end

--- The direction at peer_rank that points back to my_rank, given that my
-- direction my_dir points to peer_rank. The opposite of my_dir is preferred
-- (so on a 2-rank ring E pairs with W and W with E); else the first of the
-- peer's directions, in sorted name order, whose peer is my_rank; else nil.
-- tables[rank] is a rank's {direction = peer} table (rank 0-based).
function M.reverse_direction(tables, my_rank, peer_rank, my_dir)
  local t = tables[peer_rank]
  if type(t) ~= "table" then return nil end
  local opp = M.opposite[my_dir]
  if opp and t[opp] == my_rank then return opp end
  for _, d in ipairs(sorted_dirs(t)) do
    if t[d] == my_rank then return d end
  end
  return nil
end

--- Every (rank, direction) of `tables` paired with the peer's direction
-- back: a list of {rank =, dir =, peer =, peer_dir =}, ranks ascending and
-- directions in sorted order. Raises if a direction has no way back, or if
-- two directions of one rank pair with the same direction of a peer (each
-- direction is a distinct queue slot, invariant I3).
function M.pairs_of(tables, world)
  check_world(world, 2)
  local out = {}
  for rank = 0, world - 1 do
    local t = tables[rank]
    if type(t) ~= "table" then
      error(("%srank %d has no neighbour table"):format(PREFIX, rank), 2)
    end
    local taken = {} -- "peer/peer_dir" -> my direction
    for _, dir in ipairs(sorted_dirs(t)) do
      local peer = t[dir]
      local peer_dir = M.reverse_direction(tables, rank, peer, dir)
      if peer_dir == nil then
        error(("%srank %d direction %s -> rank %s: rank %s has no direction back to rank %d")
              :format(PREFIX, rank, dir, tostring(peer), tostring(peer), rank), 2)
      end
      local key = tostring(peer) .. "/" .. peer_dir
      if taken[key] then
        error(("%srank %d directions %s and %s both pair with rank %d direction %s"
               .. " (each direction must be a distinct slot, invariant I3)")
              :format(PREFIX, rank, taken[key], dir, peer, peer_dir), 2)
      end
      taken[key] = dir
      out[#out + 1] = { rank = rank, dir = dir, peer = peer, peer_dir = peer_dir }
    end
  end
  return out
end

-- A checked copy of the table `t` that rank `rank` got, or nil and why.
local function checked(t, rank, world)
  if type(t) ~= "table" then
    return nil, ("rank %d: the neighbour function returned %s, not a table"):format(rank, type(t))
  end
  local copy, n = {}, 0
  for k, v in pairs(t) do
    if type(k) ~= "string" or k == "" then
      return nil, ("rank %d: direction %s is not a non-empty string"):format(rank,
        type(k) == "string" and '""' or tostring(k))
    end
    local peer = math.tointeger(v)
    if not peer then
      return nil, ("rank %d: direction %s -> %s is not an integer rank"):format(rank, k, tostring(v))
    end
    if peer < 0 or peer >= world then
      return nil, ("rank %d: direction %s -> %d is out of range [0, %d)"):format(rank, k, peer, world)
    end
    if peer == rank then
      return nil, ("rank %d: direction %s -> %d points to the rank itself"):format(rank, k, peer)
    end
    n = n + 1
    copy[k] = peer
  end
  if n > M.MAX_DIRECTIONS then
    return nil, ("rank %d: %d directions, at most %d allowed"):format(rank, n, M.MAX_DIRECTIONS)
  end
  return copy
end

--- The neighbour tables of `topology` (a built-in name, or a
-- function(rank, world) -> {direction = peer}) for `world` ranks: tables[r]
-- for r = 0..world-1, each checked (directions are non-empty strings, peers
-- integers in [0, world) other than the rank itself, at most
-- M.MAX_DIRECTIONS directions) and copied. An integral float peer (2.0) is
-- stored as an integer. opts is passed to M.neighbors for a name.
function M.build(topology, world, opts)
  local fn
  if type(topology) == "function" then
    check_world(world, 2)
    fn = function(rank) return topology(rank, world) end
  elseif type(topology) == "string" then
    fn = neighbors(topology, world, opts, 2)
  else
    error(PREFIX .. "topology must be a name or a function(rank, world), got " .. type(topology), 2)
  end
  local tables = {}
  for rank = 0, world - 1 do
    local t, err = checked(fn(rank), rank, world)
    if not t then error(PREFIX .. err, 2) end
    tables[rank] = t
  end
  return tables
end

return M
