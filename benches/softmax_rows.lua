--- Row softmax on every PE of a cube, with the tl.softmax primitive and
-- spelled out with reductions (tl.max, tl.sum) and element-wise math
-- (kernels/softmax_rows.lua); both checked against the CPU reference in
-- data mode.
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- rows (per PE, default 16), cols (default 256), dtype (f32, f16 or bf16;
-- default f32).
return {
  name = "softmax-rows",
  description = "row softmax with tl.softmax and with tl.max/tl.sum/tl.exp on every PE of a cube",
  params = {
    rows = { default = 16, min = 1, env = "SOFTMAX_ROWS", help = "rows per PE" },
    cols = { default = 256, min = 1, env = "SOFTMAX_COLS", help = "columns (the softmax axis)" },
    dtype = { default = "f32", choices = { "f32", "f16", "bf16" }, env = "SOFTMAX_DTYPE", help = "element type" },
  },
  run = function(torch, p)
    local pes = torch.spec.pes_per_cube
    local R, C, dtype = p.rows, p.cols, p.dtype
    torch.manual_seed(3)
    local x = torch.randn({ R * pes, C }, { dtype = dtype })
    local dp = torch.DPPolicy { cube = "replicate", pe = "row_wise", num_cubes = 1 }
    local dx = torch.to_device(x, dp, { name = "x" })
    local dy = torch.empty({ R * pes, C }, { dtype = dtype, dp = dp, name = "y" })
    local dz = torch.empty({ R * pes, C }, { dtype = dtype, dp = dp, name = "z" })
    -- the dtype is not a kernel argument (scalars are numbers): bind it in a closure
    local softmax_rows = require "kernels.softmax_rows"
    local kernel = { name = "softmax_rows", fn = function(tl, x, y, z, r, c) softmax_rows(tl, x, y, z, r, c, dtype) end }
    local h = torch.launch(kernel, pes, dx, dy, dz, R, C)
    print(("softmax of %d x %d %s rows per PE on %d PEs: slowest PE %s (DMA %s, math %s)"):format(R, C, dtype, pes,
      kb.format_ns(h.result.pe_exec_ns), kb.format_ns(h.result.dma_ns), kb.format_ns(h.result.compute_ns)))
    local ref = torch.softmax(x:float(), 1):to(dtype)
    torch.verify("softmax (tl.softmax)", dy, ref)
    torch.verify("softmax (max/exp/sum)", dz, ref)
    return { pe_exec_ns = h.result.pe_exec_ns, dma_ns = h.result.dma_ns, compute_ns = h.result.compute_ns }
  end,
}
