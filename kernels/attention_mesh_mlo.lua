--- Ring attention, decode (docs/models.md): the one query token is on every
-- rank, the K/V cache is split over the ranks. Each rank computes its
-- one-shot partial attention over its own block, the softmax state
-- (m = row max, l = row sum, o = unnormalised output), then the states go
-- around the ring (R - 1 rounds, each forwarding the state received in the
-- round before) and every rank folds each into its own:
--   m = max(m1, m2), l = l1 e^(m1 - m) + l2 e^(m2 - m), o = o1 e^(m1 - m) + o2 e^(m2 - m)
-- so every rank ends with O = o / l, the attention over the whole cache.
-- Two GEMMs per K/V head per rank (the group's scores, then P V).
-- Layouts: Q [R, n_heads, d] f16 (each rank's copy of the query), K and V
-- [R, n_kv_heads, skv, d] f16, O [R, n_heads, d] f32. rank_axis as in
-- attention_mesh_kv.
return function(tl, q_ptr, k_ptr, v_ptr, o_ptr, skv, d, n_heads, n_kv, rank_axis)
  if rank_axis == 1 and tl.program_id(0) ~= 0 then return end
  local rank, R = tl.ipcq_rank(), tl.ipcq_world_size()
  if not rank then return end
  local group = n_heads // n_kv
  local scale = 1 / math.sqrt(d)
  local qb = q_ptr + rank * n_heads * d * 2
  local kb, vb = k_ptr + rank * n_kv * skv * d * 2, v_ptr + rank * n_kv * skv * d * 2
  local ob = o_ptr + rank * n_heads * d * 4
  for g = 0, n_kv - 1 do
    local q = tl.load(qb + g * group * d * 2, { group, d }, "f16")
    local k = tl.load(kb + g * skv * d * 2, { skv, d }, "f16")
    local v = tl.load(vb + g * skv * d * 2, { skv, d }, "f16")
    local s = tl.dot(q, tl.trans(k), { out_dtype = "f32" }) * scale
    local m = tl.max(s, 1)
    local p = tl.exp(s - m)
    local l = tl.sum(p, 1)
    local o = tl.dot(p, v + tl.zeros({ 1, 1 }, "f32"))
    local cm, cl, co = m, l, o -- the state passed on
    for _ = 1, R - 1 do
      tl.send("E", cm)
      tl.send("E", cl)
      tl.send("E", co)
      cm = tl.recv("W", { group, 1 }, "f32")
      cl = tl.recv("W", { group, 1 }, "f32")
      co = tl.recv("W", { group, d }, "f32")
      local m_new = tl.maximum(m, cm)
      local a, b = tl.exp(m - m_new), tl.exp(cm - m_new)
      l = l * a + cl * b
      o = o * a + co * b
      m = m_new
    end
    tl.store(ob + g * group * d * 4, o / l)
  end
end
