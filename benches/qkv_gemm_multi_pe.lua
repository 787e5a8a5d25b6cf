--- The QKV projection of qkv-gemm over the PEs of one cube: X [M, K] and
-- Q, K, V [M, N] are split by rows over the PEs (DPPolicy{pe = "row_wise"}),
-- the weights Wq, Wk, Wv [K, N] replicated; PE p projects its M / pes rows
-- with the same kernel as qkv-gemm (kernels/qkv_gemm.lua). Checked against the CPU reference in
-- data mode (--data / --verify-data).
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- m (tokens, default 32 per PE), k, n (default 64, 32), pes (default 0: every
-- PE of the cube).
return {
  name = "qkv-gemm-multi-pe",
  description = "QKV projection with its rows split over the PEs of a cube, verified in data mode",
  params = {
    m = { default = 0, min = 0, env = "QKVM_M", help = "tokens in all (0: 32 per PE); a multiple of pes",
          labels = { [0] = "32 per PE" } },
    k = { default = 64, min = 1, env = "QKVM_K", help = "model width: columns of X, rows of each weight" },
    n = { default = 32, min = 1, env = "QKVM_N", help = "projection width: columns of each weight" },
    pes = { default = 0, min = 0, env = "QKVM_PES", help = "PEs of the cube that share the rows (0: all)",
            labels = { [0] = "all" } },
  },
  run = function(torch, p)
    local params = require "kernbench.bench_params"
    local pes = params.grid(torch.spec, { pes = p.pes, cubes = 1 })
    local M = p.m > 0 and p.m or 32 * pes
    if M % pes ~= 0 then
      params.invalid("m", p.m, ("%d tokens do not split evenly over %d PEs"):format(M, pes))
    end
    local K, N, m = p.k, p.n, M // pes
    local kernel = require "kernels.qkv_gemm"
    torch.manual_seed(8)
    local rows = torch.DPPolicy { pe = "row_wise", num_cubes = 1, num_pes = pes }
    local rep = torch.DPPolicy { num_cubes = 1, num_pes = pes }
    local x = torch.randn({ M, K }, { dtype = "f16" })
    local w = { torch.randn({ K, N }, { dtype = "f16" }), torch.randn({ K, N }, { dtype = "f16" }),
                torch.randn({ K, N }, { dtype = "f16" }) }
    local dx = torch.to_device(x, rows, { name = "X" })
    local dw, dout = {}, {}
    for i, name in ipairs { "Q", "K", "V" } do
      dw[i] = torch.to_device(w[i], rep, { name = "W" .. name })
      dout[i] = torch.empty({ M, N }, { dtype = "f16", dp = rows, name = name })
    end
    local h = torch.launch({ name = "qkv_gemm_multi_pe", fn = function(tl, xp, wq, wk, wv, q, k, v)
      local off = tl.program_id(0) * m * 2 -- this PE's block of rows (bytes per f16 row element)
      kernel(tl, xp + off * K, wq, wk, wv, q + off * N, k + off * N, v + off * N, m, K, N)
    end }, pes, dx, dw[1], dw[2], dw[3], dout[1], dout[2], dout[3])
    local r = h.result
    local flops = 3 * 2 * M * K * N
    print(("qkv gemm %dx%dx(3x%d) f16 over %d PEs of cube 0 (%d rows each): launch to completion %s, slowest PE " ..
           "%s (DMA %s, GEMM %s), %.1f GFLOP/s"):format(M, K, N, pes, m, kb.format_ns(h:elapsed_ns()),
      kb.format_ns(r.pe_exec_ns), kb.format_ns(r.dma_ns), kb.format_ns(r.compute_ns), flops / r.pe_exec_ns))
    for i, name in ipairs { "Q", "K", "V" } do
      torch.verify(name, dout[i], torch.matmul(x:float(), w[i]:float()):half())
    end
    return { launch_ns = h:elapsed_ns(), pe_exec_ns = r.pe_exec_ns, dma_ns = r.dma_ns, compute_ns = r.compute_ns,
             gflops = flops / r.pe_exec_ns, pes = pes }
  end,
}
