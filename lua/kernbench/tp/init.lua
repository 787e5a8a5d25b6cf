--- Megatron-style tensor parallelism over the ranks of torch.distributed
-- (spec §3.6, docs/models.md): rank r = SIP r holds its share of every
-- weight; activations live on each rank's SIP.
--
--   local tp = require("kernbench.tp").new(torch)
--   tp.initialize_model_parallel(torch.distributed.get_world_size())
--   local fc1 = tp.ColumnParallelLinear(512, 2048, { bias = true })   -- made once, in the main script
--   local fc2 = tp.RowParallelLinear(2048, 512)
--   torch.multiprocessing.spawn(function(rank)
--     torch.ahbm.set_device(rank)
--     local x = tp.tensor({ 1, 512 }, 0.1)        -- replicated activation on this rank
--     local y = fc2:forward(fc1:forward(x))       -- [1, 512], the same on every rank
--   end, {}, tp.get_tensor_model_parallel_world_size())
--
-- A layer's GEMM runs on PE 0 of cube 0 of the rank's SIP: the activation
-- pinned in TCM, the weight streamed from HBM tile by tile (tl.composite),
-- the bias as an epilogue. ColumnParallelLinear splits the output features
-- (no communication); RowParallelLinear splits the input features, and its
-- partial products are all-reduced. VocabParallelEmbedding splits the
-- table's rows; a lookup's partial rows are all-reduced.
-- scatter_to_tp_region / gather_from_tp_region split / all-gather the last
-- dimension. Every forward and region call waits at least once (the spec's
-- yield-safety rule: inside spawn a wait is a yield).
local dtypes = require "kernbench.ccl.dtypes"
local options = require "kernbench.options"

local M = {}

-- One PE: cube 0, PE 0 of the rank's SIP.
local function one_pe(torch) return torch.DPPolicy { cube = "replicate", pe = "replicate", num_cubes = 1, num_pes = 1 } end

local kernels = require "kernbench.tp.kernels"
local gemm_kernel, copy_block, embedding_kernel = kernels.gemm, kernels.copy_block, kernels.embedding

-- The kit's state and methods: TP.f(self, ...) behind tp.f(...) (M.new).
local TP = {}
TP.__index = TP

function TP:need(call)
  if not self.size then
    error(("kernbench.tp.%s: call tp.initialize_model_parallel(size) first"):format(call), 3)
  end
end

--- initialize_model_parallel(size): size must be the world size (a rank
-- is a SIP; other sizes are not implemented).
function TP:initialize_model_parallel(n)
  local dist = self.dist
  if not dist.is_initialized() then
    error("kernbench.tp.initialize_model_parallel: torch.distributed.init_process_group first", 2)
  end
  if n ~= dist.get_world_size() then
    error(("kernbench.tp.initialize_model_parallel(%s): only tensor parallelism over the whole world (%d ranks) "
      .. "is implemented"):format(tostring(n), dist.get_world_size()), 2)
  end
  self.size = n
end

function TP:get_tensor_model_parallel_world_size()
  self:need("get_tensor_model_parallel_world_size")
  return self.size
end

function TP:get_tensor_model_parallel_rank()
  self:need("get_tensor_model_parallel_rank")
  return self.dist.get_rank()
end

