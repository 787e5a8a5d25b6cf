--- One composite GEMM (tl.composite) on one PE: C [M, N] = A [M, K] x
-- B [K, N] in f16, its shape, operand staging and tile sizes as parameters:
-- the point a GEMM sweep varies (sweeps/, milestone-gemm runs many).
-- Staging: load_ref (A loaded into TCM and pinned, B streamed tile by tile),
-- ref_ref (both streamed), load_load (both pinned). Tile sizes 0 are
-- PE_SCHEDULER's. Prints the kernel's window, the composite pipeline's, the
-- tiles and each stage type's busy time; checked against the CPU reference
-- in data mode (--data / --verify-data).
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- m, k, n (MATMUL_M, MATMUL_K, MATMUL_N; default 128 each), variant
-- (MATMUL_VARIANT, default load_ref), tm, tk, tn (MATMUL_TM ...; default 0:
-- PE_SCHEDULER's; give all three or none).
local PIN = { load_ref = { true, false }, ref_ref = { false, false }, load_load = { true, true } }
local STAGES = { "DMA_READ", "FETCH", "GEMM", "MATH", "STORE", "DMA_WRITE" }

return {
  name = "matmul-composite",
  description = "one composite f16 GEMM on one PE, its shape, operand staging and tile sizes as parameters",
  params = {
    m = { default = 128, min = 1, env = "MATMUL_M", help = "rows of A and C" },
    k = { default = 128, min = 1, env = "MATMUL_K", help = "columns of A, rows of B" },
    n = { default = 128, min = 1, env = "MATMUL_N", help = "columns of B and C" },
    variant = { default = "load_ref", choices = { "load_ref", "ref_ref", "load_load" }, env = "MATMUL_VARIANT",
                help = "operand staging: pinned in TCM (load) or streamed from HBM (ref), A then B" },
    tm = { default = 0, min = 0, env = "MATMUL_TM", help = "tile rows (0: PE_SCHEDULER's)" },
    tk = { default = 0, min = 0, env = "MATMUL_TK", help = "tile depth (0: PE_SCHEDULER's)" },
    tn = { default = 0, min = 0, env = "MATMUL_TN", help = "tile columns (0: PE_SCHEDULER's)" },
  },
  run = function(torch, p)
    local M, K, N, pin = p.m, p.k, p.n, PIN[p.variant]
    torch.manual_seed(9)
    local one = torch.DPPolicy { num_cubes = 1, num_pes = 1 }
    local a = torch.randn({ M, K }, { dtype = "f16" })
    local b = torch.randn({ K, N }, { dtype = "f16" })
    local da, db = torch.to_device(a, one, { name = "A" }), torch.to_device(b, one, { name = "B" })
    local dc = torch.empty({ M, N }, { dtype = "f16", dp = one, name = "C" })
    local tile -- all three tile sizes, or none (PE_SCHEDULER's)
    if p.tm > 0 or p.tk > 0 or p.tn > 0 then
      for _, t in ipairs { "tm", "tk", "tn" } do
        if p[t] == 0 then
          require("kernbench.bench_params").invalid(t, 0, "give tm, tk and tn together (or none)")
        end
      end
      tile = { p.tm, p.tk, p.tn }
    end
    local st
    local h = torch.launch({ name = "matmul_composite", fn = function(tl, pa, pb, pc)
      local A = pin[1] and tl.load(pa, { M, K }) or tl.ref(pa, { M, K })
      local B = pin[2] and tl.load(pb, { K, N }) or tl.ref(pb, { K, N })
      local c = tl.composite { op = "gemm", a = A, b = B, out_ptr = pc, tile_shape = tile }
      tl.wait(c)
      st = c:stats()
    end }, 1, da, db, dc)
    local r = h.result
    print(("matmul composite %dx%dx%d f16 %s on sip0.cube0.pe0: kernel %s, composite %s, %d tiles, %.2f TFLOP/s")
      :format(M, K, N, p.variant, kb.format_ns(r.pe_exec_ns), kb.format_ns(st.window_ns), st.tiles,
        2 * M * K * N / r.pe_exec_ns / 1000))
    local busy = {}
    for _, s in ipairs(STAGES) do
      busy[#busy + 1] = ("%s %s"):format(s, kb.format_ns(st.stage_ns[s]))
    end
    print("  stage busy time: " .. table.concat(busy, ", "))
    torch.verify("C", dc, torch.matmul(a:float(), b:float()):half())
    return { pe_exec_ns = r.pe_exec_ns, composite_ns = st.window_ns, tiles = st.tiles, stage_ns = st.stage_ns,
             stage_counts = st.stage_counts, tflops = 2 * M * K * N / r.pe_exec_ns / 1000 }
  end,
}
