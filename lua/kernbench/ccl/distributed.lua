--- torch.distributed (spec §3.1, docs/ccl.md): the process group of the
-- simulated device, rank = SIP.
--
--   torch.distributed.init_process_group { backend = "kernbench" }  -- or "ahbm", the original's name
--   torch.multiprocessing.spawn(function(rank)
--     torch.ahbm.set_device(rank)
--     local t = torch.full({ 16, 1024 }, rank + 1, { dtype = "f16", dp = dp })
--     torch.distributed.all_reduce(t)          -- every rank's t now holds the sum
--   end, {}, torch.distributed.get_world_size())
--
-- init_process_group installs the collectives' queues once (the algorithm's
-- wiring, like a communicator's creation); all_reduce launches the
-- algorithm on the calling rank's SIP and waits for it (inside spawn the
-- scheduler drains once every rank has launched).
local config = require "kernbench.ccl.config"
local options = require "kernbench.options"
local dtypes = require "kernbench.ccl.dtypes"
local lrab = require "kernbench.ccl.algorithms.lrab_hierarchical_allreduce"
local lrab_coll = require "kernbench.ccl.lrab_collectives"
local run = require "kernbench.ccl.run"

local M = {}

local BACKENDS = { kernbench = true, ahbm = true }
local OPS = { sum = true, max = true, min = true }

local D = {} -- torch.distributed's functions, each fn(rt, ...) (rt: lua/kernbench/torch/runtime.lua)

local function op_of(op, call)
  if type(op) == "table" then op = op.op end
  op = op or "sum"
  if type(op) == "string" then op = op:lower():gsub("^reduceop%.", "") end
  if not OPS[op] then
    error(("torch.distributed.%s: op must be \"sum\", \"max\" or \"min\", got %s"):format(call, tostring(op)), 3)
  end
  return op
end

-- The process group once initialised (else an error naming the call).
local function need(rt, call)
  local group = rt.ext.dist.group
  if not group then
    error(("torch.distributed.%s: Default process group has not been initialized, please make sure to call "
      .. "init_process_group."):format(call), 3)
  end
  return group
end

--- init_process_group{backend = "kernbench", algorithm =, buffer_kind =,
-- n_slots =, slot_size =, backpressure =, root =} (or the backend name
-- alone). The options default to ccl.yaml's (docs/ccl.md); world_size is
-- accepted as PyTorch takes it and must agree with the topology: a rank
-- is a SIP.
function D.init_process_group(rt, o)
  local P, torch = rt.P, rt.api
  if type(o) == "string" then o = { backend = o } end
  o = o or {}
  if type(o) ~= "table" then
    error("torch.distributed.init_process_group: takes {backend = \"kernbench\", ...} or the backend's name", 2)
  end
  options.check("torch.distributed.init_process_group", o, { "backend", "algorithm", "buffer_kind", "n_slots",
    "slot_size", "backpressure", "root", "world_size" }, 2)
  if rt.ext.dist.group then
    error("torch.distributed.init_process_group: trying to initialize the default process group twice", 2)
  end
  local backend = o.backend or "kernbench"
  if not BACKENDS[backend] then
    error(("torch.distributed.init_process_group: unsupported backend '%s': collectives run on the simulated "
      .. "device (backend \"kernbench\", or the original's \"ahbm\")"):format(tostring(backend)), 2)
  end
  if o.world_size ~= nil and o.world_size ~= P.sips then
    error(("torch.distributed.init_process_group: world_size %s: a rank is a SIP and the topology has %d"):format(
      tostring(o.world_size), P.sips), 2)
  end
  -- ccl.yaml (--ccl FILE, beside the bench, ./, the shipped one): the
  -- algorithm and its rings; this call's own options win over it
  local conf = {}
  local path = config.find()
  if path then
    local cfg = config.load(path)
    for _, w in ipairs(cfg.warnings or {}) do io.stderr:write("kernbench: ", w, "\n") end
    if o.algorithm and not cfg.algorithms[o.algorithm] then -- named here only: ccl.yaml's defaults
      for k, v in pairs(cfg.defaults) do conf[k] = v end
      conf.source = cfg.source
    else
      conf = config.resolve(cfg, o.algorithm)
    end
  end
  local world = conf.world_size or P.sips
  if world ~= P.sips then
    error(("torch.distributed.init_process_group: %s: world_size %d: a rank is a SIP and the topology has %d "
      .. "(the legacy rank = PE world is not modelled)"):format(tostring(conf.source), world, P.sips), 2)
  end
  local name = o.algorithm or conf.name or "lrab_hierarchical_allreduce"
  local algo = run.algorithm(name, o.algorithm == nil and conf.module or nil)
  local function pick(k) if o[k] ~= nil then return o[k] end return conf[k] end
  local root = pick("root")
  if root == "center" then root = nil
  elseif root == "corner" then root = P.cube_w * P.cube_h - 1 end
  if root ~= nil and (math.type(root) ~= "integer" or root < 0 or root >= P.cubes_per_sip) then
    error(("torch.distributed.init_process_group: root must be \"center\", \"corner\" or a cube index 0 .. %d, "
      .. "got %s"):format(P.cubes_per_sip - 1, tostring(root)), 2)
  end
  local w = run.install(torch, { buffer_kind = pick("buffer_kind"), n_slots = pick("n_slots"),
                                 slot_size = pick("slot_size"), backpressure = pick("backpressure") }, algo)
  rt.ext.dist.group = { backend = backend, name = name, algo = algo, wiring = w, root = root, world = world,
                        config = conf.source }
