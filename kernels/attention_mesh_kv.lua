--- Ring attention, prefill (docs/models.md): rank r holds its query rows
-- and its K/V block; the K/V blocks travel around the ring ("E" out, "W"
-- in) and every rank folds each block into an online softmax (running row
-- max m, row sum l, unnormalised output o), so after R steps its rows have
-- attended to every key: O = softmax(Q K^T / sqrt(d)) V.
--
-- GQA: n_heads query heads share n_kv_heads K/V heads, query head h using
-- K/V head h // (n_heads / n_kv_heads); a K/V head's query heads are
-- consecutive, so their rows form one [group x sq, d] block and one GEMM.
-- Layouts (row-major, rank-major): Q [R, n_heads, sq, d] f16, K and V
-- [R, n_kv_heads, skv, d] f16, O [R, n_heads, sq, d] f32.
-- rank_axis 0: the ring is the PEs of a cube (rank = PE); 1: PE 0 of each
-- cube (rank = cube; the other PEs return). The ring is the installed IPCQ
-- plan's (kernbench.models.attention).
return function(tl, q_ptr, k_ptr, v_ptr, o_ptr, sq, skv, d, n_heads, n_kv, rank_axis)
  if rank_axis == 1 and tl.program_id(0) ~= 0 then return end
  local rank, R = tl.ipcq_rank(), tl.ipcq_world_size()
  if not rank then return end
  local group = n_heads // n_kv
  local scale = 1 / math.sqrt(d)
  local qb = q_ptr + rank * n_heads * sq * d * 2
  local kb, vb = k_ptr + rank * n_kv * skv * d * 2, v_ptr + rank * n_kv * skv * d * 2
  local ob = o_ptr + rank * n_heads * sq * d * 4
  local rows = group * sq
  for g = 0, n_kv - 1 do
    local k = tl.load(kb + g * skv * d * 2, { skv, d }, "f16")
    local v = tl.load(vb + g * skv * d * 2, { skv, d }, "f16")
    local m, l, o = tl.full({ rows, 1 }, -math.huge, "f32"), tl.zeros({ rows, 1 }, "f32"), tl.zeros({ rows, d }, "f32")
    for step = 0, R - 1 do
      -- the group's queries, reloaded each step: the kernel's scratch is a ring
      local q = tl.load(qb + g * rows * d * 2, { rows, d }, "f16")
      local s = tl.dot(q, tl.trans(k), { out_dtype = "f32" }) * scale
      local m_new = tl.maximum(m, tl.max(s, 1))
      local p = tl.exp(s - m_new)
      local corr = tl.exp(m - m_new)
      l = l * corr + tl.sum(p, 1)
      o = o * corr + tl.dot(p, v + tl.zeros({ 1, 1 }, "f32"))
      m = m_new
      if step < R - 1 then -- pass the block on, take the next
        tl.send("E", k)
        tl.send("E", v)
        k = tl.recv("W", { skv, d }, "f16")
        v = tl.recv("W", { skv, d }, "f16")
      end
    end
    tl.store(ob + g * rows * d * 4, o / l)
  end
end
