--- Placement of tensors over cubes and PEs: DPPolicy and its
-- resolver. A policy splits a tensor at two levels, cubes then PEs within a
-- cube, each level "replicate", "row_wise" or "column_wise". The result is
-- a list of shards {sip, cube, pe, offset_bytes, nbytes}: contiguous byte
-- ranges of the tensor's device layout. See docs/torch.md ("Placement").
--
-- Layout (the spec leaves the split formulas open; docs/decisions.md):
--   * a tensor is viewed as 2-D (rows = product of all but the last
--     dimension, cols = the last; a 1-D tensor is one row);
--   * row_wise splits rows into n parts as torch.tensor_split does (the
--     first rows % n parts get one row more); a part is contiguous already;
--   * column_wise splits columns the same way; each part is stored as its
--     own row-major block, the blocks one after another, so a shard is
--     still one contiguous range (the device layout differs from the host
--     layout; reading a tensor back undoes it);
--   * replicate gives every cube (or PE) the whole block at offset 0;
--   * the PE level splits each cube's block again by the same rules.
local options = require "kernbench.options"

local M = {}

local KINDS = { replicate = true, row_wise = true, column_wise = true }

local policy_mt = {}
policy_mt.__index = policy_mt
policy_mt.__name = "DPPolicy"
function policy_mt.__tostring(p)
  return ("DPPolicy{cube=%s, pe=%s, num_cubes=%s, num_pes=%s}"):format(p.cube, p.pe,
    tostring(p.num_cubes), tostring(p.num_pes))
end

--- DPPolicy{cube=, pe=, num_cubes=, num_pes=}: "replicate" by default at both
-- levels; num_cubes / num_pes default to the topology's counts at resolve time.
function M.DPPolicy(opts)
  opts = opts or {}
  if type(opts) ~= "table" then error("DPPolicy: expected a table of options", 2) end
  for k in pairs(opts) do
    if k == "sip" or k == "num_sips" then
      error(("DPPolicy: '%s' was removed; a tensor's SIP is torch.ahbm.set_device(rank)"):format(k), 2)
    end
  end
  options.check("DPPolicy", opts, { "cube", "pe", "num_cubes", "num_pes" }, 2, "its fields")
  local p = setmetatable({ cube = opts.cube or "replicate", pe = opts.pe or "replicate",
                           num_cubes = opts.num_cubes, num_pes = opts.num_pes }, policy_mt)
  for _, level in ipairs { "cube", "pe" } do
    if not KINDS[p[level]] then
      error(("DPPolicy: %s = '%s' (replicate, row_wise, column_wise)"):format(level, tostring(p[level])), 2)
    end
  end
  for _, k in ipairs { "num_cubes", "num_pes" } do
    local v = p[k]
    if v ~= nil and (math.type(v) ~= "integer" or v < 1) then
      error(("DPPolicy: %s must be a positive integer, got %s"):format(k, tostring(v)), 2)
    end
  end
  return p
end

function M.is_policy(x) return getmetatable(x) == policy_mt end

-- The largest tensor: 2^46 bytes, as in C (KB_VIEW_MAX_BYTES, src/mem/view.h),
-- so that every product of sizes below is exact (Lua integers wrap
-- silently, floats lose precision above 2^53).
local MAX_BYTES = 1 << 46
local MAXD = 8

--- Checks a device tensor's shape for `call` (errors at `level` above the
-- caller): a table of at most 8 sizes, each an integer >= 1 (a float with
-- an integral value counts), whose bytes (with itemsize-byte elements of
-- dtype) are at most 2^46. Returns a copy, as integers.
function M.check_shape(shape, itemsize, dtype, call, level)
  level = (level or 1) + 1
  if type(shape) ~= "table" then
    error(("%s: the shape must be a table of sizes like {64, 128}, got %s"):format(call, type(shape)), level)
  end
  if #shape > MAXD then error(("%s: the shape has %d sizes (at most %d)"):format(call, #shape, MAXD), level) end
  local out, bytes = {}, itemsize
  for i = 1, #shape do
    local d = shape[i]
    local v = math.type(d) and math.tointeger(d)
    if not v or v < 1 then
      error(("%s: size %d of the shape must be an integer >= 1 (a device tensor holds at least one element), "
             .. "got %s"):format(call, i - 1, type(d) == "number" and tostring(d) or type(d)), level)
    end
    if v > MAX_BYTES // bytes then
      local s = {}
      for j = 1, #shape do s[j] = tostring(shape[j]) end
      error(("%s: shape [%s] of %s is too large (more than 2^46 bytes)"):format(call, table.concat(s, ", "), dtype),
            level)
    end
    bytes = bytes * v
    out[i] = v
  end
  return out
