--- kernbench.tp (lua/kernbench/tp/init.lua): the model-parallel state, the
-- layers' shapes and errors, and a two-layer MLP against the host reference
-- in data mode on 2 and 6 SIPs.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestTp = {}

local function runtime(topo, data)
  return torchmod.new { topology = kb.topology.load(topo), data_mode = data and "data" or nil }
end

function TestTp:test_state_and_layer_errors()
  local torch = runtime("default")
  local tp = require("kernbench.tp").new(torch)
  lu.assertErrorMsgContains("torch.distributed.init_process_group first", tp.initialize_model_parallel, 2)
  torch.distributed.init_process_group {}
  lu.assertErrorMsgContains("call tp.initialize_model_parallel(size) first", tp.ColumnParallelLinear, 4, 4)
  lu.assertErrorMsgContains("only tensor parallelism over the whole world (2 ranks)", tp.initialize_model_parallel, 1)
  tp.initialize_model_parallel(2)
  lu.assertEquals(tp.get_tensor_model_parallel_world_size(), 2)
  lu.assertEquals(tp.get_tensor_model_parallel_rank(), 0)
  lu.assertErrorMsgContains("output features (7) must divide by the tensor-parallel size 2", tp.ColumnParallelLinear, 4, 7)
  lu.assertErrorMsgContains("input features (5) must divide by the tensor-parallel size 2", tp.RowParallelLinear, 5, 4)
  lu.assertErrorMsgContains("only f16 layers", tp.ColumnParallelLinear, 4, 4, { dtype = "f32" })
  lu.assertErrorMsgContains("scatter_to_tp_region: not implemented yet", tp.scatter_to_tp_region)
  local fc = tp.ColumnParallelLinear(8, 6)
  lu.assertEquals({ fc.k, fc.n }, { 8, 3 })
  lu.assertEquals(fc.weight[1].shape, { 8, 3 })
  local row = tp.RowParallelLinear(8, 6, { bias = true })
  lu.assertEquals({ row.k, row.n }, { 4, 6 })
  lu.assertErrorMsgContains("expects a [M, 8] device tensor", fc.forward, fc, tp.tensor({ 1, 4 }, 1))
  torch.close()
end

local function mlp(topo, d_in, hidden, d_out, b)
  local torch = runtime(topo, true)
  torch.distributed.init_process_group {}
  local tp = require("kernbench.tp").new(torch)
  local W = torch.distributed.get_world_size()
  tp.initialize_model_parallel(W)
  local fc1 = tp.ColumnParallelLinear(d_in, hidden, { bias = true })
  local fc2 = tp.RowParallelLinear(hidden, d_out, { bias = true })
  torch.manual_seed(11)
  local w1, b1 = (torch.rand({ d_in, hidden }) * 0.05):half(), (torch.rand({ hidden }) * 0.1):half()
  local w2, b2 = (torch.rand({ hidden, d_out }) * 0.05):half(), (torch.rand({ d_out }) * 0.1):half()
  tp.load(fc1, w1, b1)
  tp.load(fc2, w2, b2)
  local x = (torch.rand({ b, d_in })):half()
  local outs = {}
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    outs[rank] = fc2:forward(fc1:forward(tp.tensor({ b, d_in }, x))):cpu()
  end, {}, W)
  local ref = torch.add(torch.matmul(torch.add(torch.matmul(x:float(), w1:float()), b1:float()), w2:float()),
    b2:float()):half()
  for r = 0, W - 1 do torch.verify(("mlp rank %d"):format(r), outs[r], ref, { tol = 2e-2 }) end
  torch.close()
end

function TestTp:test_an_mlp_matches_the_host_reference_on_every_rank()
  mlp("default", 64, 128, 32, 1)
  mlp("default", 32, 64, 16, 3) -- several rows
  mlp("ring_1d_6sip", 48, 96, 24, 2)
end

os.exit(lu.LuaUnit.run())
