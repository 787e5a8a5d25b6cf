--- The torch-like runtime a bench receives: host tensors (C-backed, from
-- kernbench.tensor_c), device tensors placed over cubes and PEs by a
-- DPPolicy, allocation, MMU mappings, and timed MemoryWrite / MemoryRead
-- transactions that move real bytes through the modelled fabric.
-- Reference: docs/torch.md.
--
--   local torch = require("kernbench.torch").new { topology = t, device = 0 }
--   local x = torch.randn({ 256, 1024 }, { dtype = "f16" })          -- host tensor
--   local d = torch.empty({ 256, 1024 }, { dtype = "f16", dp = torch.DPPolicy { cube = "row_wise" } })
--   d:copy_(x)                -- timed writes into every shard
--   local y = d:cpu()         -- timed reads, gathered into a host tensor
--   torch.synchronize()       -- drain outstanding work
--
-- The table a bench receives is a facade: its functions are bound to a
-- Runtime object (lua/kernbench/torch/runtime.lua, which documents the
-- interface extensions use); kernel launches (kernbench.launch), PE-to-PE
-- queues (kernbench.ccl.install), ranks (kernbench.ccl.spawn) and the
-- process group (kernbench.ccl.distributed) extend it.
local options = require "kernbench.options"
local placement = require "kernbench.placement"
local runtime = require "kernbench.torch.runtime"
local tensors = require "kernbench.torch.tensors"
local verify = require "kernbench.torch.verify"

local M = {}

--- "worst |error| 0.5 at [1, 3] (got 2.5, expected 2)" for a record of
-- torch.verified().
M.describe_worst = verify.describe_worst

-- The extensions, in the order they are attached (each attach(rt)).
local EXTENSIONS = { "kernbench.launch", "kernbench.ccl.install", "kernbench.ccl.spawn", "kernbench.ccl.distributed" }

--- A new runtime on a new simulation of `opts.topology` (default: the
-- command line's); `opts.device` is the SIP that torch.ahbm.current_device()
-- starts on (nil: none, tensors go to SIP 0); `opts.pa_fallback = true`
-- uses an unmapped VA as a PA (a compatibility option, docs/decisions.md).
function M.new(opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("kb.torch: argument 1 (opts) must be a table such as {topology = ...} or nil, got %s"):format(type(opts)), 2)
  end
  options.check("kb.torch", opts, { "topology", "device", "data_mode", "data", "op_log", "pa_fallback" }, 2)
  local tc = require "kernbench.tensor_c"
  local rt = runtime.new(opts or {})
  local R = runtime.Runtime
  local function method(name) rt:export(name, rt:bind(R[name])) end
  rt:export("DPPolicy", placement.DPPolicy)
  rt:export("topology", rt.topo)
  rt:export("sim", rt.s)
  rt:export("spec", rt.P)
  for _, name in ipairs { "manual_seed", "empty", "zeros", "ones", "full", "tensor" } do method(name) end
  rt:export("arange", function(...) return tc.arange(...) end)
  method("rand")
  method("randn")
  for _, name in ipairs(tensors.HOST) do rt:export(name, assert(tc[name], name)) end
  method("to_device")
  local set_device, current_device = rt:bind(R.set_device), rt:bind(R.current_device)
  rt:export("ahbm", { set_device = set_device, current_device = current_device,
                      device_count = rt:bind(R.device_count) })
  rt:export("accelerator", { set_device_index = set_device, current_device_index = current_device })
  local api = rt.api
  method("wait")
  method("synchronize")
  rt:export("wait_all", api.synchronize)
  method("now_ns")
  rt:export("elapsed_ns", api.now_ns)
  for _, name in ipairs { "cleanup", "alloc_tcm", "free_tcm" } do method(name) end
  rt:export("data", rt.data)
  rt:export("verify_data", rt.verify_data)
  for _, ext in ipairs(EXTENSIONS) do require(ext).attach(rt) end
  rt:export("tcm_reserved_bytes", rt.tcm_reserved)
  rt:export("tcm_bytes", rt.tcm_bytes)
  for _, name in ipairs { "allocators_pristine", "translate", "verify", "verified", "stats", "close" } do
    method(name)
  end
  return api
end

return M
