--- Running a collective algorithm (a module of kernbench.ccl.algorithms,
-- docs/ccl.md) on every SIP of a runtime: the wiring installed once, one
-- launch per SIP with the module's arguments and the trailing sip_* group,
-- and the critical path (crit_ns, the largest pe_exec_ns over the SIPs).
--
--   local run = require "kernbench.ccl.run"
--   local r = run.allreduce(torch, "lrab_hierarchical_allreduce", tensors, {root = 15})
--   -- tensors[sip + 1]: that SIP's [cubes, n_elem] f16/bf16/f32 device tensor, row c on cube c's PE 0
local dtypes = require "kernbench.ccl.dtypes"
local sfr = require "kernbench.ccl.sfr"
local ccl_args = require "kernbench.ccl.args"

local M = {}

local INSTALL = { buffer_kind = 1, n_slots = 1, slot_size = 1, backpressure = 1 }

--- The algorithm module `name` (kernbench.ccl.algorithms.<name>, or the
-- Lua module path `module` a ccl.yaml entry gives), checked against the
-- contract: kernel and kernel_args functions.
function M.algorithm(name, module)
  if type(name) ~= "string" or not name:match("^[%w_]+$") then
    error(("ccl: an algorithm is named by its module under kernbench.ccl.algorithms, got %s"):format(tostring(name)), 2)
  end
  local ok, mod = pcall(require, module or ("kernbench.ccl.algorithms." .. name))
  if not ok then error(("ccl: cannot load algorithm '%s': %s"):format(name, tostring(mod)), 2) end
  if type(mod) ~= "table" or type(mod.kernel) ~= "function" or type(mod.kernel_args) ~= "function" then
    error(("ccl: algorithm module '%s' must return a table with the functions kernel and kernel_args"):format(name), 2)
  end
  return mod
end

-- algo.kernel_args(...)'s result, checked: packed arguments
-- (kernbench.ccl.args.pack, from the module's declaration).
local function packed_args(name, algo, ...)
  local a = algo.kernel_args(...)
  if not ccl_args.declaration_of(a) then
    error(("ccl: algorithm '%s': kernel_args must return its named arguments packed by kernbench.ccl.args.pack "
      .. "(docs/ccl.md), got %s"):format(name, type(a)), 3)
  end
  return a
end

--- Installs algorithm module algo's wiring (its `wiring(P)`: {pes,
-- topology (a name) or neighbors (a function)}), or the intercube_multisip
-- one (opts: buffer_kind, n_slots, slot_size, backpressure; docs/ipcq.md),
-- and returns what launches need: {plan, sip_w, sip_h, topology}.
function M.install(torch, opts, algo)
  opts = opts or {}
  local P = torch.spec
  local wiring = algo and algo.wiring and algo.wiring(P) or sfr.intercube_multisip(P)
  local install = { topology = wiring.topology or wiring.neighbors, pes = wiring.pes }
  for k in pairs(INSTALL) do install[k] = opts[k] end
  local plan = torch.install_ipcq(install)
  local sw, sh = sfr.sip_grid(P)
  return { plan = plan, sip_w = sw, sip_h = sh, topology = P.sip_topology }
end

--- The original's rings (pe_ipcq.attrs.slot_fits_payload, docs/fidelity.md):
-- a slot holds a collective's whole payload, so each cube sends one message
-- and nothing is chunked. A payload of `bytes` larger than w's slots
-- reinstalls the wiring with slots of its size (rounded up to 16 bytes)
-- first, as the original's sweeps bumped slot_size; w.plan is the new plan.
-- Call it before any rank launches (a reinstall under a running collective
-- is refused by torch.install_ipcq).
function M.fit_slots(torch, w, algo, bytes)
  local q = torch.topology:node_at { kind = "pe_ipcq", sip = 0, cube = 0, pe = 0 }
  if not (q and torch.topology:node(q).attrs.slot_fits_payload) then return end
  local need = (bytes + 15) // 16 * 16
  if need <= w.plan.slot_size then return end
  local p = w.plan
  w.plan = M.install(torch, { buffer_kind = p.buffer_kind, n_slots = p.n_slots, slot_size = need,
                              backpressure = p.backpressure }, algo).plan
end

