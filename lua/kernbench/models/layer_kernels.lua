--- The kernels of a decoder layer (docs/models.md, "A decoder layer"), one
-- per phase, each run on every PE of a SIP's grid (program_id 0 the PE,
-- 1 the cube). Every kernel takes the plan (kernbench.models.layer_plan)
-- and the device tensors' addresses. A cube's activations are row-major
-- [T, n] with their rows split over the cube's PEs (plan:row; a composite
-- streams them from every PE's slice), the all-reduce buffers are rows on
-- each cube's PE 0, per-PE buffers and weights are in each PE's own slice. tl has no strided DMA, so a result that must land in
-- a column block of a row-major matrix is written one row at a time (the
-- "row copies" of docs/models.md).
local M = {}

local F16, F32 = 2, 4
local part = require("kernbench.models.layer_plan").part

local function ids(tl) return tl.program_id(0), tl.program_id(1) end

-- The layer's GEMM tiles: all of a prefill's 128 rows (or the batch) in
-- one tile row, so the weights stream once, and 64 columns (what fits the
-- 64 KiB register file with an f32 accumulator), so the
-- activation streams once per 64 columns (PE_SCHEDULER's default 32 x 64 x
-- 32 reads the weights T / 32 times; docs/decisions.md).
local TILES = { 128, 64, 64 }