-- An uninitialised one-PE tensor on `sip` (the calling rank's).
function TP:empty_on(sip, shape, dtype, name)
  local torch = self.torch
  local device = torch.ahbm.current_device()
  torch.ahbm.set_device(sip)
  local t = torch.empty(shape, { dtype = dtype, dp = one_pe(torch), name = name })
  torch.ahbm.set_device(device)
  return t
end

-- A call whose collective needs every rank: refused in the main script
-- (the other ranks would never join), before anything is allocated.
function TP:in_ranks(call)
  if self.size > 1 and not self.torch.multiprocessing.current_rank() then
    error(("kernbench.tp.%s: combines the ranks' results with a collective: call it inside "
      .. "torch.multiprocessing.spawn (one rank per SIP, %d ranks)"):format(call, self.size), 3)
  end
end

--- A replicated activation on the calling rank's SIP: [shape] f16 filled
-- with `value` (a number) or copied from a host tensor.
function TP:tensor(shape, value)
  local torch = self.torch
  local t = torch.empty(shape, { dtype = "f16", dp = one_pe(torch) })
  if torch.is_tensor(value) then
    t:copy_(value)
  else
    t:copy_(torch.full(shape, value or 0, { dtype = "f16" }))
  end
  return t
end

-- A layer: its per-rank weight shards (made on each SIP) and bias.
function TP:layer(kind, in_f, out_f, o, split_out)
  self:need(kind)
  local torch, size = self.torch, self.size
  o = o or {}
  if type(o) ~= "table" then error(("kernbench.tp.%s: options must be a table {bias =, dtype =}"):format(kind), 3) end
  options.check("kernbench.tp." .. kind, o, { "bias", "dtype" }, 3)
  options.bool("kernbench.tp." .. kind, o, "bias", false, 3)
  if math.type(in_f) ~= "integer" or math.type(out_f) ~= "integer" or in_f < 1 or out_f < 1 then
    error(("kernbench.tp.%s: the feature counts must be integers >= 1"):format(kind), 3)
  end
  local split = split_out and out_f or in_f
  if split % size ~= 0 then
    error(("kernbench.tp.%s(%d, %d): %s features (%d) must divide by the tensor-parallel size %d"):format(kind,
      in_f, out_f, split_out and "output" or "input", split, size), 3)
  end
  if (o.dtype or "f16") ~= "f16" then
    error(("kernbench.tp.%s: only f16 layers are implemented, got %s"):format(kind, tostring(o.dtype)), 3)
  end
  local k = split_out and in_f or in_f // size
  local n = split_out and out_f // size or out_f
  local L = { kind = kind, in_features = in_f, out_features = out_f, k = k, n = n, weight = {}, bias = {} }
  local device = torch.ahbm.current_device()
  for r = 0, size - 1 do
    torch.ahbm.set_device(r)
    L.weight[r] = torch.zeros({ k, n }, { dtype = "f16", dp = one_pe(torch), name = ("%s.weight[%d]"):format(kind, r) })
    -- Megatron adds a row-parallel bias once, after the reduce: rank 0's bias, zero elsewhere
    if o.bias then
      L.bias[r] = torch.zeros({ 1, n }, { dtype = "f16", dp = one_pe(torch), name = ("%s.bias[%d]"):format(kind, r) })
    end
  end
  torch.ahbm.set_device(device)
  return L
end

function TP:forward(L, x, call)
  local torch = self.torch
  local rank = self.dist.get_rank()
  if type(x) ~= "table" or not x.shards or #x.shape ~= 2 or x.shape[2] ~= L.k then
    error(("kernbench.tp.%s: expects a [M, %d] device tensor on the rank's SIP"):format(call, L.k), 3)
  end
  local M_ = x.shape[1]
  local out = torch.empty({ M_, L.n }, { dtype = "f16", dp = one_pe(torch), name = call .. " out" })
  local b = L.bias[rank]
  local h = torch.launch({ name = call, fn = gemm_kernel }, { pes = 1, cubes = 1 }, x, L.weight[rank], out,
    b or L.weight[rank], M_, L.k, L.n, b ~= nil)
  return out, h
end

--- ColumnParallelLinear(in, out, {bias =, dtype = "f16"}): rank r holds the
-- output features [r * out / size, (r + 1) * out / size): weight[r] is
-- [in, out / size]. forward(x [M, in]) -> [M, out / size], no
-- communication.
function TP:ColumnParallelLinear(in_f, out_f, o)
  local L = self:layer("ColumnParallelLinear", in_f, out_f, o, true)
  local tp = self
  function L.forward(layer, x) return (tp:forward(layer, x, "ColumnParallelLinear")) end
  return L
end

--- RowParallelLinear(in, out, {bias =}): rank r holds the input features
-- [r * in / size, ...): weight[r] is [in / size, out]. forward(x [M, in /
-- size]) -> [M, out] all-reduced; a bias is added once (rank 0's; the
-- other ranks' are zero). forward_partial(x) is the GEMM alone.
function TP:RowParallelLinear(in_f, out_f, o)
  local L = self:layer("RowParallelLinear", in_f, out_f, o, false)
  local tp = self
  --- forward_partial(x): this rank's partial product alone (before the reduce).
  function L.forward_partial(layer, x) return (tp:forward(layer, x, "RowParallelLinear")) end
  function L.forward(layer, x) return tp:reduce_from_tp_region(layer:forward_partial(x)) end
  return L
end

-- Token ids as a Lua list of integers 0 .. V - 1 (from a list or a 1-D host
-- integer tensor).
local function token_ids(torch, ids, V, call)
  if torch.is_tensor(ids) then
    if ids.ndim ~= 1 or not ids.dtype:match("^[iu]%d+$") then
      error(("kernbench.tp.%s: ids must be a list of integers or a 1-D host integer tensor, got [%s] %s"):format(
        call, table.concat(ids.shape, ", "), ids.dtype), 3)
    end
    ids = ids:tolist()
  elseif type(ids) ~= "table" or ids.shards then
    error(("kernbench.tp.%s: ids must be a list of integers or a 1-D host integer tensor, got %s"):format(call,
      type(ids) == "table" and "a device tensor" or type(ids)), 3)
  end
  if #ids == 0 then error(("kernbench.tp.%s: ids is empty"):format(call), 3) end
  for i, id in ipairs(ids) do
    if math.type(id) ~= "integer" then
      error(("kernbench.tp.%s: ids[%d] must be an integer token id, got %s"):format(call, i, tostring(id)), 3)
    end
    if id < 0 or id >= V then
      error(("kernbench.tp.%s: token id %d (ids[%d]) is out of range: V = %d ids, 0 .. %d"):format(call, id, i,
        V, V - 1), 3)
    end
  end
  return ids
end

--- VocabParallelEmbedding(V, D, {dtype = "f16"}): rank r holds rows
-- [r V / size, (r + 1) V / size) of the [V, D] table: weight[r] is
-- [V / size, D]. forward(ids) (a list of token ids or a 1-D host integer
-- tensor) -> [#ids, D] on every rank: each rank looks up the rows it
-- holds (zero for the others' ids) on its PE, then the ranks' partial
-- results are all-reduced (sum: exactly one rank holds each row).
function TP:VocabParallelEmbedding(V, D, o)
  local call = "VocabParallelEmbedding"
  self:need(call)
  local torch, dist, size = self.torch, self.dist, self.size
  o = o or {}
  if type(o) ~= "table" then error(("kernbench.tp.%s: options must be a table {dtype =}"):format(call), 2) end
  options.check("kernbench.tp." .. call, o, { "dtype" }, 2)
  if math.type(V) ~= "integer" or math.type(D) ~= "integer" or V < 1 or D < 1 then
    error(("kernbench.tp.%s: num_embeddings and embedding_dim must be integers >= 1, got %s, %s"):format(call,
      tostring(V), tostring(D)), 2)
  end
  if V % size ~= 0 then
    error(("kernbench.tp.%s(%d, %d): num_embeddings (%d) must divide by the tensor-parallel size %d"):format(call,
      V, D, V, size), 2)
  end
  if (o.dtype or "f16") ~= "f16" then
    error(("kernbench.tp.%s: only f16 tables are implemented, got %s"):format(call, tostring(o.dtype)), 2)
  end
  local per = V // size
  local E = { kind = call, num_embeddings = V, embedding_dim = D, rows_per_rank = per, weight = {} }
  local device = torch.ahbm.current_device()
  for r = 0, size - 1 do
    torch.ahbm.set_device(r)
    E.weight[r] = torch.zeros({ per, D }, { dtype = "f16", dp = one_pe(torch),
                                            name = ("%s.weight[%d]"):format(call, r) })
  end
  torch.ahbm.set_device(device)

  local tp = self
  function E.forward(emb, ids)
    ids = token_ids(torch, ids, V, call)
    tp:in_ranks(call)
    local rank = dist.get_rank()
    local out = tp:empty_on(rank, { #ids, D }, "f16", call .. " out")
    local lo = rank * per
    local fn = function(tl, shard, dst) embedding_kernel(tl, ids, lo, lo + per, D, shard, dst) end
    local dev = torch.ahbm.current_device()
    torch.ahbm.set_device(rank)
    torch.launch({ name = call, fn = fn }, { pes = 1, cubes = 1 }, emb.weight[rank], out)
    torch.ahbm.set_device(dev)
    dist.all_reduce(out)
    return out
  end
  return E
end

--- The region primitives (spec §3.6): copy = identity; reduce = an
-- all-reduce (sum) of x over the ranks, in place.
function TP:copy_to_tp_region(x) return x end
function TP:reduce_from_tp_region(x)
  self:need("reduce_from_tp_region")
  self.dist.all_reduce(x)
  return x
end

-- x must be this rank's [M, N] activation on PE 0 of cube 0 of its SIP
-- (what tp.tensor makes); returns M, N and the SIP.
function TP:activation(x, call)
  self:need(call)
  local torch = self.torch
  local rank = self.dist.get_rank()
  if type(x) ~= "table" or not x.shards or not x.shape then
    error(("kernbench.tp.%s: expects a device tensor on rank %d's SIP, got %s%s"):format(call, rank,
      torch.is_tensor(x) and "a host tensor" or type(x),
      torch.is_tensor(x) and " (place it with tp.tensor(shape, host) first)" or ""), 3)
  end
  if #x.shape ~= 2 then
    error(("kernbench.tp.%s: expects a [M, N] tensor, got [%s]"):format(call, table.concat(x.shape, ", ")), 3)
  end
  if not dtypes.CODE[x.dtype] then
    error(("kernbench.tp.%s: expects f16, bf16 or f32, got %s"):format(call, tostring(x.dtype)), 3)
  end
  local sh = x.shards[1]
  if #x.shards ~= 1 or sh.cube ~= 0 or sh.pe ~= 0 or sh.sip ~= rank then
    error(("kernbench.tp.%s: the tensor must be wholly on PE 0 of cube 0 of rank %d's SIP (tp.tensor makes "
      .. "one); shard 1 is on sip%d.cube%d.pe%d%s"):format(call, rank, sh.sip, sh.cube, sh.pe,
      #x.shards > 1 and (" of " .. #x.shards) or ""), 3)
  end
  return x.shape[1], x.shape[2], sh.sip
end

-- An [M, n] column block moved between row-major matrices on the rank's
-- SIP, by a kernel on its PE 0 (a timed device copy): piece i (an
-- [M, n] tensor) goes to columns [i n, (i + 1) n) of dst when `into`,
-- else columns [col0, col0 + n) of src (one piece, [M, cols]) go to dst.
function TP:copy_columns(call, sip, dtype, dst, srcs, M_, n, cols, col0, into)
  local torch = self.torch
  local device = torch.ahbm.current_device()
  torch.ahbm.set_device(sip)
  local item = dtypes.SIZE[dtypes.CODE[dtype]]
  local fn = function(tl, d, ...)
    for i, s in ipairs { ... } do
      if into then
        copy_block(tl, dtype, item, s, n, 0, d, cols, (i - 1) * n, M_, n)
      else
        copy_block(tl, dtype, item, s, cols, col0, d, n, 0, M_, n)
      end
    end
  end
  local h = torch.launch({ name = call, fn = fn }, { pes = 1, cubes = 1 }, dst, table.unpack(srcs))
  torch.ahbm.set_device(device)
  return h
end

--- scatter_to_tp_region(x [M, N]): this rank's slice of the last
-- dimension, [M, N / size] (columns [rank N / size, ...)), as a new tensor
-- on the rank's SIP. No communication: a device copy on the rank's PE.
function TP:scatter_to_tp_region(x)
  local M_, N, sip = self:activation(x, "scatter_to_tp_region")
  local size = self.size
  if N % size ~= 0 then
    error(("kernbench.tp.scatter_to_tp_region: the last dimension (%d) must divide by the tensor-parallel "
      .. "size %d"):format(N, size), 2)
  end
  local n = N // size
  local out = self:empty_on(sip, { M_, n }, x.dtype, "scatter_to_tp_region out")
  self:copy_columns("scatter_to_tp_region", sip, x.dtype, out, { x }, M_, n, N, self.dist.get_rank() * n, false)
  return out
end

--- gather_from_tp_region(x [M, n]): every rank's x concatenated along the
-- last dimension in rank order, [M, n size], on every rank: an all_gather
-- (the process group's LRAB wiring), then a device copy of the pieces
-- into the result on the rank's PE.
function TP:gather_from_tp_region(x)
  local M_, n, sip = self:activation(x, "gather_from_tp_region")
  self:in_ranks("gather_from_tp_region")
  local dist, size = self.dist, self.size
  local algo = dist.get_config().algorithm
  if algo ~= "lrab_hierarchical_allreduce" then -- all_gather's broadcasts need LRAB's wiring
    error(("kernbench.tp.gather_from_tp_region: all_gather runs on the LRAB wiring; this process group runs "
      .. "'%s' (init_process_group{algorithm = \"lrab_hierarchical_allreduce\"})"):format(algo), 2)
  end
  local pieces = {}
  for i = 1, size do
    pieces[i] = self:empty_on(sip, { M_, n }, x.dtype, ("gather_from_tp_region piece[%d]"):format(i - 1))
  end
  dist.all_gather(pieces, x)
  local out = self:empty_on(sip, { M_, n * size }, x.dtype, "gather_from_tp_region out")
  self:copy_columns("gather_from_tp_region", sip, x.dtype, out, pieces, M_, n, n * size, 0, true)
  for _, p in ipairs(pieces) do p:free() end
  return out
end

--- Sets a layer's shards from host tensors: weight [in, out] and bias
-- [out] (or [1, out]) split as the layer splits them; an embedding's
-- [V, D] table split by rows (timed copies).
function TP:load(L, weight, bias)
  local torch, size = self.torch, self.size
  local device = torch.ahbm.current_device()
  if L.kind == "VocabParallelEmbedding" then
    local V, D = L.num_embeddings, L.embedding_dim
    if not torch.is_tensor(weight) or weight.ndim ~= 2 or weight.shape[1] ~= V or weight.shape[2] ~= D then
      error(("kernbench.tp.load: a VocabParallelEmbedding(%d, %d) takes a host [%d, %d] table, got %s"):format(V, D,
        V, D, torch.is_tensor(weight) and ("[" .. table.concat(weight.shape, ", ") .. "]") or type(weight)), 2)
    end
    if bias ~= nil then error("kernbench.tp.load: a VocabParallelEmbedding has no bias", 2) end
    for r = 0, size - 1 do
      torch.ahbm.set_device(r)
      torch.wait(L.weight[r]:copy_(weight:narrow(0, r * L.rows_per_rank, L.rows_per_rank):contiguous()))
    end
    torch.ahbm.set_device(device)
    return
  end
  for r = 0, size - 1 do
    torch.ahbm.set_device(r)
    local w
    if L.kind == "ColumnParallelLinear" then
      w = weight:narrow(1, r * L.n, L.n)
    else
      w = weight:narrow(0, r * L.k, L.k)
    end
    torch.wait(L.weight[r]:copy_(w:contiguous()))
    if bias and L.bias[r] then
      local b = bias:reshape({ 1, L.out_features })
      if L.kind == "ColumnParallelLinear" then
        torch.wait(L.bias[r]:copy_(b:narrow(1, r * L.n, L.n):contiguous()))
      elseif r == 0 then
        torch.wait(L.bias[r]:copy_(b))
      end
    end
  end
  torch.ahbm.set_device(device)
end

-- What tp.<name>(...) calls: TP.<name>(kit, ...).
local PUBLIC = { "initialize_model_parallel", "get_tensor_model_parallel_world_size", "get_tensor_model_parallel_rank",
                 "tensor", "ColumnParallelLinear", "RowParallelLinear", "VocabParallelEmbedding", "copy_to_tp_region",
                 "reduce_from_tp_region", "scatter_to_tp_region", "gather_from_tp_region", "load" }

--- A runtime's tensor-parallel layer kit: a TP object (its state: the
-- runtime, its process group, the model-parallel size once initialised)
-- behind a table of functions bound to it.
function M.new(torch)
  local kit = setmetatable({ torch = torch, dist = torch.distributed, size = nil }, TP)
  local tp = {}
  for _, name in ipairs(PUBLIC) do
    local fn = TP[name]
    tp[name] = function(...) return fn(kit, ...) end
  end
  return tp
end

return M
