--- The 2-D sharded GEMM of the specification: every PE of the
-- grid computes a column block of C = A x B. A [M, K] is replicated (each
-- PE loads the whole of it); B [K, N] and C [M, N] are split by columns over
-- the cubes and then the PEs (DPPolicy{cube = "column_wise", pe =
-- "column_wise"}), so PE (cube c, pe p) owns column block
-- g = c * num_programs(0) + p, stored as its own row-major [K, n] block.
-- M, K, N are the global sizes; each PE computes n = N / (cubes x pes)
-- columns.
return function(tl, a_ptr, b_ptr, c_ptr, M, K, N)
  local local_pid = tl.program_id(0)  -- PE within its cube
  local cube_id = tl.program_id(1)    -- which cube
  local g = cube_id * tl.num_programs(0) + local_pid
  local n = N // (tl.num_programs(1) * tl.num_programs(0))
  local a = tl.load(a_ptr, { M, K }, "f16")
  local b = tl.load(b_ptr + g * K * n * 2, { K, n }, "f16")
  local c = tl.dot(a, b)
  tl.store(c_ptr + g * M * n * 2, c)
end
