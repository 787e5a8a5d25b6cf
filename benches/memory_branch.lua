--- A kernel that branches on data it loaded (kernels/masked_exp.lua): every
-- PE of a cube reads its row of a random block mask and computes exp() of
-- the blocks that are set, skipping the rest. PEs with fewer blocks set
-- finish earlier. Needs data mode, which this bench turns on itself.
--
-- Parameters (--param KEY=VALUE; also from the environment variables named):
-- blocks (per PE, default 16), block (elements per block, default 256),
-- density (fraction of blocks set, default 0.5).
return {
  name = "memory-branch",
  description = "kernel control flow on loaded values: per-PE block mask decides which blocks to compute",
  needs_data = true,
  params = {
    blocks = { default = 16, min = 1, env = "BRANCH_BLOCKS", help = "blocks per PE" },
    block = { default = 256, min = 1, env = "BRANCH_BLOCK", help = "elements per block" },
    density = { default = 0.5, min = 0, max = 1, env = "BRANCH_DENSITY", help = "fraction of blocks set" },
  },
  run = function(torch, p)
    local pes = torch.spec.pes_per_cube
    local nb, B, density = p.blocks, p.block, p.density
    torch.manual_seed(4)
    local u = torch.rand({ pes, nb })
    local mask = torch.zeros({ pes, nb }, { dtype = "i32" })
    for p = 0, pes - 1 do
      for i = 0, nb - 1 do
        if u[{ p, i }] < density then mask[{ p, i }] = 1 end
      end
    end
    local x = torch.randn({ pes * nb, B })
    local rows = torch.DPPolicy { cube = "replicate", pe = "row_wise", num_cubes = 1 }
    local dmask = torch.to_device(mask, rows, { name = "mask" })
    local dx = torch.to_device(x, rows, { name = "x" })
    local dy = torch.zeros({ pes * nb, B }, { dp = rows, name = "y" })
    local h = torch.launch("kernels.masked_exp", pes, dmask, dx, dy, nb, B)
    local ref = torch.zeros({ pes * nb, B })
    local lines = {}
    for _, r in ipairs(h.result.pes) do
      local set = 0
      for i = 0, nb - 1 do
        if mask[{ r.pe, i }] ~= 0 then
          set = set + 1
          local row = r.pe * nb + i
          ref[row] = torch.exp(x[row])
        end
      end
      lines[#lines + 1] = ("  pe%d: %2d of %d blocks, %s"):format(r.pe, set, nb, kb.format_ns(r.pe_exec_ns))
    end
    print(("masked exp over %d PEs, %d blocks of %d f32 each per PE:"):format(pes, nb, B))
    print(table.concat(lines, "\n"))
    torch.verify("y", dy, ref)
    local per_pe = {}
    for i, r in ipairs(h.result.pes) do per_pe[i] = r.pe_exec_ns end
    return { pe_exec_ns = per_pe }
  end,
}
