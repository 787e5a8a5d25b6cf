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
local run = require "kernbench.ccl.run"

local M = {}

local BACKENDS = { kernbench = true, ahbm = true }
local OPS = { sum = true, max = true, min = true }

--- Adds torch.distributed to a runtime. ctx: P, rank() (the running spawn
-- worker's rank, or nil in the main script).
function M.attach(torch, ctx)
  local P = ctx.P
  local dist = {}
  local group -- the process group once initialised

  local function need(call)
    if not group then
      error(("torch.distributed.%s: Default process group has not been initialized, please make sure to call "
        .. "init_process_group."):format(call), 3)
    end
  end

  --- init_process_group{backend = "kernbench", algorithm =, buffer_kind =,
  -- n_slots =, slot_size =, backpressure =, root =} (or the backend name
  -- alone). world_size and rank are accepted as PyTorch takes them and must
  -- agree with the topology: a rank is a SIP.
  function dist.init_process_group(o)
    if type(o) == "string" then o = { backend = o } end
    o = o or {}
    if type(o) ~= "table" then
      error("torch.distributed.init_process_group: takes {backend = \"kernbench\", ...} or the backend's name", 2)
    end
    if group then
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
    local name = o.algorithm or "lrab_hierarchical_allreduce"
    local algo = run.algorithm(name)
    local w = run.install(torch, { buffer_kind = o.buffer_kind, n_slots = o.n_slots, slot_size = o.slot_size,
                                   backpressure = o.backpressure })
    group = { backend = backend, name = name, algo = algo, wiring = w, root = o.root, world = P.sips }
  end

  function dist.is_initialized() return group ~= nil end

  function dist.get_backend()
    need("get_backend")
    return group.backend
  end

  function dist.get_world_size()
    need("get_world_size")
    return group.world
  end

  --- The calling rank: the spawn worker's, 0 in the main script.
  function dist.get_rank()
    need("get_rank")
    return ctx.rank() or 0
  end

  --- all_reduce(tensor[, op]): op "sum" (default), "max" or "min" (also
  -- {op = ...}). tensor: this rank's [cubes, n_elem] f16 device tensor, a
  -- row per cube on PE 0 (docs/ccl.md). Returns when it is done.
  function dist.all_reduce(tensor, op)
    need("all_reduce")
    if type(op) == "table" then op = op.op end
    op = op or "sum"
    if type(op) == "string" then op = op:lower():gsub("^reduceop%.", "") end
    if not OPS[op] then
      error(("torch.distributed.all_reduce: op must be \"sum\", \"max\" or \"min\", got %s"):format(tostring(op)), 2)
    end
    local rank = ctx.rank()
    if not rank and group.world > 1 then
      error(("torch.distributed.all_reduce: called outside torch.multiprocessing.spawn with %d ranks: the other "
        .. "ranks would never join; run one rank per SIP with spawn"):format(group.world), 2)
    end
    local _, _, sip = run.check_tensor(torch, tensor, "torch.distributed.all_reduce")
    if sip ~= (rank or 0) then
      error(("torch.distributed.all_reduce: rank %d's tensor is on SIP %d: place it with "
        .. "torch.ahbm.set_device(rank) first"):format(rank or 0, sip), 2)
    end
    local h = run.launch_rank(torch, group.wiring, group.name, group.algo, tensor, { op = op, root = group.root },
      "torch.distributed.all_reduce")
    torch.wait(h)
    return h
  end

  --- barrier(): every rank waits for the others: an all-reduce of one
  -- element per cube, timed like any (not a no-op).
  function dist.barrier()
    need("barrier")
    local rank = ctx.rank() or 0
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
    return dist.all_reduce(t)
  end

  for _, name in ipairs { "broadcast", "reduce", "all_gather", "reduce_scatter", "gather", "scatter", "send",
                          "recv" } do
    dist[name] = function()
      error(("torch.distributed.%s: not implemented yet (the collectives beyond all_reduce and barrier come "
        .. "later; docs/ccl.md)"):format(name), 2)
    end
  end

  dist.ReduceOp = { SUM = "sum", MAX = "max", MIN = "min" }
  torch.distributed = dist
end

return M
