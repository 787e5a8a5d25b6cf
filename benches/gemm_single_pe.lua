--- One GEMM on one PE: A [M, K] x B [K, N] in f16, loaded into TCM,
-- multiplied by PE_GEMM, stored back; checked against the CPU reference in
-- data mode. Prints the kernel's time split (DMA, compute) and the
-- achieved FLOP/s.
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- m, k, n (default 128 x 256 x 128).
return {
  name = "gemm-single-pe",
  description = "one f16 GEMM on one PE (tl.load, tl.dot, tl.store), verified in data mode",
  params = {
    m = { default = 128, min = 1, env = "GEMM_M", help = "rows of A and C" },
    k = { default = 256, min = 1, env = "GEMM_K", help = "columns of A, rows of B" },
    n = { default = 128, min = 1, env = "GEMM_N", help = "columns of B and C" },
  },
  run = function(torch, p)
    local M, K, N = p.m, p.k, p.n
    torch.manual_seed(1)
    local one = torch.DPPolicy { cube = "row_wise", pe = "row_wise", num_cubes = 1, num_pes = 1 }
    local a = torch.randn({ M, K }, { dtype = "f16" })
    local b = torch.randn({ K, N }, { dtype = "f16" })
    local da, db = torch.to_device(a, one, { name = "A" }), torch.to_device(b, one, { name = "B" })
    local dc = torch.empty({ M, N }, { dtype = "f16", dp = one, name = "C" })
    local h = torch.launch("kernels.gemm_tile", 1, da, db, dc, M, K, N)
    local r = h.result
    print(("gemm %dx%dx%d f16 on sip0.cube0.pe0: %s (DMA %s, GEMM %s), %.1f GFLOP/s"):format(M, K, N,
      kb.format_ns(r.pe_exec_ns), kb.format_ns(r.dma_ns), kb.format_ns(r.compute_ns), 2 * M * K * N / r.pe_exec_ns))
    torch.verify("C", dc, torch.matmul(a:float(), b:float()):half())
    return { pe_exec_ns = r.pe_exec_ns, dma_ns = r.dma_ns, compute_ns = r.compute_ns,
             gflops = 2 * M * K * N / r.pe_exec_ns }
  end,
}
