--- GPT-3's QKV projection launched through torch.launch: [Q K V] =
-- X [tokens, d] x W [d, 3d] with GPT-3 175B's width d = 12288, tensor
-- parallel over the PEs of a SIP: X replicated, W and the output split by
-- columns over the cubes and their PEs (DPPolicy{cube = "column_wise", pe =
-- "column_wise"}), each PE one composite GEMM of its 3d / PEs columns with
-- both operands streamed from its HBM. Timing-only at full width; in data
-- mode (--data / --verify-data) a reduced width (--param d=256) is checked
-- against the CPU reference (W alone is 0.9 GB of f16 at d = 12288).
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- tokens (default 32), d (default 12288), pes, cubes (the grid; default 0:
-- every PE of every cube of SIP 0).
return {
  name = "gpt3-qkv",
  description = "GPT-3 175B QKV projection (d = 12288) column-parallel over a SIP's PEs by composite GEMMs",
  params = {
    tokens = { default = 32, min = 1, env = "GPT3_TOKENS", help = "rows of X and of the output" },
    d = { default = 12288, min = 1, env = "GPT3_D", help = "model width (GPT-3 175B: 12288)" },
    pes = { default = 0, min = 0, env = "GPT3_PES", help = "PEs per cube in the grid (0: every PE of a cube)",
            labels = { [0] = "all" } },
    cubes = { default = 0, min = 0, env = "GPT3_CUBES", help = "cubes in the grid (0: every cube of the SIP)",
              labels = { [0] = "all" } },
  },
  run = function(torch, p)
    local params = require "kernbench.bench_params"
    local pes, cubes = params.grid(torch.spec, p)
    local T, D, N = p.tokens, p.d, 3 * p.d
    if N % (pes * cubes) ~= 0 then
      params.invalid("d", p.d, ("3d = %d columns do not split evenly over %d PEs"):format(N, pes * cubes))
    end
    local n = N // (pes * cubes)
    local rep = torch.DPPolicy { num_cubes = cubes, num_pes = pes }
    local cols = torch.DPPolicy { cube = "column_wise", pe = "column_wise", num_cubes = cubes, num_pes = pes }
    local x, w, dx, dw
    if torch.data then
      torch.manual_seed(10)
      x, w = torch.randn({ T, D }, { dtype = "f16" }), torch.randn({ D, N }, { dtype = "f16" })
      dx, dw = torch.to_device(x, rep, { name = "X" }), torch.to_device(w, cols, { name = "Wqkv" })
    else
      dx = torch.empty({ T, D }, { dtype = "f16", dp = rep, name = "X" })
      dw = torch.empty({ D, N }, { dtype = "f16", dp = cols, name = "Wqkv" })
    end
    local dout = torch.empty({ T, N }, { dtype = "f16", dp = cols, name = "QKV" })
    local h = torch.launch({ name = "gpt3_qkv", fn = function(tl, px, pw, po)
      local g = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
      local c = tl.composite { op = "gemm", a = tl.ref(px, { T, D }), b = tl.ref(pw + g * D * n * 2, { D, n }),
                               out_ptr = po + g * T * n * 2 }
      tl.wait(c)
    end }, { pes, cubes }, dx, dw, dout)
    local r = h.result
    local flops = 2 * T * D * N
    print(("gpt3 qkv %dx%dx%d f16 over %d cubes x %d PEs (%d columns each): launch to completion %s, slowest PE " ..
           "%s, %.2f TFLOP/s over the grid"):format(T, D, N, cubes, pes, n, kb.format_ns(h:elapsed_ns()),
      kb.format_ns(r.pe_exec_ns), flops / r.pe_exec_ns / 1000))
    if torch.data then
      torch.verify("QKV", dout, torch.matmul(x:float(), w:float()):half())
    end
    return { launch_ns = h:elapsed_ns(), pe_exec_ns = r.pe_exec_ns, tflops = flops / r.pe_exec_ns / 1000,
             pes = pes, cubes = cubes, columns_per_pe = n }
  end,
}
