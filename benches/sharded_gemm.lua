--- The specification's 2-D sharded GEMM: C = A x B over every
-- PE of every cube of a SIP. A is replicated, B and C are split by columns
-- over cubes and PEs; each PE computes its column block
-- (kernels/sharded_gemm.lua). `make run` runs it with --verify-data.
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- m, k (default 64, 256), n_local (columns per PE, default 64), pes, cubes
-- (the grid; default 0: every PE of every cube).
return {
  name = "sharded-gemm",
  description = "2-D sharded f16 GEMM over the cubes and PEs of a SIP (program_id axes 0 and 1)",
  params = {
    m = { default = 64, min = 1, env = "SGEMM_M", help = "rows of A and C" },
    k = { default = 256, min = 1, env = "SGEMM_K", help = "columns of A, rows of B" },
    n_local = { default = 64, min = 1, env = "SGEMM_NLOCAL", help = "columns of C per PE" },
    pes = { default = 0, min = 0, env = "SGEMM_PES", help = "PEs per cube in the grid (0: every PE of a cube)",
            labels = { [0] = "all" } },
    cubes = { default = 0, min = 0, env = "SGEMM_CUBES", help = "cubes in the grid (0: every cube of the SIP)",
              labels = { [0] = "all" } },
  },
  run = function(torch, p)
    local pes, cubes = require("kernbench.bench_params").grid(torch.spec, p)
    local M, K = p.m, p.k
    local N = p.n_local * pes * cubes
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
    torch.verify("C", dc, torch.matmul(a:float(), b:float()):half())
    return { launch_ns = h:elapsed_ns(), pe_exec_ns = r.pe_exec_ns, dma_ns = r.dma_ns, compute_ns = r.compute_ns,
             tflops = 2 * M * K * N / r.pe_exec_ns / 1000, pes = pes, cubes = cubes }
  end,
}
