--- A composite GEMM for the pipeline tests (run.lua puts this directory on
-- package.path).
local M = {}

--- Launches one f16 composite GEMM C[m, n] = A[m, k] B[k, n] on one PE of
-- `torch` and waits for it: A pinned (tl.load) when o.pin_a, B when o.pin_b,
-- else streamed (tl.ref); o.tile: its tile_shape. Returns the composite's
-- stats (h:stats()).
function M.composite(torch, m, k, n, o)
  o = o or {}
  local one = torch.DPPolicy {}
  local da = torch.empty({ m, k }, { dtype = "f16", dp = one })
  local db = torch.empty({ k, n }, { dtype = "f16", dp = one })
  local dc = torch.empty({ m, n }, { dtype = "f16", dp = one })
  local st
  torch.launch(function(tl, pa, pb, pc)
    local a = o.pin_a and tl.load(pa, { m, k }) or tl.ref(pa, { m, k })
    local b = o.pin_b and tl.load(pb, { k, n }) or tl.ref(pb, { k, n })
    local h = tl.composite { op = "gemm", a = a, b = b, out_ptr = pc, tile_shape = o.tile }
    tl.wait(h)
    st = h:stats()
  end, 1, da, db, dc)
  return st
end

return M
