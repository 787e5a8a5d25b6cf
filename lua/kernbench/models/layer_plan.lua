--- Where a decoder layer's work goes (docs/models.md, "A decoder layer"):
-- tensor parallelism over the SIPs (rank r = SIP r, Megatron's layout),
-- then over each SIP's cubes (a cube-rank holds whole heads and a slice of
-- the MLP), then over each cube's PEs (each GEMM by columns, attention by
-- token rows or by context positions).
--
--   local plan = require("kernbench.models.layer_plan").new(model, spec, o)
--   -- o = {mode = "prefill"|"decode", tokens = T, context = L, sips = W, cubes = C, pes = P}
local M = {}

local function part(n, parts, i) return n * i // parts, n * (i + 1) // parts end
M.part = part

local function fail(fmt, ...) error(fmt:format(...), 0) end

--- The plan: shapes, the heads and MLP columns of every (sip, cube), the
-- QKV blocks of a cube and which PE computes each, and the buffer sizes.
function M.new(m, spec, o)
  local W, C, P = o.sips, o.cubes, o.pes
  local D, H, G, d, F = m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn
  local T = o.tokens
  local L = o.mode == "decode" and o.context or T
  if D % P ~= 0 then fail("the hidden size %d must divide by the PEs per cube (%d)", D, P) end
  if H % W ~= 0 then fail("the %d query heads must divide by the SIPs (%d): Megatron gives every SIP whole heads", H, W) end
  local Hs = H // W
  local Ca = math.min(C, Hs)
  if Hs % Ca ~= 0 then
    fail("a SIP's %d query heads do not split evenly over %d cubes (use --param cubes=N with N dividing %d)", Hs, Ca, Hs)
  end
  if o.mode == "prefill" and T % P ~= 0 then
    fail("prefill: the sequence (%d tokens) must divide by the PEs per cube (%d): each PE holds a block of rows", T, P)
  end
  if o.mode == "decode" and L % P ~= 0 then
    fail("decode: the context (%d) must divide by the PEs per cube (%d): each PE holds a block of the cache", L, P)
  end
  local plan = { model = m, mode = o.mode, T = T, L = L, W = W, C = C, P = P, D = D, H = H, G = G, d = d, F = F,
                 Db = D // P, Hs = Hs, Ca = Ca, Hc = Hs // Ca, group = H // G, R = W * C }
  if F % plan.R ~= 0 then
    fail("the MLP width %d must divide by the cube-ranks (%d SIPs x %d cubes)", F, W, C)
  end
  plan.sq = o.mode == "prefill" and T // P or nil
  -- a cube's activations [T, n] are split by rows over its PEs, Tp rows each
  -- (padded): row t of cube c is at (c P Tp + t) n
  plan.Tp = (T + P - 1) // P
  plan.Lp = L // P
  -- the cube's KV heads: those of its query heads (Megatron replicates a KV
  -- head on every rank whose query heads use it)
  local Gc = 1
  for w = 0, W - 1 do
    for c = 0, Ca - 1 do
      local h0 = w * Hs + c * plan.Hc
      Gc = math.max(Gc, (h0 + plan.Hc - 1) // plan.group - h0 // plan.group + 1)
    end
  end
  plan.Gc = Gc
  -- a cube's QKV output as blocks of [T, cols], each one composite on PE (j mod P):
  -- q and k as rotary halves (d/2 columns each), v whole
  local blocks, out_n, w_n = {}, {}, {}
  for p = 0, P - 1 do out_n[p], w_n[p] = 0, 0 end
  local function add(kind, idx, half, cols)
    local j = #blocks
    local pe = j % P
    blocks[j + 1] = { kind = kind, idx = idx, half = half, cols = cols, pe = pe, out_off = out_n[pe], w_off = w_n[pe] }
    out_n[pe] = out_n[pe] + T * cols
    w_n[pe] = w_n[pe] + D * cols
  end
  for i = 0, plan.Hc - 1 do for h = 0, 1 do add("q", i, h, d // 2) end end
  for g = 0, Gc - 1 do for h = 0, 1 do add("k", g, h, d // 2) end end
  for g = 0, Gc - 1 do add("v", g, 0, d) end
  plan.blocks = blocks
  plan.qkv_out_n, plan.qkv_w_n = 0, 0
  for p = 0, P - 1 do
    plan.qkv_out_n = math.max(plan.qkv_out_n, out_n[p])
    plan.qkv_w_n = math.max(plan.qkv_w_n, w_n[p])
  end
  plan.block = {}
  for _, b in ipairs(blocks) do plan.block[b.kind .. b.idx .. "." .. b.half] = b end
  -- the MLP: cube-rank q = w C + c holds columns [q fc, (q + 1) fc); a
  -- cube's PEs split them (at most fp_max each)
  plan.fc = F // plan.R
  plan.fp_max = (plan.fc + P - 1) // P
  -- A row-parallel GEMM [T, K] x [K, n] on a cube's P PEs splits its output
  -- columns (every PE streams all of the activation, the weights once) or
  -- its rows (every PE streams all of the weights, the activation once):
  -- whichever moves fewer bytes (docs/decisions.md).
  local function split(K, n) return P * T * K + K * n <= T * K + P * K * n and "cols" or "rows" end
  plan.split = { out_proj = split(plan.Hc * d, D), gate_up = split(D, plan.fc), down = split(plan.fc, D) }
  -- the weights of each, per PE: a column block [K, n / P], or the cube's
  -- [K, n] split by rows, ceil(K / P) rows each
  local function wsize(which, K, ncols, n)
    return plan.split[which] == "cols" and K * ncols or (K + P - 1) // P * n
  end
  plan.wo_n = wsize("out_proj", plan.Hc * d, plan.Db, D)
  plan.wgu_n = wsize("gate_up", D, plan.fp_max, plan.fc)
  plan.wd_n = wsize("down", plan.fc, plan.Db, D)
  -- attention in blocks whose temporaries fit the kernels' scratch ring
  -- (docs/models.md, "Attention in blocks"): prefill folds [qb, qb] score
  -- blocks (the last of a PE's rows qr), decode kb cached positions at a time
  plan.qb = M.attention_block(plan.sq or 1, d)
  plan.qr = (plan.sq or 1) % plan.qb
  plan.kb = math.max(1, M.SCRATCH_BUDGET // (4 * d))
  -- per PE: the staging of row copies, and up's output
  plan.stage_n = math.max(T * plan.Db, (plan.sq or 1) * d)
  plan.ubuf_n = plan.split.gate_up == "rows" and plan.Tp * plan.fc or T * plan.fp_max
  return setmetatable(plan, { __index = M })
end

--- Bytes of a PE's scratch ring that one step of an attention loop may
-- take: half of the default 1 MiB, so a step's results stay readable while
-- the next step's are made.
M.SCRATCH_BUDGET = 512 * 1024

--- The rows of a prefill attention block: all sq of a PE's query rows if
-- one step's temporaries fit the budget (about 7 f32 [b, b] score arrays
-- and 5 f32 [b, d] outputs), else the largest b <= 128 that fits.
function M.attention_block(sq, d)
  local function fits(b) return 28 * b * b + 20 * b * d <= M.SCRATCH_BUDGET end
  if fits(sq) then return sq end
  local b = math.min(sq, 128)
  while b > 1 and not fits(b) do b = b - 1 end
  return b
end

--- The element offset of row k of cube c's [K, n] weight split by rows.
function M:wrow(c, k, K, n) return (c * self.P * ((K + self.P - 1) // self.P) + k) * n end

--- The element offset of row t of cube c's [T, n] activation.
function M:row(c, t, n) return (c * self.P * self.Tp + t) * n end

--- PE p's rows [lo, hi) of a cube's activations.
function M:rows(p) return math.min(self.T, p * self.Tp), math.min(self.T, (p + 1) * self.Tp) end

--- The global query head of (sip, cube)'s local head i, and its KV head.
function M:head(sip, cube, i)
  local h = sip * self.Hs + cube * self.Hc + i
  return h, h // self.group
end

--- The first KV head (global) of (sip, cube): local KV index = global - it.
function M:kv0(sip, cube) return (sip * self.Hs + cube * self.Hc) // self.group end

--- (sip, cube)'s MLP columns [lo, hi), and PE p's part [lo, hi) of a
-- cube's (relative to the cube's).
function M:ffn_cols(sip, cube)
  local q = sip * self.C + cube
  return q * self.fc, (q + 1) * self.fc
end
function M:ffn_pe(p) return part(self.fc, self.P, p) end

return M
