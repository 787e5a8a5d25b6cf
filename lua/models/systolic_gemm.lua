--- A systolic-array latency model for PE_GEMM (an example of a Lua latency
-- model, docs/extending.md). The array has mac_rows x mac_cols cells and
-- is output-stationary: each block of mac_rows x mac_cols outputs streams
-- its K products through the array one per cycle per cell row (mac_depth
-- of them per cycle), and pays the array's fill and drain (rows + cols - 2
-- cycles) plus a fixed cost per block for loading and draining the
-- accumulators (PER_BLOCK_CYCLES). The builtin formula counts neither.
--
--   cube.pe_template.components.pe_gemm.latency_model: lua:models.systolic_gemm
local PER_BLOCK_CYCLES = 4

return function(q, attrs)
  local R, C, D = attrs.mac_rows, attrs.mac_cols, attrs.mac_depth
  local blocks = math.ceil(q.m / R) * math.ceil(q.n / C)
  local stream = math.ceil(q.k / D) * (q.dtype_bytes >= 4 and attrs.f32_slowdown or 1)
  local cycles = blocks * (stream + PER_BLOCK_CYCLES) + (R + C - 2)
  return attrs.overhead_ns + cycles / attrs.clock_ghz
end