--- The shape a tensor must have for the collectives: [cubes, n_elem], row c
-- on cube c's PE 0 of one SIP, or any tensor wholly on cube 0's PE 0 (one
-- row of all its elements). Returns n_elem, the cubes used and the SIP.
function M.check_tensor(torch, t, call)
  local P = torch.spec
  if type(t) ~= "table" or not t.shards or not t.shape then
    error(("%s: expected a device tensor (a host tensor is not deployed: torch.to_device or dp= first), got %s"):format(
      call, type(t)), 3)
  end
  if t.freed then error(("%s: tensor '%s' was freed"):format(call, tostring(t.name)), 3) end
  local one = t.shards[1]
  if #t.shards == 1 and one.cube == 0 and one.pe == 0 and dtypes.CODE[t.dtype] then
    local n = 1 -- a whole tensor on cube 0's PE 0: one row of all its elements (the one-cube path)
    for _, d in ipairs(t.shape) do n = n * d end
    return n, 1, one.sip
  end
  if not dtypes.CODE[t.dtype] or #t.shape ~= 2 or t.shape[1] < 1 or t.shape[1] > P.cubes_per_sip then
    error(("%s: the tensor must be [cubes, n_elem] f16, bf16 or f32 (a row per cube, at most %d cubes), got [%s] %s"):format(call,
      P.cubes_per_sip, table.concat(t.shape, ", "), tostring(t.dtype)), 3)
  end
  for i, sh in ipairs(t.shards) do
    if sh.cube ~= i - 1 or sh.pe ~= 0 or sh.sip ~= t.shards[1].sip or #t.shards ~= t.shape[1] then
      error(("%s: the tensor must be placed a row per cube on PE 0 of one SIP "
        .. "(DPPolicy{cube = \"row_wise\", pe = \"replicate\", num_pes = 1}); shard %d is on sip%d.cube%d.pe%d"):format(
        call, i, sh.sip, sh.cube, sh.pe), 3)
    end
  end
  return t.shape[2], t.shape[1], t.shards[1].sip
end

--- Launches algorithm `algo` (a module) on `tensor`'s SIP with that SIP as
-- the rank; returns the launch handle. w: from M.install. opts: op, root.
function M.launch_rank(torch, w, name, algo, tensor, opts, call)
  opts = opts or {}
  local P = torch.spec
  local n_elem, cubes, sip = M.check_tensor(torch, tensor, call or "ccl")
  local cube_w, cube_h = P.cube_w, P.cube_h
  if cubes == 1 then cube_w, cube_h = 1, 1 -- one cube per SIP: the fast path
  elseif cubes ~= cube_w * cube_h then
    error(("%s: the tensor covers %d cubes: all %d of the SIP's, or one"):format(call or "ccl", cubes,
      cube_w * cube_h), 3)
  end
  local kind = (algo.TOPO_NAME_TO_KIND or {})[P.sip_topology] or 0
  local cpu = torch.topology:node_at { kind = "pe_cpu", sip = sip, cube = 0, pe = 0 }
  local scratch = cpu and math.floor(torch.topology:node(cpu).attrs.scratch_kb * 1024) or nil
  local args = packed_args(name, algo, P.sips, n_elem, { cube_w = cube_w, cube_h = cube_h, root = opts.root,
                                                        slot_size = w.plan.slot_size, op = opts.op,
                                                        scratch_bytes = scratch, cubes = cubes,
                                                        cubes_per_sip = P.cubes_per_sip, dtype = tensor.dtype })
  local group = ccl_args.pack(ccl_args.SIP_GROUP, { sip_rank = sip, sip_topo_kind = kind, sip_topo_w = w.sip_w,
                                                    sip_topo_h = w.sip_h })
  local device = torch.ahbm.current_device()
  torch.ahbm.set_device(sip)
  local h = torch.launch_async({ name = name, fn = algo.kernel }, { pes = 1, cubes = cubes }, tensor,
    ccl_args.values(args, group))
  torch.ahbm.set_device(device) -- as it was (nil included)
  return h
end

--- The arguments line collectives (broadcast, reduce) share, from LRAB's
-- rules (its kernel_args): {n_elem, cube_w, cube_h, chunk, group, dtype
-- (code), sip_topo_kind, sip_topo_w, sip_topo_h}.
function M.line_args(torch, grp, tensor, cubes)
  local P = torch.spec
  local cube_w, cube_h = P.cube_w, P.cube_h
  if cubes == 1 then cube_w, cube_h = 1, 1 end
  local cpu = torch.topology:node_at { kind = "pe_cpu", sip = 0, cube = 0, pe = 0 }
  local n_elem = M.check_tensor(torch, tensor, "ccl")
  local a = require("kernbench.ccl.algorithms.lrab_hierarchical_allreduce").kernel_args(P.sips,
    n_elem, { cube_w = cube_w, cube_h = cube_h, slot_size = grp.wiring.plan.slot_size, dtype = tensor.dtype,
              scratch_bytes = cpu and math.floor(torch.topology:node(cpu).attrs.scratch_kb * 1024) or nil })
  return { n_elem = a.n_elem, cube_w = a.cube_w, cube_h = a.cube_h, chunk = a.chunk, group = a.group, dtype = a.dtype,
           sip_topo_kind = sfr.TOPO_KIND[P.sip_topology] or 0, sip_topo_w = grp.wiring.sip_w,
           sip_topo_h = grp.wiring.sip_h }
end

--- Launches kernel function fn (named `name`) on `sip`'s PE 0 of `cubes`
-- cubes with the tensor and the named arguments `named`, packed by the
-- kernel's declaration `decl` (kernbench.ccl.args); returns the handle.
function M.launch_fn(torch, name, fn, decl, tensor, cubes, sip, named)
  local packed = ccl_args.pack(decl, named)
  local device = torch.ahbm.current_device()
  torch.ahbm.set_device(sip)
  local h = torch.launch_async({ name = name, fn = fn }, { pes = 1, cubes = cubes }, tensor, ccl_args.values(packed))
  torch.ahbm.set_device(device)
  return h