-- Rows a PE handles in one go: f32 temporaries of `width` columns, `live` of
-- them at once, in a quarter of the default scratch.
local function chunk_rows(width, live) return math.max(1, (256 * 1024) // (width * F32 * live)) end

-- PE p's rows of its cube's [T, D] activations in chunks of `live` f32
-- temporaries: fn(off, n), off the byte offset of the chunk's first row.
local function row_chunks(plan, tl, live, fn)
  local p, c = ids(tl)
  local r0, r1 = plan:rows(p)
  local step = chunk_rows(plan.D, live)
  for r = r0, r1 - 1, step do fn(plan:row(c, r, plan.D) * F16, math.min(step, r1 - r)) end
end

--- RMSNorm: dst = x / rms(x) * gamma, x = src (+ add, stored to sum when
-- given: the residual). PE p takes its rows (plan:rows).
function M.norm(plan, tl, src, add, sum, dst, gamma)
  local D = plan.D
  row_chunks(plan, tl, 4, function(off, n)
    local x = tl.load(src + off, { n, D }, "f16")
    if add then
      x = x + tl.load(add + off, { n, D }, "f16")
      tl.store(sum + off, x)
    end
    local xf = tl.cast(x, "f32")
    local g = tl.load(gamma, { 1, D }, "f16") -- loaded per chunk: the scratch is a ring
    local inv = 1 / tl.sqrt(tl.sum(xf * xf, 1) * (1 / D) + plan.model.norm_eps)
    tl.store(dst + off, tl.cast(xf * inv * g, "f16"))
  end)
end

--- The QKV projection: each of the cube's blocks is one composite GEMM on
-- its PE, xn [T, D] x w [D, cols] -> [T, cols], both streamed.
function M.qkv(plan, tl, xn, w, out)
  local p, c = ids(tl)
  if c >= plan.Ca then return end
  local T, D = plan.T, plan.D
  local pe = c * plan.P + p
  for _, b in ipairs(plan.blocks) do
    if b.pe == p then
      tl.composite { op = "gemm", a = tl.ref(xn + plan:row(c, 0, D) * F16, { T, D }),
                     b = tl.ref(w + (pe * plan.qkv_w_n + b.w_off) * F16, { D, b.cols }),
                     out_ptr = out + (pe * plan.qkv_out_n + b.out_off) * F16, tile_shape = TILES }
    end
  end
  tl.wait()
end

-- The address of rows [r, ...) of a cube's QKV block.
local function block_at(plan, qkv, c, b, r)
  return qkv + ((c * plan.P + b.pe) * plan.qkv_out_n + b.out_off + r * b.cols) * F16
end
M.block_at = block_at

--- Rotary embedding, in place on the q and k halves: rows [r0, r1) of PE p;
-- cos and sin are [T, d/2] (row t: token t's angles). Decode: the new
-- token's k and v also go into the cache, at position L - 1 (the last PE's
-- last slot).
function M.rope(plan, tl, qkv, cos, sin, kc1, kc2, vc)
  local p, c = ids(tl)
  if c >= plan.Ca then return end
  local T, h2 = plan.T, plan.d // 2
  local r0, r1 = part(T, plan.P, p)
  if r1 <= r0 then return end
  local step = chunk_rows(h2, 10) -- four loads and six results of [n, h2] at most
  local function rotate(kind, idx)
    local b1, b2 = plan.block[kind .. idx .. ".0"], plan.block[kind .. idx .. ".1"]
    for ra = r0, r1 - 1, step do
      local n = math.min(step, r1 - ra)
      local cs = tl.load(cos + ra * h2 * F16, { n, h2 }, "f16") -- per block: the scratch is a ring
      local sn = tl.load(sin + ra * h2 * F16, { n, h2 }, "f16")
      local a1, a2 = block_at(plan, qkv, c, b1, ra), block_at(plan, qkv, c, b2, ra)
      local x1, x2 = tl.load(a1, { n, h2 }, "f16"), tl.load(a2, { n, h2 }, "f16")
      tl.store(a1, x1 * cs - x2 * sn)
      tl.store(a2, x2 * cs + x1 * sn)
    end
  end
  for i = 0, plan.Hc - 1 do rotate("q", i) end
  for g = 0, plan.Gc - 1 do rotate("k", g) end
  if plan.mode ~= "decode" then return end
  local last = c * plan.P + plan.P - 1
  for g = 0, plan.Gc - 1 do
    for b = r0, r1 - 1 do
      local slot = ((last * plan.Gc + g) * T + b) * plan.Lp + plan.Lp - 1
      for half, cache in ipairs { kc1, kc2 } do
        local src = block_at(plan, qkv, c, plan.block["k" .. g .. "." .. (half - 1)], b)
        tl.store(cache + slot * h2 * F16, tl.load(src, { 1, h2 }, "f16"))
      end
      local v = tl.load(block_at(plan, qkv, c, plan.block["v" .. g .. ".0"], b), { 1, plan.d }, "f16")
      tl.store(vc + slot * plan.d * F16, v)
    end
  end
end

-- o [rows, d] f32 of local head i, rows [r0, ...): into att [T, Hc d]
-- (row-major, on the cube's PE 0) through the PE's staging buffer.
local function put_rows(plan, tl, o, att, stage, c, i, r0, rows)
  local d, Hc = plan.d, plan.Hc
  tl.store(stage, tl.cast(o, "f16"))
  for r = 0, rows - 1 do
    tl.store(att + (plan:row(c, r0 + r, Hc * d) + i * d) * F16,
      tl.load(stage + r * d * F16, { 1, d }, "f16"))
  end
end

-- A block's scores: q k^T / sqrt(d), q and k as their rotary halves.
local function scores(tl, q1, q2, k1, k2, scale)
  return (tl.dot(q1, tl.trans(k1), { out_dtype = "f32" }) + tl.dot(q2, tl.trans(k2), { out_dtype = "f32" })) * scale
end

-- One block of an online softmax against values v: the new running max
-- (m nil: the first block), the block's exponentials and its output e v.
local function softmax_block(tl, sc, v, m)
  local mx = tl.max(sc, 1)
  local m_new = m and tl.maximum(m, mx) or mx
  local e = tl.exp(sc - m_new)
  return m_new, e, tl.dot(tl.cast(e, "f16"), v, { out_dtype = "f32" })
end

--- Prefill attention, causal, by ring order: PE p's query rows are
-- [p sq, (p + 1) sq); at step s it takes the K/V rows of PE (p - s) mod P
-- from memory (a block of later tokens is skipped, the diagonal one
-- masked) and folds them into an online softmax (running max m, sum l,
-- unnormalised output o). Rows go in blocks of plan.qb (the last of a PE's
-- rows plan.qr) so that a step's scores fit the scratch ring: a query block
-- folds every key block before it, and its own under the causal mask of
-- its size (mask: [qb, qb], mask_rest: [qr, qr]).
function M.attention_prefill(plan, tl, sip, qkv, mask, mask_rest, att, stage)
  local p, c = ids(tl)
  if c >= plan.Ca then return end
  local sq, d, h2, P, qb = plan.sq, plan.d, plan.d // 2, plan.P, plan.qb
  local nblk = (sq + qb - 1) // qb
  local scale = 1 / math.sqrt(d)
  local kv0 = plan:kv0(sip, c)
  local st = stage + (c * P + p) * plan.stage_n * F16
  for i = 0, plan.Hc - 1 do
    local _, g = plan:head(sip, c, i)
    g = g - kv0
    local q1b, q2b = plan.block["q" .. i .. ".0"], plan.block["q" .. i .. ".1"]
    local k1b, k2b, vb = plan.block["k" .. g .. ".0"], plan.block["k" .. g .. ".1"], plan.block["v" .. g .. ".0"]
    for qi = 0, nblk - 1 do
      local qa = qi * qb
      local qn = math.min(qb, sq - qa)
      local m, l, o
      for s = 0, P - 1 do
        local j = (p - s) % P
        for ki = 0, j == p and qi or (j < p and nblk - 1 or -1) do
          local ka = ki * qb
          local kn = math.min(qb, sq - ka)
          local q1 = tl.load(block_at(plan, qkv, c, q1b, p * sq + qa), { qn, h2 }, "f16")
          local q2 = tl.load(block_at(plan, qkv, c, q2b, p * sq + qa), { qn, h2 }, "f16")
          local k1 = tl.load(block_at(plan, qkv, c, k1b, j * sq + ka), { kn, h2 }, "f16")
          local k2 = tl.load(block_at(plan, qkv, c, k2b, j * sq + ka), { kn, h2 }, "f16")
          local v = tl.load(block_at(plan, qkv, c, vb, j * sq + ka), { kn, d }, "f16")
          local sc = scores(tl, q1, q2, k1, k2, scale)
          if j == p and ki == qi then sc = sc + tl.load(qn == qb and mask or mask_rest, { qn, qn }, "f32") end
          local m_new, e, pv = softmax_block(tl, sc, v, m)
          if m then
            local corr = tl.exp(m - m_new)
            l = l * corr + tl.sum(e, 1)
            o = o * corr + pv
          else
            l, o = tl.sum(e, 1), pv
          end
          m = m_new
        end
      end
      put_rows(plan, tl, o / l, att, st, c, i, p * sq + qa, qn)
    end
  end
end

--- Decode attention, first half: PE p holds context positions
-- [p Lp, (p + 1) Lp) of every sequence's cache; per (head, sequence) it
-- stores its softmax state (m, l, o over its positions) to `state`
-- ([P, Hc, B, d + 2] f32 per cube, on each PE's own slice).
function M.attention_decode(plan, tl, sip, qkv, kc1, kc2, vc, state)
  local p, c = ids(tl)
  if c >= plan.Ca then return end
  local d, h2, B, Lp = plan.d, plan.d // 2, plan.T, plan.Lp
  local scale = 1 / math.sqrt(d)
  local kv0 = plan:kv0(sip, c)
  local pe = c * plan.P + p
  for i = 0, plan.Hc - 1 do
    local _, g = plan:head(sip, c, i)
    g = g - kv0
    for b = 0, B - 1 do
      local slot = ((pe * plan.Gc + g) * B + b) * Lp
      local q1 = tl.load(block_at(plan, qkv, c, plan.block["q" .. i .. ".0"], b), { 1, h2 }, "f16")
      local q2 = tl.load(block_at(plan, qkv, c, plan.block["q" .. i .. ".1"], b), { 1, h2 }, "f16")
      -- the PE's positions plan.kb at a time (the scratch is a ring), folded
      -- as prefill folds; the first block's sum is taken when needed, so one
      -- block is the plain softmax state
      local m, l, o, e0
      for ka = 0, Lp - 1, plan.kb do
        local kn = math.min(plan.kb, Lp - ka)
        local k1 = tl.load(kc1 + (slot + ka) * h2 * F16, { kn, h2 }, "f16")
        local k2 = tl.load(kc2 + (slot + ka) * h2 * F16, { kn, h2 }, "f16")
        local v = tl.load(vc + (slot + ka) * d * F16, { kn, d }, "f16")
        local sc = scores(tl, q1, q2, k1, k2, scale)
        local m_new, e, pv = softmax_block(tl, sc, v, m)
        if m then
          local corr = tl.exp(m - m_new)
          l = (l or tl.sum(e0, 1)) * corr + tl.sum(e, 1)
          o = o * corr + pv
        else
          o, e0 = pv, e
        end
        m = m_new
      end
      local at = state + ((pe * plan.Hc + i) * B + b) * (d + 2) * F32
      tl.store(at, o)
      tl.store(at + d * F32, m)
      tl.store(at + (d + 1) * F32, l or tl.sum(e0, 1))
    end
  end
end

--- Decode attention, second half: the (head, sequence) pairs go round the
-- cube's PEs; each folds the P states of its pairs and writes O = o / l.
function M.attention_combine(plan, tl, state, att)
  local p, c = ids(tl)
  if c >= plan.Ca then return end
  local d, B, P, Hc = plan.d, plan.T, plan.P, plan.Hc
  for k = p, Hc * B - 1, P do
    local i, b = k // B, k % B
    local m, l, o
    for j = 0, P - 1 do
      local at = state + (((c * P + j) * Hc + i) * B + b) * (d + 2) * F32
      local oj = tl.load(at, { 1, d }, "f32")
      local mj = tl.load(at + d * F32, { 1, 1 }, "f32")
      local lj = tl.load(at + (d + 1) * F32, { 1, 1 }, "f32")
      if m then
        local m_new = tl.maximum(m, mj)
        local a, e = tl.exp(m - m_new), tl.exp(mj - m_new)
        l, o, m = l * a + lj * e, o * a + oj * e, m_new
      else
        m, l, o = mj, lj, oj
      end
    end
    tl.store(att + (plan:row(c, b, Hc * d) + i * d) * F16, tl.cast(o / l, "f16"))
  end
end

-- a [T, K] (row-major, the cube's, on its PE 0) x w [K, n] (PE p's) into
-- columns [col, col + n) of y [T, D] (the cube's row of an all-reduce
-- buffer): one composite into the PE's staging buffer, then row copies.
local function gemm_into_rows(plan, tl, a, K, w, n, y, col, stage)
  local p, c = ids(tl)
  local T, D = plan.T, plan.D
  local st = stage + (c * plan.P + p) * plan.stage_n * F16
  tl.wait(tl.composite { op = "gemm", a = tl.ref(a, { T, K }), b = tl.ref(w, { K, n }), out_ptr = st,
                         tile_shape = TILES })
  for r = 0, T - 1 do
    tl.store(y + (plan:row(c, r, D) + col) * F16, tl.load(st + r * n * F16, { 1, n }, "f16"))
  end
end

-- Split by rows: PE p's rows of a [T, K] (the cube's, rows split over its
-- PEs) x w [K, n] (the cube's, split by rows) into its rows of out [T, n]
-- (row-major, row r at out + r n). Returns the composite.
local function gemm_rows(plan, tl, a, K, w, n, out, epilogue)
  local p = tl.program_id(0)
  local r0, r1 = plan:rows(p)
  if r1 <= r0 then return nil end
  return tl.composite { op = "gemm", a = tl.ref(a + r0 * K * F16, { r1 - r0, K }), b = tl.ref(w, { K, n }),
                        out_ptr = out + r0 * n * F16, tile_shape = TILES, epilogue = epilogue }
end

-- A row-parallel GEMM's part on PE p, by the plan's split: a [T, K] x the
-- cube's weights (w: their tensor) into the cube's row of y [T, D].
local function project(plan, tl, which, a, K, w, y, stage)
  local p, c = ids(tl)
  if plan.split[which] == "rows" then
    local h = gemm_rows(plan, tl, a, K, w + plan:wrow(c, 0, K, plan.D) * F16, plan.D, y + plan:row(c, 0, plan.D) * F16)
    if h then tl.wait(h) end
  else
    gemm_into_rows(plan, tl, a, K, w + (c * plan.P + p) * plan[which == "down" and "wd_n" or "wo_n"] * F16, plan.Db,
      y, p * plan.Db, stage)
  end
end

--- The output projection (row-parallel): att [T, Hc d] x wo [Hc d, D] into
-- the cube's row of the all-reduce buffer y, by columns (PE p's [p Db,
-- (p + 1) Db)) or by rows. A cube without heads leaves its row zero.
function M.out_proj(plan, tl, att, wo, y, stage)
  local _, c = ids(tl)
  if c >= plan.Ca then return end
  local K = plan.Hc * plan.d
  project(plan, tl, "out_proj", att + plan:row(c, 0, K) * F16, K, wo, y, stage)
end

--- Gate and up (column-parallel), SwiGLU: act = silu(hn wg) * (hn wu) for
-- PE p's columns of the cube's MLP slice, into act [T, fc] (row-major, the
-- cube's, on its PE 0).
function M.gate_up(plan, tl, hn, wg, wu, gbuf, ubuf, act)
  local p, c = ids(tl)
  local T, D = plan.T, plan.D
  if plan.split.gate_up == "rows" then -- PE p's rows of act = silu(hn wg) * (hn wu)
    local fc, r0, r1 = plan.fc, plan:rows(p)
    if r1 <= r0 then return end
    local a, out = hn + plan:row(c, 0, D) * F16, act + plan:row(c, 0, fc) * F16
    local ub = ubuf + (c * plan.P + p) * plan.ubuf_n * F16 - r0 * fc * F16 -- its rows at ub + r fc
    gemm_rows(plan, tl, a, D, wg + plan:wrow(c, 0, D, fc) * F16, fc, out, { { op = "silu" } })
    gemm_rows(plan, tl, a, D, wu + plan:wrow(c, 0, D, fc) * F16, fc, ub)
    tl.wait()
    local rows = { r1 - r0, fc }
    tl.wait(tl.composite { op = "math", math_op = "mul", a = tl.ref(out + r0 * fc * F16, rows),
                           b = tl.ref(ub + r0 * fc * F16, rows), out_ptr = out + r0 * fc * F16 })
    return
  end
  local lo, hi = plan:ffn_pe(p)
  local n, fc = hi - lo, plan.fc
  if n == 0 then return end
  local pe = c * plan.P + p
  local a = tl.ref(hn + plan:row(c, 0, D) * F16, { T, D })
  local gb, ub = gbuf + pe * T * plan.fp_max * F16, ubuf + pe * plan.ubuf_n * F16
  tl.composite { op = "gemm", a = a, b = tl.ref(wg + pe * plan.wgu_n * F16, { D, n }), out_ptr = gb,
                 epilogue = { { op = "silu" } }, tile_shape = TILES }
  tl.composite { op = "gemm", a = a, b = tl.ref(wu + pe * plan.wgu_n * F16, { D, n }), out_ptr = ub,
                 tile_shape = TILES }
  tl.wait()
  tl.wait(tl.composite { op = "math", math_op = "mul", a = tl.ref(gb, { T, n }), b = tl.ref(ub, { T, n }),
                         out_ptr = gb })
  for r = 0, T - 1 do
    tl.store(act + (plan:row(c, r, fc) + lo) * F16, tl.load(gb + r * n * F16, { 1, n }, "f16"))
  end
end

--- The down projection (row-parallel): act [T, fc] x wd [fc, D] into the
-- cube's row of the all-reduce buffer y, by columns or by rows.
function M.down(plan, tl, act, wd, y, stage)
  local _, c = ids(tl)
  project(plan, tl, "down", act + plan:row(c, 0, plan.fc) * F16, plan.fc, wd, y, stage)
end

--- The last residual: out = h + y, PE p's rows of the cube's row.
function M.residual(plan, tl, h, y, out)
  local D = plan.D
  row_chunks(plan, tl, 2, function(off, n)
    tl.store(out + off, tl.load(h + off, { n, D }, "f16") + tl.load(y + off, { n, D }, "f16"))
  end)
end

return M
