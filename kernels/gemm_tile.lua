--- One GEMM tile on one PE: C[M, N] = A[M, K] x B[K, N], operands loaded
-- into TCM, the product computed by PE_GEMM, the result stored back.
-- a_ptr, b_ptr, c_ptr: addresses of row-major f16 (or `dtype`) matrices.
return function(tl, a_ptr, b_ptr, c_ptr, M, K, N, dtype)
  dtype = dtype or "f16"
  local a = tl.load(a_ptr, { M, K }, dtype)
  local b = tl.load(b_ptr, { K, N }, dtype)
  tl.store(c_ptr, tl.dot(a, b))
end
