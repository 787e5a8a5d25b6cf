--- The device side of kernbench.tp (lua/kernbench/tp/init.lua): the
-- kernels its layers and region primitives launch on a rank's PE 0.
local M = {}

-- out[M, N] = x[M, K] x w[K, N] (+ bias[1, N]) on the launching PE.
function M.gemm(tl, x_ptr, w_ptr, out_ptr, b_ptr, M_, K, N, has_bias)
  local x = tl.load(x_ptr, { M_, K }, "f16")
  local spec = { op = "gemm", a = x, b = tl.ref(w_ptr, { K, N }, "f16"), out_ptr = out_ptr }
  if has_bias then spec.epilogue = { { op = "bias", bias = tl.load(b_ptr, { 1, N }, "f16") } } end
  tl.wait(tl.composite(spec))
end

-- The longest run of elements one load moves (bounds the kernel's scratch use).
local CHUNK = 16384

-- Copies an [M, n] block between two row-major matrices, row by row (a row
-- of a column block is contiguous, the block is not): row i starts at
-- element i * cols + col0 of each. A block whose rows are whole rows of
-- both matrices is one range.
function M.copy_block(tl, dtype, item, src, src_cols, src_col0, dst, dst_cols, dst_col0, M_, n)
  if src_cols == n and dst_cols == n then M_, n = 1, M_ * n end
  for i = 0, M_ - 1 do
    for c = 0, n - 1, CHUNK do
      local len = math.min(CHUNK, n - c)
      local h = tl.load(src + (i * src_cols + src_col0 + c) * item, { len }, dtype)
      tl.store(dst + (i * dst_cols + dst_col0 + c) * item, h)
    end
  end
end

-- out[i] = shard[ids[i] - lo] for the ids this rank holds (rows [lo, hi) of
-- the table), zero for the others: one row load and store per id on the
-- launching PE. The ids are bound by the caller (kernel arguments are
-- scalars).
function M.embedding(tl, ids, lo, hi, D, shard, out)
  for i, id in ipairs(ids) do
    for c = 0, D - 1, CHUNK do
      local len = math.min(CHUNK, D - c)
      local dst = out + ((i - 1) * D + c) * 2
      if id >= lo and id < hi then
        tl.store(dst, tl.load(shard + ((id - lo) * D + c) * 2, { len }, "f16"))
      else
        tl.store(dst, tl.zeros({ len }, "f16"))
      end
    end
  end
end

return M
