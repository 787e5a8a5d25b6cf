--- The runtime's view of the PE page tables. The tables and every
-- translation belong to the PE_MMU components of the simulation
-- (src/comp/pe/mmu.c); map messages install entries when they arrive at
-- the PE_MMU, and kernels translate through them in their commands.
-- Translating an unmapped VA is an error naming the PE and the address,
-- unless the runtime was made with pa_fallback (docs/decisions.md).
local pe_c = require "kernbench.pe_c"

local M = {}

--- The page tables of simulation s; opts.pa_fallback: the original's
-- behaviour, an unmapped VA is used as a PA (a compatibility option).
function M.new(s, opts)
  opts = opts or {}
  local mmu = { pa_fallback = opts.pa_fallback or false }

  function mmu.map(sip, cube, pe, va, pa, size) pe_c.mmu_map(s, sip, cube, pe, va, pa, size) end
  function mmu.unmap(sip, cube, pe, va, size) pe_c.mmu_unmap(s, sip, cube, pe, va, size) end

  --- The PA of `va` on PE (sip, cube, pe); an error if it is not mapped.
  function mmu.translate(sip, cube, pe, va)
    local pa, err = pe_c.mmu_translate(s, sip, cube, pe, va, mmu.pa_fallback, "torch.translate")
    if pa then return pa end
    error(err, 2)
  end

  --- Mapped regions of a PE (for tests).
  function mmu.regions(sip, cube, pe) return pe_c.mmu_regions(s, sip, cube, pe) end

  return mmu
end

return M