end

--- (kernbench) What the group runs: {algorithm, config (the ccl.yaml used,
-- or nil), buffer_kind, n_slots, slot_size, backpressure, root}.
function D.get_config(rt)
  local group = need(rt, "get_config")
  local p = group.wiring.plan
  return { algorithm = group.name, config = group.config, buffer_kind = p.buffer_kind, n_slots = p.n_slots,
           slot_size = p.slot_size, backpressure = p.backpressure, root = group.root }
end

function D.is_initialized(rt) return rt.ext.dist.group ~= nil end

function D.get_backend(rt)
  return need(rt, "get_backend").backend
end

function D.get_world_size(rt)
  return need(rt, "get_world_size").world
end

--- The calling rank: the spawn worker's, 0 in the main script.
function D.get_rank(rt)
  need(rt, "get_rank")
  return rt:current_rank() or 0
end

--- all_reduce(tensor[, op]): op "sum" (default), "max" or "min" (also
-- {op = ...}). tensor: this rank's [cubes, n_elem] f16 device tensor, a
-- row per cube on PE 0 (docs/ccl.md). Returns when it is done.
function D.all_reduce(rt, tensor, op)
  local torch = rt.api
  local group = need(rt, "all_reduce")
  op = op_of(op, "all_reduce")
  local rank = rt:current_rank()
  if not rank and group.world > 1 then
    error(("torch.distributed.all_reduce: called outside torch.multiprocessing.spawn with %d ranks: the other "
      .. "ranks would never join; run one rank per SIP with spawn"):format(group.world), 2)
  end
  local n_elem, _, sip = run.check_tensor(torch, tensor, "torch.distributed.all_reduce")
  if sip ~= (rank or 0) then
    error(("torch.distributed.all_reduce: rank %d's tensor is on SIP %d: place it with "
      .. "torch.ahbm.set_device(rank) first"):format(rank or 0, sip), 2)
  end
  run.fit_slots(torch, group.wiring, group.algo, n_elem * dtypes.SIZE[dtypes.CODE[tensor.dtype]])
  local h = run.launch_rank(torch, group.wiring, group.name, group.algo, tensor, { op = op, root = group.root },
    "torch.distributed.all_reduce")
  rt:wait(h)
  return h
end

