--- kernbench.tp (lua/kernbench/tp/init.lua): the model-parallel state, the
-- layers' shapes and errors, a two-layer MLP against the host reference in
-- data mode on 2 and 6 SIPs, the scatter / gather region primitives and
-- VocabParallelEmbedding on 2 and 4 SIPs.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestTp = {}

local function runtime(topo, data, overrides)
  return torchmod.new { topology = kb.topology.load(topo, overrides), data_mode = data and "data" or nil }
end

-- The default tray (2 SIPs) and the same tray with 4 SIPs.
local TRAYS = { { "default" }, { "default", { "system.sips.count=4" } } }

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
  -- the reference rounds where the device stores f16: the hidden layer, each
  -- rank's partial product (rank 0's with the bias), the all-reduced sum
  local h = torch.add(torch.matmul(x:float(), w1:float()), b1:float()):half():float()
  local k = hidden // W
  local sum
  for r = 0, W - 1 do
    local part = torch.matmul(h:narrow(1, r * k, k), w2:narrow(0, r * k, k):float())
    if r == 0 then part = torch.add(part, b2:float()) end
    part = part:half():float()
    sum = sum and torch.add(sum, part) or part
  end
  local ref = sum:half()
  -- 2 SIPs: exact; 6: within one f16 step (the all-reduce rounds each partial sum)
  for r = 0, W - 1 do torch.verify(("mlp rank %d"):format(r), outs[r], ref) end
  torch.close()
end

function TestTp:test_an_mlp_matches_the_host_reference_on_every_rank()
  mlp("default", 64, 128, 32, 1)
  mlp("default", 32, 64, 16, 3) -- several rows
  mlp("ring_1d_6sip", 48, 96, 24, 2)
end

-- A tp kit in data mode on a tray; returns torch, tp and the world size.
local function tp_runtime(tray)
  local torch = runtime(tray[1], true, tray[2])
  torch.distributed.init_process_group {}
  local tp = require("kernbench.tp").new(torch)
  local W = torch.distributed.get_world_size()
  tp.initialize_model_parallel(W)
  return torch, tp, W
end

function TestTp:test_scatter_then_gather_round_trips_exactly()
  for _, tray in ipairs(TRAYS) do
    local torch, tp, W = tp_runtime(tray)
    torch.manual_seed(5)
    local M, N = 3, 8 * W
    local x = (torch.randn({ M, N }) * 4):half() -- distinct values: a misplaced column shows
    local slices, back, waited = {}, {}, {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local d = tp.tensor({ M, N }, x)
      torch.synchronize()
      local t0 = torch.now_ns()
      local s = tp.scatter_to_tp_region(d)
      local t1 = torch.now_ns()
      local g = tp.gather_from_tp_region(s)
      waited[rank] = { t1 - t0, torch.now_ns() - t1 } -- each call spends simulated time: it waited
      slices[rank], back[rank] = s:cpu(), g:cpu()
    end, {}, W)
    for r = 0, W - 1 do
      local n = N // W
      lu.assertEquals(slices[r].shape, { M, n })
      lu.assertTrue(torch.equal(slices[r], x:narrow(1, r * n, n)), ("%d SIPs: rank %d's slice"):format(W, r))
      lu.assertTrue(torch.equal(back[r], x), ("%d SIPs: rank %d's round trip"):format(W, r))
      lu.assertTrue(waited[r][1] > 0 and waited[r][2] > 0, "scatter and gather take simulated time")
    end
    torch.close()
  end
end

function TestTp:test_gather_concatenates_every_ranks_piece_in_rank_order()
  for _, tray in ipairs(TRAYS) do
    local torch, tp, W = tp_runtime(tray)
    torch.manual_seed(9)
    local pieces = {}
    for r = 1, W do pieces[r] = (torch.randn({ 2, 5 }) + 10 * r):half() end -- each rank its own values
    local got = {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      got[rank] = tp.gather_from_tp_region(tp.tensor({ 2, 5 }, pieces[rank + 1])):cpu()
    end, {}, W)
    local want = torch.cat(pieces, 1)
    for r = 0, W - 1 do
      lu.assertEquals(got[r].shape, { 2, 5 * W })
      lu.assertTrue(torch.equal(got[r], want), ("%d SIPs: rank %d's gather"):format(W, r))
    end
    torch.close()
  end
end

