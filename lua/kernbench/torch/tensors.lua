--- Making tensors (docs/torch.md, "Making tensors"): host tensor
-- constructors and math come from the C module (kernbench.tensor_c); those
-- that create tensors accept {dp = DPPolicy} to place the result on the
-- device (Runtime methods, runtime.lua; device tensors: device.lua).
local options = require "kernbench.options"
local placement = require "kernbench.placement"
local tc = require "kernbench.tensor_c"

local M = {}
local R = {} -- the methods
M.methods = R

--- The host tensor functions torch passes through as they are.
M.HOST = { "allclose", "isclose", "equal", "matmul", "add", "sub", "mul", "div", "neg", "exp", "log", "sqrt", "abs",
           "relu", "sigmoid", "tanh", "softmax", "sum", "max", "min", "mean", "transpose", "narrow", "cat",
           "reshape", "clone", "zeros_like", "ones_like", "is_tensor", "from_bytes" }

function M.init(rt)
  rt.generator = tc.new_generator(0)
end

function R:manual_seed(n)
  if math.type(n) ~= "integer" then
    error(("torch.manual_seed: the seed must be an integer, got %s"):format(
      type(n) == "number" and tostring(n) or self:describe(n)), 2)
  end
  self.generator = tc.new_generator(n)
end

--- What a creating function's options may hold: a host tensor takes dtype; dp
-- places it on the device, where name and map apply (device.lua, R:create).
-- rand and randn also take generator = (else the runtime's, torch.manual_seed).
local OPTIONS = { "dtype", "dp", "name", "map", "generator" }

--- The options as the host library takes them ({dtype =} or a dtype string),
-- after refusing keys nobody reads (a typo, or name/map without dp, would
-- otherwise be dropped without a word). Errors name the bench's line.
local function host_options(o, call)
  if type(o) ~= "table" then return o end
  options.check(call, o, OPTIONS, 3, "a tensor's options") -- name and map: with dp (a device tensor)
  if o.dp == nil and (o.name ~= nil or o.map ~= nil) then
    error(("%s: %s applies to a device tensor: give dp = torch.DPPolicy{...} as well"):format(call,
      o.name ~= nil and "name" or "map"), 3)
  end
  if o.generator ~= nil and call ~= "torch.rand" and call ~= "torch.randn" then
    error(("%s: unknown option 'generator' (only torch.rand and torch.randn take one)"):format(call), 3)
  end
  return { dtype = o.dtype, generator = o.generator }
end

local function maybe_device(rt, host, o, init, call)
  if not (type(o) == "table" and o.dp) then return host end
  local dt = rt:create(host.shape, o, call)
  if init then dt:copy_(host) end
  return dt
end

function R:empty(shape, o)
  local h = host_options(o, "torch.empty")
  if type(o) == "table" and o.dp then return self:create(shape, o, "torch.empty") end
  return tc.empty(shape, h)
end
function R:zeros(shape, o)
  return maybe_device(self, tc.zeros(shape, host_options(o, "torch.zeros")), o, true, "torch.zeros")
end
function R:ones(shape, o)
  return maybe_device(self, tc.ones(shape, host_options(o, "torch.ones")), o, true, "torch.ones")
end
function R:full(shape, v, o)
  return maybe_device(self, tc.full(shape, v, host_options(o, "torch.full")), o, true, "torch.full")
end
function R:tensor(data, o)
  return maybe_device(self, tc.tensor(data, host_options(o, "torch.tensor")), o, true, "torch.tensor")
end
function R:rand(shape, o)
  local h = host_options(o, "torch.rand")
  return maybe_device(self, tc.rand(shape, h, type(h) == "table" and h.generator or self.generator), o, true, "torch.rand")
end
function R:randn(shape, o)
  local h = host_options(o, "torch.randn")
  return maybe_device(self, tc.randn(shape, h, type(h) == "table" and h.generator or self.generator), o, true, "torch.randn")
end

--- torch.to_device(t, dp[, {name =}]): places host tensor t on the device
-- with policy dp (a timed deploy).
function R:to_device(t, dp, o)
  if not tc.is_tensor(t) then
    error(("torch.to_device: argument 1 must be a host tensor, got %s%s"):format(self:describe(t),
      getmetatable(t) == self.Device and " (it is on the device already)" or ""), 2)
  end
  if dp ~= nil and not placement.is_policy(dp) then
    error(("torch.to_device: argument 2 must be a DPPolicy{...} (or nil: replicated), got %s"):format(
      self:describe(dp)), 2)
  end
  if o ~= nil and type(o) ~= "table" then
    error(("torch.to_device: options must be a table {name =}, got %s"):format(type(o)), 2)
  end
  o = o or {}
  local dt = self:create(t.shape, { dtype = t.dtype, dp = dp, name = o.name }, "torch.to_device")
  dt:copy_(t)
  return dt
end

return M