--- barrier(): every rank waits for the others: an all-reduce of one
-- element per cube, timed like any (not a no-op).
function D.barrier(rt)
  local torch = rt.api
  local group = need(rt, "barrier")
  local rank = rt:current_rank() or 0
  if not group.tokens then group.tokens = {} end
  local t = group.tokens[rank]
  if not t then
    local device = torch.ahbm.current_device()
    torch.ahbm.set_device(rank)
    t = torch.zeros({ 1, 8 }, { dtype = "f16", name = "barrier",
                                dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1, num_cubes = 1 } })
    torch.ahbm.set_device(device)
    group.tokens[rank] = t
  end
  return D.all_reduce(rt, t)
end

-- broadcast and reduce (lrab_collectives.lua) run on LRAB's wiring
local function line_collective(rt, call, tensor, rank_arg, what)
  local group = need(rt, call)
  if group.name ~= "lrab_hierarchical_allreduce" then
    error(("torch.distributed.%s: runs on the LRAB wiring; this group was initialised with algorithm '%s' "
      .. "(init_process_group{algorithm = \"lrab_hierarchical_allreduce\"})"):format(call, group.name), 3)
  end
  if math.type(rank_arg) ~= "integer" or rank_arg < 0 or rank_arg >= group.world then
    error(("torch.distributed.%s: %s must be a rank 0 .. %d, got %s"):format(call, what, group.world - 1,
      tostring(rank_arg)), 3)
  end
  local rank = rt:current_rank()
  if not rank and group.world > 1 then
    error(("torch.distributed.%s: called outside torch.multiprocessing.spawn with %d ranks: the other ranks "
      .. "would never join; run one rank per SIP with spawn"):format(call, group.world), 3)
  end
  local n_elem, cubes, sip = run.check_tensor(rt.api, tensor, "torch.distributed." .. call)
  if sip ~= (rank or 0) then
    error(("torch.distributed.%s: rank %d's tensor is on SIP %d"):format(call, rank or 0, sip), 3)
  end
  run.fit_slots(rt.api, group.wiring, group.algo, n_elem * dtypes.SIZE[dtypes.CODE[tensor.dtype]])
  return cubes, sip, group
end

-- The named arguments of lrab_collectives' broadcast (from src) and
-- reduce (to dst, into out_ptr) on this SIP; a: run.line_args.
local function broadcast_args(P, a, src, sip)
  return { n_elem = a.n_elem, chunk = a.chunk, group = a.group, dtype = a.dtype, src = src, n_sips = P.sips,
           sip_rank = sip, sip_topo_kind = a.sip_topo_kind, sip_topo_w = a.sip_topo_w, sip_topo_h = a.sip_topo_h }
end
local function reduce_args(P, group, a, out_ptr, op, dst, sip)
  return { out_ptr = out_ptr, n_elem = a.n_elem, cube_w = a.cube_w, cube_h = a.cube_h, root = group.root,
           chunk = a.chunk, op = lrab.OPS[op], group = a.group, dtype = a.dtype, dst = dst, n_sips = P.sips,
           sip_rank = sip, sip_topo_kind = a.sip_topo_kind, sip_topo_w = a.sip_topo_w, sip_topo_h = a.sip_topo_h }
end

--- broadcast(t, src): every rank's t becomes rank src's.
function D.broadcast(rt, tensor, src)
  local torch = rt.api
  local cubes, sip, group = line_collective(rt, "broadcast", tensor, src, "src")
  local args = run.line_args(torch, group, tensor, cubes)
  local h = run.launch_fn(torch, "broadcast", lrab_coll.broadcast, lrab_coll.ARGS.broadcast, tensor, cubes, sip,
    broadcast_args(rt.P, args, src, sip))
  rt:wait(h)
  return h
end

--- reduce(t, dst[, op]): rank dst's t becomes the all-reduce of every
-- rank's; the others keep theirs.
function D.reduce(rt, tensor, dst, op)
  local torch = rt.api
  local cubes, sip, group = line_collective(rt, "reduce", tensor, dst, "dst")
  op = op_of(op, "reduce")
  local args = run.line_args(torch, group, tensor, cubes)
  local h = run.launch_fn(torch, "reduce", lrab_coll.reduce, lrab_coll.ARGS.reduce, tensor, cubes, sip,
    reduce_args(rt.P, group, args, tensor.va_base, op, dst, sip))
  rt:wait(h)
  return h
