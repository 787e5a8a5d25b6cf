--- The QKV projection on one PE: Q, K, V [M, N] = X [M, K] x Wq, Wk, Wv
-- [K, N]. X is loaded into TCM once; each weight is loaded, multiplied by
-- PE_GEMM and its product stored (benches/qkv_gemm.lua,
-- benches/qkv_gemm_multi_pe.lua). Pointers address row-major f16 matrices.
return function(tl, x_ptr, wq, wk, wv, q, k, v, M, K, N)
  local x = tl.load(x_ptr, { M, K })
  local outs = { q, k, v }
  for i, w in ipairs { wq, wk, wv } do
    tl.store(outs[i], tl.dot(x, tl.load(w, { K, N })))
  end
end
