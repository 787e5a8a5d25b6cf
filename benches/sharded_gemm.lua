--- The specification's 2-D sharded GEMM: C = A x B over every
-- PE of every cube of a SIP. A is replicated, B and C are split by columns
-- over cubes and PEs; each PE computes its column block
-- (kernels/sharded_gemm.lua). `make run` runs it with --verify-data.
--
-- Environment (optional): SGEMM_M, SGEMM_K (default 64, 256),
-- SGEMM_NLOCAL (columns per PE, default 64), SGEMM_PES, SGEMM_CUBES (the
-- grid, default: every PE of every cube).
return {
  name = "sharded-gemm",
  description = "2-D sharded f16 GEMM over the cubes and PEs of a SIP (program_id axes 0 and 1)",
  run = function(torch)
    local P = torch.spec
    local pes = tonumber(os.getenv("SGEMM_PES")) or P.pes_per_cube
    local cubes = tonumber(os.getenv("SGEMM_CUBES")) or P.cubes_per_sip
    local M = tonumber(os.getenv("SGEMM_M")) or 64
    local K = tonumber(os.getenv("SGEMM_K")) or 256
    local N = (tonumber(os.getenv("SGEMM_NLOCAL")) or 64) * pes * cubes
    torch.manual_seed(2)
    local a = torch.randn({ M, K }, { dtype = "f16" })
    local b = torch.randn({ K, N }, { dtype = "f16" })
    local rep = torch.DPPolicy { num_cubes = cubes, num_pes = pes }
    local cols = torch.DPPolicy { cube = "column_wise", pe = "column_wise", num_cubes = cubes, num_pes = pes }
    local da = torch.to_device(a, rep, { name = "A" })
    local db = torch.to_device(b, cols, { name = "B" })
    local dc = torch.empty({ M, N }, { dtype = "f16", dp = cols, name = "C" })
    local h = torch.launch("kernels.sharded_gemm", { pes, cubes }, da, db, dc, M, K, N)
    local r = h.result
    print(("sharded gemm %dx%dx%d f16 on %d cubes x %d PEs: launch to completion %s, slowest PE %s " ..
           "(DMA %s, GEMM %s), %.2f TFLOP/s over the grid"):format(M, K, N, cubes, pes, kb.format_ns(h:elapsed_ns()),
      kb.format_ns(r.pe_exec_ns), kb.format_ns(r.dma_ns), kb.format_ns(r.compute_ns),
      2 * M * K * N / r.pe_exec_ns / 1000))
    torch.verify("C", dc:cpu(), torch.matmul(a:float(), b:float()):half())
  end,
}
