--- One GEMM on one PE: A [M, K] x B [K, N] in f16, loaded into TCM,
-- multiplied by PE_GEMM, stored back; checked against the CPU reference in
-- data mode. Prints the kernel's time split (DMA, compute) and the
-- achieved FLOP/s.
--
-- Environment (optional): GEMM_M, GEMM_K, GEMM_N (default 128 x 256 x 128).
return {
  name = "gemm-single-pe",
  description = "one f16 GEMM on one PE (tl.load, tl.dot, tl.store), verified in data mode",
  run = function(torch)
    local M = tonumber(os.getenv("GEMM_M")) or 128
    local K = tonumber(os.getenv("GEMM_K")) or 256
    local N = tonumber(os.getenv("GEMM_N")) or 128
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
    torch.verify("C", dc:cpu(), torch.matmul(a:float(), b:float()):half())
  end,
}
