--- The QKV projection of one attention layer on one PE: Q, K and V =
-- X [M, K] x Wq, Wk, Wv [K, N], f16 (kernels/qkv_gemm.lua: X is loaded into
-- TCM once; each weight is loaded, multiplied by PE_GEMM and its result
-- stored). The defaults are the original's reduced dimensions (32 x 64 x 32:
-- one tile each). Checked against the CPU reference in data mode (--data /
-- --verify-data).
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- m (tokens), k (model width), n (projection width), default 32, 64, 32.
return {
  name = "qkv-gemm",
  description = "QKV projection (X x Wq, Wk, Wv) on one PE by tl.load / tl.dot / tl.store, verified in data mode",
  params = {
    m = { default = 32, min = 1, env = "QKV_M", help = "tokens: rows of X, Q, K and V" },
    k = { default = 64, min = 1, env = "QKV_K", help = "model width: columns of X, rows of each weight" },
    n = { default = 32, min = 1, env = "QKV_N", help = "projection width: columns of each weight" },
  },
  run = function(torch, p)
    local M, K, N = p.m, p.k, p.n
    torch.manual_seed(7)
    local one = torch.DPPolicy { num_cubes = 1, num_pes = 1 }
    local x = torch.randn({ M, K }, { dtype = "f16" })
    local w = { torch.randn({ K, N }, { dtype = "f16" }), torch.randn({ K, N }, { dtype = "f16" }),
                torch.randn({ K, N }, { dtype = "f16" }) }
    local dx = torch.to_device(x, one, { name = "X" })
    local dw, dout = {}, {}
    for i, name in ipairs { "Q", "K", "V" } do
      dw[i] = torch.to_device(w[i], one, { name = "W" .. name })
      dout[i] = torch.empty({ M, N }, { dtype = "f16", dp = one, name = name })
    end
    local h = torch.launch("kernels.qkv_gemm", 1, dx, dw[1], dw[2], dw[3], dout[1], dout[2],
      dout[3], M, K, N)
    local r = h.result
    local flops = 3 * 2 * M * K * N
    print(("qkv gemm %dx%dx(3x%d) f16 on sip0.cube0.pe0: %s (DMA %s, GEMM %s), %.1f GFLOP/s"):format(M, K, N,
      kb.format_ns(r.pe_exec_ns), kb.format_ns(r.dma_ns), kb.format_ns(r.compute_ns), flops / r.pe_exec_ns))
    for i, name in ipairs { "Q", "K", "V" } do
      torch.verify(name, dout[i], torch.matmul(x:float(), w[i]:float()):half())
    end
    return { pe_exec_ns = r.pe_exec_ns, dma_ns = r.dma_ns, compute_ns = r.compute_ns, gflops = flops / r.pe_exec_ns }
  end,
}
