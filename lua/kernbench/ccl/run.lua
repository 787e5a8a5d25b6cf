--- Running a collective algorithm (a module of kernbench.ccl.algorithms,
-- docs/ccl.md) on every SIP of a runtime: the wiring installed once, one
-- launch per SIP with the module's arguments and the trailing sip_* group,
-- and the critical path (crit_ns, the largest pe_exec_ns over the SIPs).
--
--   local run = require "kernbench.ccl.run"
--   local r = run.allreduce(torch, "lrab_hierarchical_allreduce", tensors, {root = 15})
--   -- tensors[sip + 1]: that SIP's [cubes, n_elem] f16 device tensor, row c on cube c's PE 0
local sfr = require "kernbench.ccl.sfr"

local M = {}

local INSTALL = { buffer_kind = 1, n_slots = 1, slot_size = 1, backpressure = 1 }

--- The algorithm module `name` (kernbench.ccl.algorithms.<name>), checked
-- against the contract: kernel and kernel_args functions.
function M.algorithm(name)
  if type(name) ~= "string" or not name:match("^[%w_]+$") then
    error(("ccl: an algorithm is named by its module under kernbench.ccl.algorithms, got %s"):format(tostring(name)), 2)
  end
  local ok, mod = pcall(require, "kernbench.ccl.algorithms." .. name)
  if not ok then error(("ccl: cannot load algorithm '%s': %s"):format(name, tostring(mod)), 2) end
  if type(mod) ~= "table" or type(mod.kernel) ~= "function" or type(mod.kernel_args) ~= "function" then
    error(("ccl: algorithm module '%s' must return a table with the functions kernel and kernel_args"):format(name), 2)
  end
  return mod
end

--- All-reduce (sum) of `tensors` (one device tensor per SIP, in SIP order)
-- with algorithm `name`; opts: root (a cube index), buffer_kind, n_slots,
-- slot_size, backpressure (the install's; defaults docs/ipcq.md). Installs
-- the intercube_multisip wiring, launches on every SIP and waits. Returns
-- {crit_ns, sips = {{sip, pe_exec_ns}, ...}, n_elem}.
function M.allreduce(torch, name, tensors, opts)
  opts = opts or {}
  local algo = M.algorithm(name)
  local P = torch.spec
  if type(tensors) ~= "table" or #tensors ~= P.sips then
    error(("ccl.allreduce: expected one device tensor per SIP (%d), got %s"):format(P.sips,
      type(tensors) == "table" and #tensors or type(tensors)), 2)
  end
  local t = tensors[1]
  if type(t) ~= "table" or not t.shards or #t.shape ~= 2 or t.shape[1] ~= P.cubes_per_sip or t.dtype ~= "f16" then
    error(("ccl.allreduce: each tensor must be a [%d, n_elem] f16 device tensor (a row per cube)"):format(
      P.cubes_per_sip), 2)
  end
  local n_elem = t.shape[2]
  local wiring = sfr.intercube_multisip(P)
  local install = { topology = wiring.neighbors, pes = wiring.pes }
  for k in pairs(INSTALL) do install[k] = opts[k] end
  local plan = torch.install_ipcq(install)
  local sw, sh = sfr.sip_grid(P)
  local kind = (algo.TOPO_NAME_TO_KIND or {})[P.sip_topology] or 0
  local args = table.pack(algo.kernel_args(P.sips, n_elem, { cube_w = P.cube_w, cube_h = P.cube_h, root = opts.root,
                                                               slot_size = plan.slot_size }))
  local hs = {}
  local device = torch.ahbm.current_device()
  for s = 0, P.sips - 1 do
    torch.ahbm.set_device(s)
    local a = {}
    for i = 1, args.n do a[i] = args[i] end
    a[#a + 1], a[#a + 2], a[#a + 3], a[#a + 4] = s, kind, sw, sh
    hs[#hs + 1] = torch.launch_async({ name = name, fn = algo.kernel }, { pes = 1, cubes = P.cubes_per_sip },
      tensors[s + 1], table.unpack(a))
  end
  torch.ahbm.set_device(device) -- as it was (nil included)
  local r = { n_elem = n_elem, crit_ns = 0, sips = {} }
  for s, h in ipairs(hs) do
    torch.wait(h)
    local v = h.event:value()
    r.sips[s] = { sip = s - 1, pe_exec_ns = v.pe_exec_ns }
    r.crit_ns = math.max(r.crit_ns, v.pe_exec_ns)
  end
  return r
end

return M
