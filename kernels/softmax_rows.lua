--- Row softmax of a [R, C] block, twice: with the tl.softmax primitive and
-- spelled out with reductions and element-wise math (max, subtract, exp,
-- sum, divide), stored to two outputs. Each PE takes R rows starting at
-- row (program id) x R.
return function(tl, x_ptr, y_ptr, z_ptr, R, C, dtype)
  dtype = dtype or "f32"
  local pid = tl.program_id(1) * tl.num_programs(0) + tl.program_id(0)
  local off = pid * R * C * (dtype == "f32" and 4 or 2)
  local x = tl.load(x_ptr + off, { R, C }, dtype)
  tl.store(y_ptr + off, tl.softmax(x, 1))
  local e = tl.exp(x - tl.max(x, 1))
  tl.store(z_ptr + off, e / tl.sum(e, 1))
end