end

--- The 2-D view of a shape: {rows, cols}.
function M.shape_2d(shape)
  if #shape == 0 then return 1, 1 end
  local rows = 1
  for i = 1, #shape - 1 do rows = rows * shape[i] end
  return rows, shape[#shape]
end

-- Part k (0-based) of n when splitting `len` items: start and count.
local function part(len, n, k)
  local base, extra = len // n, len % n
  local start = k * base + math.min(k, extra)
  return start, base + (k < extra and 1 or 0)
end

-- Splits a block n ways by `kind`. A block is {rows, cols, offset_bytes,
-- row0, col0}: its size, where it starts in the device layout, and where
-- its first element is in the host tensor. Returns the list of parts.
local function split(kind, blk, n, itemsize, what)
  local rows, cols, off, row0, col0 = blk[1], blk[2], blk[3], blk[4], blk[5]
  local out = {}
  if kind == "replicate" then
    for _ = 1, n do out[#out + 1] = { rows, cols, off, row0, col0 } end
  elseif kind == "row_wise" then
    if rows < n then
      error(("%s: row_wise over %d needs at least %d rows, the block has %d"):format(what, n, n, rows), 0)
    end
    for k = 0, n - 1 do
      local r0, r = part(rows, n, k)
      out[#out + 1] = { r, cols, off + r0 * cols * itemsize, row0 + r0, col0 }
    end
  else -- column_wise
    if cols < n then
      error(("%s: column_wise over %d needs at least %d columns, the block has %d"):format(what, n, n, cols), 0)
    end
    for k = 0, n - 1 do
      local c0, c = part(cols, n, k)
      out[#out + 1] = { rows, c, off + rows * c0 * itemsize, row0, col0 + c0 }
    end
  end
  return out
end

--- Resolves a policy for a tensor of `shape` (a list of dims) with elements
-- of `itemsize` bytes: {sip=, cube=, pe=, offset_bytes=, nbytes=} per shard,
-- cube-major, PE within cube; each also names its block of the host tensor
-- (rows, cols, row0, col0 in the 2-D view). opts: num_cubes, num_pes (the topology's,
-- overridden by the policy's own), sip (the target SIP).
function M.resolve(policy, shape, itemsize, opts)
  local num_cubes = policy.num_cubes or opts.num_cubes
  local num_pes = policy.num_pes or opts.num_pes
  if policy.num_cubes and opts.num_cubes and policy.num_cubes > opts.num_cubes then
    error(("DPPolicy: num_cubes = %d, but a SIP has %d cubes"):format(policy.num_cubes, opts.num_cubes), 0)
  end
  if policy.num_pes and opts.num_pes and policy.num_pes > opts.num_pes then
    error(("DPPolicy: num_pes = %d, but a cube has %d PEs"):format(policy.num_pes, opts.num_pes), 0)
  end
  local rows, cols = M.shape_2d(shape)
  local shards = {}
  for c, cb in ipairs(split(policy.cube, { rows, cols, 0, 0, 0 }, num_cubes, itemsize, "cube level")) do
    for p, pb in ipairs(split(policy.pe, cb, num_pes, itemsize, "PE level")) do
      shards[#shards + 1] = { sip = opts.sip or 0, cube = c - 1, pe = p - 1, offset_bytes = pb[3],
                              nbytes = pb[1] * pb[2] * itemsize,
                              -- the shard's block of the host tensor (2-D view, 0-based)
                              rows = pb[1], cols = pb[2], row0 = pb[4], col0 = pb[5] }
    end
  end
  return shards
end

--- Bytes of the tensor's device layout (what a VA range must cover).
function M.layout_bytes(shape, itemsize)
  local rows, cols = M.shape_2d(shape)
  return rows * cols * itemsize
end

return M
