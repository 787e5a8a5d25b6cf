--- Checking results against a CPU reference (--verify-data; docs/torch.md,
-- "Kernels"): torch.verify and torch.verified, Runtime methods
-- (runtime.lua).
local device = require "kernbench.torch.device"
local tc = require "kernbench.tensor_c"

local M = {}
local R = {} -- the methods
M.methods = R

local TOL = { f32 = 1e-5, f16 = 1e-3, bf16 = 1e-2 } -- rtol = atol per dtype (docs/decisions.md); integers exact

function M.init(rt)
  rt.checks = {} -- what torch.verify checked
end

-- The 0-based index {i, j, ...} of flat element `flat` of a tensor of `shape`.
local function worst_index(shape, flat)
  local idx = {}
  for d = #shape, 1, -1 do
    idx[d] = flat % shape[d]
    flat = flat // shape[d]
  end
  return idx
end

--- "worst |error| 0.5 at [1, 3] (got 2.5, expected 2)" for a record of
-- torch.verified().
function M.describe_worst(r)
  if not r.index then return "no elements" end
  return ("worst |error| %.6g at [%s] (got %.9g, expected %.9g)"):format(r.worst, table.concat(r.index, ", "),
    r.got, r.expected)
end

--- Compares `got` (a host tensor, e.g. from d:cpu()) with `expected`
-- using the dtype's tolerance: |got - expected| <= tol + tol * |expected|
-- (exact for integers). Returns the worst absolute error, or nil in
-- timing-only runs (values are not computed; nothing to compare). A
-- mismatch raises an error naming the tensor and the worst element.
function R:verify(name, got, expected, o)
  local data = self.data
  if getmetatable(got) == self.Device then -- read back (timed) in both modes; compared in data mode only
    device.check_live(self, got, "verify")
    device.settle(self, got)
    if not data then
      device.read_back(self, got)
      got = nil
    else
      got = device.read_back(self, got)
    end
  end
  if (got ~= nil and not tc.is_tensor(got)) or (got == nil and data) or not tc.is_tensor(expected) then
    error(("torch.verify(%s): got must be a host or device tensor and expected a host tensor, "
           .. "got %s and %s"):format(tostring(name), self:describe(got), self:describe(expected)), 2)
  end
  if o ~= nil and type(o) ~= "table" then
    error(("torch.verify(%s): options must be a table {tol =}, got %s"):format(tostring(name), type(o)), 2)
  end
  if not data then return nil end
  local dt = got.dtype
  local tol = (o and o.tol) or TOL[dt] or 0
  local diff = tc.abs(tc.sub(got:float(), expected:float()))
  local r = { name = name, dtype = dt, worst = 0, tol = tol }
  if diff:numel() > 0 then -- the element with the largest |got - expected|
    local v, flat = tc.max(diff:flatten(), 0)
    r.worst, r.index = v:item(), worst_index(got:size(), flat:item())
    r.got, r.expected = got:float():flatten():get(flat:item()), expected:float():flatten():get(flat:item())
  end
  r.ok = tc.allclose(got:float(), expected:float(), tol, tol)
  self.checks[#self.checks + 1] = r
  if not r.ok then
    error(("verify %s: %s result differs from the reference beyond rtol = atol = %g: %s"):format(
      name, dt, tol, M.describe_worst(r)), 2)
  end
  return r.worst
end

--- What torch.verify checked so far: a list of {name, dtype, tol, ok, worst
-- (the largest |got - expected|), index (0-based, of that element), got, expected}.
function R:verified() return self.checks end

return M
