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
-- partial products are all-reduced. Every forward waits at least once (the
-- spec's yield-safety rule: inside spawn a wait is a yield).
local M = {}

-- One PE: cube 0, PE 0 of the rank's SIP.
local function one_pe(torch) return torch.DPPolicy { cube = "replicate", pe = "replicate", num_cubes = 1, num_pes = 1 } end

-- out[M, N] = x[M, K] x w[K, N] (+ bias[1, N]) on the launching PE.
local function gemm_kernel(tl, x_ptr, w_ptr, out_ptr, b_ptr, M_, K, N, has_bias)
  local x = tl.load(x_ptr, { M_, K }, "f16")
  local spec = { op = "gemm", a = x, b = tl.ref(w_ptr, { K, N }, "f16"), out_ptr = out_ptr }
  if has_bias then spec.epilogue = { { op = "bias", bias = tl.load(b_ptr, { 1, N }, "f16") } } end
  tl.wait(tl.composite(spec))
end

--- A runtime's tensor-parallel layer kit.
function M.new(torch)
  local tp = {}
  local dist = torch.distributed
  local size -- the model-parallel size once initialised

  local function need(call)
    if not size then
      error(("kernbench.tp.%s: call tp.initialize_model_parallel(size) first"):format(call), 3)
    end
  end

  --- initialize_model_parallel(size): size must be the world size (a rank
  -- is a SIP; other sizes are not implemented).
  function tp.initialize_model_parallel(n)
    if not dist.is_initialized() then
      error("kernbench.tp.initialize_model_parallel: torch.distributed.init_process_group first", 2)
    end
    if n ~= dist.get_world_size() then
      error(("kernbench.tp.initialize_model_parallel(%s): only tensor parallelism over the whole world (%d ranks) "
        .. "is implemented"):format(tostring(n), dist.get_world_size()), 2)
    end
    size = n
  end

  function tp.get_tensor_model_parallel_world_size()
    need("get_tensor_model_parallel_world_size")
    return size
  end

  function tp.get_tensor_model_parallel_rank()
    need("get_tensor_model_parallel_rank")
    return dist.get_rank()
  end

  --- A replicated activation on the calling rank's SIP: [shape] f16 filled
  -- with `value` (a number) or copied from a host tensor.
  function tp.tensor(shape, value)
    local t = torch.empty(shape, { dtype = "f16", dp = one_pe(torch) })
    if torch.is_tensor(value) then
      t:copy_(value)
    else
      t:copy_(torch.full(shape, value or 0, { dtype = "f16" }))
    end
    return t
  end

  -- A layer: its per-rank weight shards (made on each SIP) and bias.
  local function layer(kind, in_f, out_f, o, split_out)
    need(kind)
    o = o or {}
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

  local function forward(L, x, call)
    local rank = dist.get_rank()
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
  function tp.ColumnParallelLinear(in_f, out_f, o)
    local L = layer("ColumnParallelLinear", in_f, out_f, o, true)
    function L.forward(self, x) return (forward(self, x, "ColumnParallelLinear")) end
    return L
  end

  --- RowParallelLinear(in, out, {bias =}): rank r holds the input features
  -- [r * in / size, ...): weight[r] is [in / size, out]. forward(x [M, in /
  -- size]) -> [M, out] all-reduced; a bias is added once (rank 0's; the
  -- other ranks' are zero). forward_partial(x) is the GEMM alone.
  function tp.RowParallelLinear(in_f, out_f, o)
    local L = layer("RowParallelLinear", in_f, out_f, o, false)
    --- forward_partial(x): this rank's partial product alone (before the reduce).
    function L.forward_partial(self, x) return (forward(self, x, "RowParallelLinear")) end
    function L.forward(self, x) return tp.reduce_from_tp_region(self:forward_partial(x)) end
    return L
  end

  --- The region primitives (spec §3.6): copy = identity; reduce = an
  -- all-reduce (sum) of x over the ranks, in place.
  function tp.copy_to_tp_region(x) return x end
  function tp.reduce_from_tp_region(x)
    need("reduce_from_tp_region")
    dist.all_reduce(x)
    return x
  end
  for _, name in ipairs { "scatter_to_tp_region", "gather_from_tp_region" } do
    tp[name] = function()
      error(("kernbench.tp.%s: not implemented yet (docs/models.md)"):format(name), 2)
    end
  end

  --- Sets a layer's shards from host tensors: weight [in, out] and bias
  -- [out] (or [1, out]) split as the layer splits them (timed copies).
  function tp.load(L, weight, bias)
    local device = torch.ahbm.current_device()
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

  return tp
end

return M
