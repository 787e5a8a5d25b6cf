--- A tensor-parallel MLP across every SIP (docs/models.md): fc1 a
-- ColumnParallelLinear (D_in -> D_hidden, each rank a D_hidden / TP slice),
-- fc2 a RowParallelLinear (D_hidden -> D_out, partial products all-reduced),
-- both with biases, TP = the SIP count. The weights are deterministic
-- non-zero values (seeded); x [B, D_in] is replicated, 0.1 everywhere. With
-- --data every rank's output is checked against the host reference
-- (x W1 + b1) W2 + b2. Prints each layer's simulated time on rank 0 and the
-- share of fc2 spent in its all-reduce.
--
--   kernbench [--param d_hidden=4096] run tp-mlp [--data]
return {
  name = "tp-mlp",
  description = "tensor-parallel MLP (column- then row-parallel linear) across every SIP, verified with --data",
  params = {
    b = { default = 1, min = 1, help = "batch rows" },
    d_in = { default = 512, min = 1, help = "input features" },
    d_hidden = { default = 2048, min = 1, help = "hidden features (divisible by the SIP count)" },
    d_out = { default = 512, min = 1, help = "output features" },
    seed = { default = 3, help = "seed of the weights" },
  },
  run = function(torch, p)
    local dist = torch.distributed
    dist.init_process_group { backend = "kernbench" }
    local tp = require("kernbench.tp").new(torch)
    local W = dist.get_world_size()
    tp.initialize_model_parallel(W)
    local fc1 = tp.ColumnParallelLinear(p.d_in, p.d_hidden, { bias = true })
    local fc2 = tp.RowParallelLinear(p.d_hidden, p.d_out, { bias = true })
    torch.manual_seed(p.seed)
    local w1 = (torch.rand({ p.d_in, p.d_hidden }) * 0.02):half()
    local b1 = (torch.rand({ p.d_hidden }) * 0.1):half()
    local w2 = (torch.rand({ p.d_hidden, p.d_out }) * 0.02):half()
    local b2 = (torch.rand({ p.d_out }) * 0.1):half()
    tp.load(fc1, w1, b1)
    tp.load(fc2, w2, b2)
    local outs, times = {}, {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local x = tp.tensor({ p.b, p.d_in }, 0.1)
      torch.synchronize()
      local t0 = torch.now_ns()
      local h = fc1:forward(x)
      local t1 = torch.now_ns()
      local partial = fc2.forward_partial and fc2:forward_partial(h) or nil
      local t2 = torch.now_ns()
      local y = partial and tp.reduce_from_tp_region(partial) or fc2:forward(h)
      local t3 = torch.now_ns()
      times[rank] = { fc1 = t1 - t0, gemm2 = t2 - t1, reduce = t3 - t2, total = t3 - t0 }
      if torch.data then outs[rank] = y:cpu() end
    end, {}, W)
    local t = times[0]
    local fc2_ns = t.gemm2 + t.reduce
    print(("tp-mlp: B=%d, %d -> %d -> %d, TP=%d (one SIP per rank, each layer's GEMM on cube 0's PE 0)"):format(p.b,
      p.d_in, p.d_hidden, p.d_out, W))
    print(("  fc1 ColumnParallelLinear  %12.3f ns"):format(t.fc1))
    print(("  fc2 RowParallelLinear     %12.3f ns (GEMM %.3f, all-reduce %.3f: %.1f%% of fc2)"):format(fc2_ns, t.gemm2,
      t.reduce, 100 * t.reduce / fc2_ns))
    print(("  forward                   %12.3f ns"):format(t.total))
    if torch.data then
      local x = torch.full({ p.b, p.d_in }, 0.1, { dtype = "f16" })
      local ref = torch.add(torch.matmul(torch.add(torch.matmul(x:float(), w1:float()), b1:float()), w2:float()),
        b2:float()):half()
      -- f16 GEMMs accumulate in f32 and round their outputs: the hidden layer's rounding shows
      for r = 0, W - 1 do torch.verify(("tp-mlp rank %d"):format(r), outs[r], ref, { tol = 2e-2 }) end
      print(("tp-mlp: verified %d ranks against the host reference (rtol = atol = 0.02)"):format(W))
    else
      print("tp-mlp: timing only (run with --data to verify)")
    end
    return { b = p.b, d_in = p.d_in, d_hidden = p.d_hidden, d_out = p.d_out, tp = W, fc1_ns = t.fc1,
             fc2_ns = fc2_ns, allreduce_ns = t.reduce, forward_ns = t.total }
  end,
}