end

-- A list of world_size tensors, each shaped like `like` (all_gather's
-- outputs, reduce_scatter's inputs), checked.
local function tensor_list(rt, group, call, list, like, what)
  if type(list) ~= "table" or #list ~= group.world then
    error(("torch.distributed.%s: %s must be a list of %d tensors (one per rank), got %s"):format(call, what,
      group.world, type(list) == "table" and (#list .. " of them") or type(list)), 3)
  end
  for i, t in ipairs(list) do
    run.check_tensor(rt.api, t, ("torch.distributed.%s: %s[%d]"):format(call, what, i))
    if t.dtype ~= like.dtype or #t.shape ~= #like.shape or t.shape[1] ~= like.shape[1] or t.shape[2] ~= like.shape[2] or
       t.shards[1].sip ~= like.shards[1].sip then
      error(("torch.distributed.%s: %s[%d] must be shaped like the tensor, on the same SIP"):format(call, what, i), 3)
    end
  end
end

--- all_gather(tensor_list, t): tensor_list[i + 1] becomes rank i's t, on
-- every rank. One broadcast per rank, in rank order (docs/ccl.md): simple,
-- not bandwidth-optimal. Returns the launches' handles, in order.
function D.all_gather(rt, list, tensor)
  local torch = rt.api
  local cubes, sip, group = line_collective(rt, "all_gather", tensor, 0, "rank")
  tensor_list(rt, group, "all_gather", list, tensor, "tensor_list")
  local args = run.line_args(torch, group, tensor, cubes)
  local rank = rt:current_rank() or 0
  local hs = {}
  for i = 0, group.world - 1 do
    local ptr = list[i + 1]
    if i == rank then -- my own: copied in place, then sent from my tensor
      hs[#hs + 1] = run.launch_fn(torch, "all_gather copy", lrab_coll.copy, lrab_coll.ARGS.copy, tensor, cubes, sip,
        { dst_ptr = ptr.va_base, n_elem = args.n_elem, chunk = args.chunk, dtype = args.dtype })
      rt:wait(hs[#hs])
      ptr = tensor
    end
    hs[#hs + 1] = run.launch_fn(torch, "all_gather", lrab_coll.broadcast, lrab_coll.ARGS.broadcast, ptr, cubes, sip,
      broadcast_args(rt.P, args, i, sip))
    rt:wait(hs[#hs])
  end
  return hs
end

--- reduce_scatter(output, input_list[, op]): output becomes the all-reduce
-- of every rank's input_list[rank + 1]. One reduce per rank, in rank order;
-- returns the launches' handles.
function D.reduce_scatter(rt, output, list, op)
  local torch = rt.api
  local cubes, sip, group = line_collective(rt, "reduce_scatter", output, 0, "rank")
  tensor_list(rt, group, "reduce_scatter", list, output, "input_list")
  op = op_of(op, "reduce_scatter")
  local args = run.line_args(torch, group, output, cubes)
  local hs = {}
  for i = 0, group.world - 1 do
    hs[#hs + 1] = run.launch_fn(torch, "reduce_scatter", lrab_coll.reduce, lrab_coll.ARGS.reduce, list[i + 1], cubes,
      sip, reduce_args(rt.P, group, args, output.va_base, op, i, sip))
    rt:wait(hs[#hs])
  end
  return hs
end

for _, name in ipairs { "gather", "scatter", "send", "recv" } do
  D[name] = function()
    error(("torch.distributed.%s: not implemented yet (the collectives beyond all_reduce and barrier come "
      .. "later; docs/ccl.md)"):format(name), 2)
  end
end

--- Adds torch.distributed to runtime rt (lua/kernbench/torch/runtime.lua);
-- its state, rt.ext.dist: the process group once initialised.
function M.attach(rt)
  rt.ext.dist = { group = nil }
  local dist = {}
  for name, fn in pairs(D) do dist[name] = rt:bind(fn) end
  dist.ReduceOp = { SUM = "sum", MAX = "max", MIN = "min" }
  rt:export("distributed", dist)
end

return M