end

--- All-reduce among the rows of one tensor, each row on its own PE (any set
-- of PEs of one SIP: the 8 PEs of a cube, every PE of the SIP ...), with the
-- ring all-reduce: the rings go around the rows' PEs in row order; every row
-- ends with the combination of all rows. tensor: [rows, n_elem] (f16, bf16,
-- f32) whose shards hold one row each (e.g. DPPolicy{pe = "row_wise",
-- num_cubes = 1}). opts: op, and the install's buffer_kind, n_slots,
-- slot_size, backpressure. Returns {crit_ns, rows}.
function M.allreduce_rows(torch, tensor, opts)
  opts = opts or {}
  local call = "ccl.allreduce_rows"
  if type(tensor) ~= "table" or not tensor.shards or not tensor.shape or #tensor.shape ~= 2 then
    error(call .. ": expected a [rows, n_elem] device tensor", 2)
  end
  if not dtypes.CODE[tensor.dtype] then
    error(("%s: the rows must be f16, bf16 or f32, got %s"):format(call, tostring(tensor.dtype)), 2)
  end
  local rows, n_elem = tensor.shape[1], tensor.shape[2]
  local row_bytes = n_elem * dtypes.SIZE[dtypes.CODE[tensor.dtype]]
  local pes, sip, maxpe, maxcube = {}, tensor.shards[1].sip, 0, 0
  for i, sh in ipairs(tensor.shards) do
    if sh.nbytes ~= row_bytes or sh.offset_bytes ~= (i - 1) * row_bytes or sh.sip ~= sip then
      error(("%s: each shard must hold one row, in row order, on one SIP; shard %d holds %d bytes at %d"):format(
        call, i, sh.nbytes, sh.offset_bytes), 2)
    end
    pes[i] = { sip = sh.sip, cube = sh.cube, pe = sh.pe }
    maxpe, maxcube = math.max(maxpe, sh.pe), math.max(maxcube, sh.cube)
  end
  if #pes ~= rows or rows < 2 then error(("%s: needs at least two rows on %d PEs"):format(call, #pes), 2) end
  local install = { topology = "ring_1d", pes = pes }
  for k in pairs(INSTALL) do install[k] = opts[k] end
  local plan = torch.install_ipcq(install)
  local algo = M.algorithm("ring_allreduce")
  local cpu = torch.topology:node_at { kind = "pe_cpu", sip = sip, cube = 0, pe = 0 }
  local args = packed_args("ring_allreduce", algo, rows, n_elem, { slot_size = plan.slot_size, op = opts.op,
    dtype = tensor.dtype, rows_by_rank = true,
    scratch_bytes = cpu and math.floor(torch.topology:node(cpu).attrs.scratch_kb * 1024) or nil })
  local device = torch.ahbm.current_device()
  torch.ahbm.set_device(sip)
  local h = torch.launch({ name = "ring_allreduce rows", fn = algo.kernel }, { pes = maxpe + 1, cubes = maxcube + 1 },
    tensor, ccl_args.values(args))
  torch.ahbm.set_device(device)
  return { crit_ns = h.result.pe_exec_ns, rows = rows }
end

--- All-reduce of `tensors` (one device tensor per SIP, in SIP order) with
-- algorithm `name`; opts: op ("sum", "max", "min"), root (a cube index),
-- and the install's buffer_kind, n_slots, slot_size, backpressure. Installs
-- the wiring, launches on every SIP and waits. Returns {crit_ns, n_elem,
-- sips = {{sip, pe_exec_ns}, ...}}.
function M.allreduce(torch, name, tensors, opts)
  opts = opts or {}
  local algo = M.algorithm(name)
  local P = torch.spec
  if type(tensors) ~= "table" or #tensors ~= P.sips then
    error(("ccl.allreduce: expected one device tensor per SIP (%d), got %s"):format(P.sips,
      type(tensors) == "table" and #tensors or type(tensors)), 2)
  end
  local w = M.install(torch, opts, algo)
  local hs = {}
  for s = 0, P.sips - 1 do
    local _, _, sip = M.check_tensor(torch, tensors[s + 1], "ccl.allreduce")
    if sip ~= s then
      error(("ccl.allreduce: tensors[%d] must be on SIP %d, it is on SIP %d"):format(s + 1, s, sip), 2)
    end
    hs[#hs + 1] = M.launch_rank(torch, w, name, algo, tensors[s + 1], opts, "ccl.allreduce")
  end
  local r = { n_elem = tensors[1].shape[2], crit_ns = 0, sips = {} }
  for s, h in ipairs(hs) do
    torch.wait(h)
    local v = h.event:value()
    r.sips[s] = { sip = s - 1, pe_exec_ns = v.pe_exec_ns }
    r.crit_ns = math.max(r.crit_ns, v.pe_exec_ns)
  end
  return r
end

return M