function TestTp:test_vocab_parallel_embedding_matches_the_host_table()
  for _, tray in ipairs(TRAYS) do
    local torch, tp, W = tp_runtime(tray)
    local V, D = 4 * W, 24
    local emb = tp.VocabParallelEmbedding(V, D)
    lu.assertEquals(emb.weight[W - 1].shape, { V // W, D })
    torch.manual_seed(13)
    local table_ = (torch.randn({ V, D }) * 3):half()
    tp.load(emb, table_)
    -- every rank's first and last row, then repeats of ids on different shards
    local ids = {}
    for r = 0, W - 1 do ids[#ids + 1] = r * 4; ids[#ids + 1] = r * 4 + 3 end
    for _, id in ipairs { V - 1, 0, 5, 5, V - 1 } do ids[#ids + 1] = id end
    local got, got_t = {}, {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      got[rank] = emb:forward(ids):cpu()
      got_t[rank] = emb:forward(torch.tensor({ 2, V - 2 }, { dtype = "i32" })):cpu() -- a host id tensor
    end, {}, W)
    local rows = {}
    for i, id in ipairs(ids) do rows[i] = table_:narrow(0, id, 1) end
    local want = torch.cat(rows, 0)
    local want_t = torch.cat({ table_:narrow(0, 2, 1), table_:narrow(0, V - 2, 1) }, 0)
    for r = 0, W - 1 do
      lu.assertEquals(got[r].shape, { #ids, D })
      lu.assertTrue(torch.equal(got[r], want), ("%d SIPs: rank %d's embedding"):format(W, r))
      lu.assertTrue(torch.equal(got_t[r], want_t), ("%d SIPs: rank %d's embedding of a host tensor"):format(W, r))
    end
    torch.close()
  end
end

function TestTp:test_region_and_embedding_errors()
  local torch = runtime("default")
  torch.distributed.init_process_group {}
  local tp = require("kernbench.tp").new(torch)
  local first = "call tp.initialize_model_parallel(size) first"
  lu.assertErrorMsgContains("scatter_to_tp_region: " .. first, tp.scatter_to_tp_region, tp.tensor({ 1, 4 }, 1))
  lu.assertErrorMsgContains("gather_from_tp_region: " .. first, tp.gather_from_tp_region, tp.tensor({ 1, 4 }, 1))
  lu.assertErrorMsgContains("VocabParallelEmbedding: " .. first, tp.VocabParallelEmbedding, 8, 4)
  tp.initialize_model_parallel(2)
  lu.assertErrorMsgContains("scatter_to_tp_region: the last dimension (5) must divide by the tensor-parallel size 2",
    tp.scatter_to_tp_region, tp.tensor({ 2, 5 }, 1))
  lu.assertErrorMsgContains("scatter_to_tp_region: expects a [M, N] tensor, got [2, 2, 2]", tp.scatter_to_tp_region,
    tp.tensor({ 2, 2, 2 }, 1))
  lu.assertErrorMsgContains("gather_from_tp_region: expects a [M, N] tensor, got [8]", tp.gather_from_tp_region,
    tp.tensor({ 8 }, 1))
  lu.assertErrorMsgContains("scatter_to_tp_region: expects a device tensor on rank 0's SIP, got a host tensor",
    tp.scatter_to_tp_region, torch.ones({ 2, 4 }))
  lu.assertErrorMsgContains("gather_from_tp_region: expects a device tensor on rank 0's SIP, got nil",
    tp.gather_from_tp_region)
  torch.ahbm.set_device(1)
  local other = tp.tensor({ 1, 4 }, 1)
  torch.ahbm.set_device(0)
  lu.assertErrorMsgContains("must be wholly on PE 0 of cube 0 of rank 0's SIP (tp.tensor makes one); shard 1 is on "
    .. "sip1.cube0.pe0", tp.scatter_to_tp_region, other)
  lu.assertErrorMsgContains("gather_from_tp_region: combines the ranks' results with a collective: call it inside "
    .. "torch.multiprocessing.spawn", tp.gather_from_tp_region, tp.tensor({ 1, 4 }, 1))
  lu.assertErrorMsgContains("VocabParallelEmbedding(7, 4): num_embeddings (7) must divide by the tensor-parallel "
    .. "size 2", tp.VocabParallelEmbedding, 7, 4)
  lu.assertErrorMsgContains("only f16 tables", tp.VocabParallelEmbedding, 8, 4, { dtype = "f32" })
  local emb = tp.VocabParallelEmbedding(8, 4)
  lu.assertErrorMsgContains("token id 8 (ids[2]) is out of range: V = 8 ids, 0 .. 7", emb.forward, emb, { 1, 8 })
  lu.assertErrorMsgContains("token id -1 (ids[1]) is out of range: V = 8 ids", emb.forward, emb, { -1 })
  lu.assertErrorMsgContains("ids[1] must be an integer token id, got 1.5", emb.forward, emb, { 1.5 })
  lu.assertErrorMsgContains("ids is empty", emb.forward, emb, {})
  lu.assertErrorMsgContains("ids must be a list of integers or a 1-D host integer tensor, got [2] f32", emb.forward,
    emb, torch.ones({ 2 }))
  lu.assertErrorMsgContains("VocabParallelEmbedding: combines the ranks' results with a collective", emb.forward,
    emb, { 1 })
  lu.assertErrorMsgContains("takes a host [8, 4] table, got [8, 5]", tp.load, emb, torch.ones({ 8, 5 }):half())
  torch.close()
  -- the all-gather's broadcasts need the LRAB wiring
  torch = runtime("default")
  torch.distributed.init_process_group { algorithm = "ring_allreduce" }
  tp = require("kernbench.tp").new(torch)
  tp.initialize_model_parallel(2)
  lu.assertErrorMsgContains("gather_from_tp_region: all_gather runs on the LRAB wiring; this process group runs "
    .. "'ring_allreduce'", torch.multiprocessing.spawn, function(rank)
      torch.ahbm.set_device(rank)
      tp.gather_from_tp_region(tp.tensor({ 1, 4 }, 1))
    end, {}, 2)
  torch.close()
end


-- docs/models.md "Writing a new layer": its example runs as written, on 2
-- and 4 SIPs, and its check passes (torch.verify raises on a mismatch).
function TestTp:test_docs_example_layer()
  local f = assert(io.open("../../docs/models.md"))
  local doc = f:read("a")
  f:close()
  local code = doc:match("<!%-%- run by tests/lua/test_tp.lua %(test_docs_example_layer%) %-%->\n```lua\n(.-)\n```")
  lu.assertNotNil(code, "docs/models.md lost its example layer")
  for _, sips in ipairs { 2, 4 } do
    local torch = runtime("default", true, sips == 2 and nil or { "system.sips.count=" .. sips })
    local chunk = assert(load(code, "=docs/models.md example", "t", setmetatable({ torch = torch }, { __index = _G })))
    chunk()
    local checked = torch.verified()
    lu.assertEquals(#checked, sips)
    for _, v in ipairs(checked) do lu.assertTrue(v.ok) end
    torch.close()
  end
end
os.exit(lu.LuaUnit.run())
