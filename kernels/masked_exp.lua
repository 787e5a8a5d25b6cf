--- Branching on memory: each PE loads its row of a block mask and only
-- processes the blocks whose flag is non-zero (load, exp, store); the
-- others are skipped, so the kernel's time depends on the data. Needs data
-- mode (reading mask[i] is a value read).
-- mask: [pes, nblocks] i32; x, y: [pes * nblocks, B] f32, rows split over PEs.
return function(tl, mask_ptr, x_ptr, y_ptr, nblocks, B)
  local pid = tl.program_id(0)
  local mask = tl.load(mask_ptr + pid * nblocks * 4, { nblocks }, "i32")
  for i = 0, nblocks - 1 do
    if mask[i] ~= 0 then
      local off = (pid * nblocks + i) * B * 4
      tl.store(y_ptr + off, tl.exp(tl.load(x_ptr + off, { B }, "f32")))
    end
  end
end
