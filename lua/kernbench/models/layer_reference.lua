--- The host side of a decoder layer in data mode (docs/models.md): its
-- weights (seeded), their shards copied into each SIP's tensors as the
-- plan places them, and the layer computed on the host to check the
-- device's output against.
local M = {}

local function randn(torch, shape, scale) return (torch.randn(shape) * scale):half() end

--- The layer's host tensors: input x [T, D], the weights, the rotary
-- tables, and for decode the K/V cache [G, B, L, .] (keys already rotated).
function M.weights(torch, plan, seed)
  torch.manual_seed(seed)
  local D, H, G, d, F, T = plan.D, plan.H, plan.G, plan.d, plan.F, plan.T
  local w = { x = randn(torch, { T, D }, 1), wq = randn(torch, { D, H * d }, 1 / math.sqrt(D)),
              wk = randn(torch, { D, G * d }, 1 / math.sqrt(D)), wv = randn(torch, { D, G * d }, 1 / math.sqrt(D)),
              wo = randn(torch, { H * d, D }, 1 / math.sqrt(H * d)), wg = randn(torch, { D, F }, 1 / math.sqrt(D)),
              wu = randn(torch, { D, F }, 1 / math.sqrt(D)), wd = randn(torch, { F, D }, 1 / math.sqrt(F)),
              g_attn = (torch.rand({ D }) * 0.5 + 0.75):half(), g_mlp = (torch.rand({ D }) * 0.5 + 0.75):half() }
  -- rotary angles: row t at position t (prefill) or L - 1 (decode)
  local h2 = d // 2
  local cos, sin = {}, {}
  for t = 0, T - 1 do
    local pos = plan.mode == "decode" and plan.L - 1 or t
    local rc, rs = {}, {}
    for i = 0, h2 - 1 do
      local a = pos * plan.model.rope_theta ^ (-2 * i / d)
      rc[i + 1], rs[i + 1] = math.cos(a), math.sin(a)
    end
    cos[t + 1], sin[t + 1] = rc, rs
  end
  w.cos, w.sin = torch.tensor(cos, { dtype = "f16" }), torch.tensor(sin, { dtype = "f16" })
  if plan.mode == "decode" then
    w.kc1 = randn(torch, { G, T, plan.L, h2 }, 1)
    w.kc2 = randn(torch, { G, T, plan.L, h2 }, 1)
    w.vc = randn(torch, { G, T, plan.L, d }, 1)
  end
  return w
end

-- rows of one flat f16 host tensor per row of a [rows, n] device tensor,
-- each padded with zeros to n
local function rows_of(torch, pieces, n)
  local rows = {}
  for i, list in ipairs(pieces) do
    local parts, len = {}, 0
    for _, t in ipairs(list) do
      parts[#parts + 1] = t:reshape({ -1 })
      len = len + t:numel()
    end
    if len < n then parts[#parts + 1] = torch.zeros({ n - len }, { dtype = "f16" }) end
    rows[i] = torch.cat(parts, 0):reshape({ 1, n })
  end
  return torch.cat(rows, 0)
end

-- PE p's part of a cube's weight m [K, n] of a row-parallel GEMM (or of
-- gate/up, column-parallel): its columns (cols: [p D / P, ...) of the
-- output, or its share of the cube's MLP columns for gate/up), or its
-- rows [p ceil(K / P), ...) (rows).
local function by_split(plan, which, m, p)
  local K, n = m:size(0), m:size(1)
  if plan.split[which] == "rows" then
    local Kp = (K + plan.P - 1) // plan.P
    local lo, hi = math.min(K, p * Kp), math.min(K, (p + 1) * Kp)
    return hi > lo and m:narrow(0, lo, hi - lo) or nil
  end
  if which == "gate_up" then
    local lo, hi = plan:ffn_pe(p)
    return hi > lo and m:narrow(1, lo, hi - lo) or nil
  end
  return m:narrow(1, p * (n // plan.P), n // plan.P)
end

--- Copies SIP w's shards of the host tensors into its device tensors.
function M.load(torch, plan, w, sip, b)
  local C, P, T, D, d, h2 = plan.C, plan.P, plan.T, plan.D, plan.d, plan.d // 2
  local function put(dev, host) torch.wait(dev:copy_(host)) end
  local cubes, qkv, wo, wg, wu, wd, kc1, kc2, vc = {}, {}, {}, {}, {}, {}, {}, {}, {}
  for c = 0, C - 1 do
    local active = c < plan.Ca
    local kv0 = plan:kv0(sip, c)
    local clo, chi = plan:ffn_cols(sip, c)
    for p = 0, P - 1 do
      local i = c * P + p + 1
      local r0, r1 = plan:rows(p)
      cubes[i] = r1 > r0 and { w.x:narrow(0, r0, r1 - r0) } or {}
      qkv[i], wo[i], wg[i], wu[i], wd[i], kc1[i], kc2[i], vc[i] = {}, {}, {}, {}, {}, {}, {}, {}
      if active then
        for _, blk in ipairs(plan.blocks) do
          if blk.pe == p then
            local col
            if blk.kind == "q" then col = w.wq:narrow(1, (plan:head(sip, c, blk.idx)) * d + blk.half * h2, blk.cols)
            elseif blk.kind == "k" then col = w.wk:narrow(1, (kv0 + blk.idx) * d + blk.half * h2, blk.cols)
            else col = w.wv:narrow(1, (kv0 + blk.idx) * d, d) end
            table.insert(qkv[i], col)
          end
        end
        local rows = {}
        for hi = 0, plan.Hc - 1 do rows[#rows + 1] = w.wo:narrow(0, (plan:head(sip, c, hi)) * d, d) end
        wo[i][1] = by_split(plan, "out_proj", torch.cat(rows, 0), p)
        if plan.mode == "decode" then
          for g = 0, plan.Gc - 1 do
            for bb = 0, T - 1 do
              for _, pair in ipairs { { kc1, w.kc1 }, { kc2, w.kc2 }, { vc, w.vc } } do
                if kv0 + g < plan.G then
                  local t = pair[2]:narrow(0, kv0 + g, 1):narrow(1, bb, 1):narrow(2, p * plan.Lp, plan.Lp)
                  table.insert(pair[1][i], t)
                end
              end
            end
          end
        end
      end
      wg[i][1] = by_split(plan, "gate_up", w.wg:narrow(1, clo, chi - clo), p)
      wu[i][1] = by_split(plan, "gate_up", w.wu:narrow(1, clo, chi - clo), p)
      wd[i][1] = by_split(plan, "down", w.wd:narrow(0, clo, chi - clo), p)
    end
  end
  put(b.x, rows_of(torch, cubes, plan.Tp * D))
  put(b.wqkv, rows_of(torch, qkv, plan.qkv_w_n))
  put(b.wo, rows_of(torch, wo, plan.wo_n))
  put(b.wg, rows_of(torch, wg, plan.wgu_n))
  put(b.wu, rows_of(torch, wu, plan.wgu_n))
  put(b.wd, rows_of(torch, wd, plan.wd_n))
  put(b.g_attn, w.g_attn)
  put(b.g_mlp, w.g_mlp)
  put(b.cos, w.cos)
  put(b.sin, w.sin)
  if plan.mode == "prefill" then
    local function causal(n)
      local m = {}
      for r = 1, n do
        m[r] = {}
        for c = 1, n do m[r][c] = c > r and -math.huge or 0 end
      end
      return torch.tensor(m, { dtype = "f32" })
    end
    put(b.mask, causal(plan.qb))
    if b.mask_rest then put(b.mask_rest, causal(plan.qr)) end
  else
    local n = plan.Gc * T * plan.Lp
    put(b.kc1, rows_of(torch, kc1, n * h2))
    put(b.kc2, rows_of(torch, kc2, n * h2))
    put(b.vc, rows_of(torch, vc, n * d))
  end
end

-- RMSNorm in f32, rounded to f16 as the device stores it.
local function rms(torch, x, g, eps, D)
  local xf = x:float()
  local ms = torch.div(torch.sum(torch.mul(xf, xf), 1, true), D)
  return torch.mul(torch.div(xf, torch.sqrt(torch.add(ms, eps))), g:float()):half()
end

local function rotate(torch, x1, x2, cs, sn)
  return torch.sub(torch.mul(x1, cs), torch.mul(x2, sn)), torch.add(torch.mul(x2, cs), torch.mul(x1, sn))
end

--- The layer on the host; checks each rank's output (every cube's row)
-- against it and returns the worst error.
function M.check(torch, plan, w, outs)
  local T, D, d, h2, L = plan.T, plan.D, plan.d, plan.d // 2, plan.L
  local eps = plan.model.norm_eps
  local xn = rms(torch, w.x, w.g_attn, eps, D)
  local q, k, v = torch.matmul(xn, w.wq), torch.matmul(xn, w.wk), torch.matmul(xn, w.wv)
  local heads = {}
  for h = 0, plan.H - 1 do
    local g = h // plan.group
    local q1, q2 = rotate(torch, q:narrow(1, h * d, h2), q:narrow(1, h * d + h2, h2), w.cos, w.sin)
    local k1, k2 = rotate(torch, k:narrow(1, g * d, h2), k:narrow(1, g * d + h2, h2), w.cos, w.sin)
    local vv = v:narrow(1, g * d, d)
    local qh = torch.cat({ q1:half(), q2:half() }, 1):float()
    if plan.mode == "prefill" then
      local kh = torch.cat({ k1:half(), k2:half() }, 1):float()
      local s = torch.mul(torch.matmul(qh, kh:transpose(0, 1)), 1 / math.sqrt(d))
      for i = 0, T - 1 do for j = i + 1, T - 1 do s:set(i, j, -math.huge) end end
      heads[h + 1] = torch.matmul(torch.softmax(s, 1), vv:float())
    else
      local rows = {}
      for b = 0, T - 1 do
        local function cache(t, n, new)
          local past = t:narrow(0, g, 1):narrow(1, b, 1):reshape({ L, n }):narrow(0, 0, L - 1)
          return torch.cat({ past, new:narrow(0, b, 1):half() }, 0)
        end
        local kh = torch.cat({ cache(w.kc1, h2, k1), cache(w.kc2, h2, k2) }, 1):float()
        local vh = cache(w.vc, d, vv):float()
        local s = torch.mul(torch.matmul(qh:narrow(0, b, 1), kh:transpose(0, 1)), 1 / math.sqrt(d))
        rows[b + 1] = torch.matmul(torch.softmax(s, 1), vh)
      end
      heads[h + 1] = torch.cat(rows, 0)
    end
  end
  local att = torch.cat(heads, 1):half()
  local h = torch.add(w.x, torch.matmul(att, w.wo))
  local hn = rms(torch, h, w.g_mlp, eps, D)
  local gate = torch.matmul(hn, w.wg):float()
  local act = torch.mul(torch.div(gate, torch.add(torch.exp(torch.neg(gate)), 1)), torch.matmul(hn, w.wu):float()):half()
  local want = torch.add(h, torch.matmul(act, w.wd)):float()
  local worst = 0
  for r = 0, plan.W - 1 do
    for c = 0, plan.C - 1 do
      local got = outs[r]:narrow(0, c * plan.P, plan.P):reshape({ -1 }):narrow(0, 0, T * D):reshape({ T, D })
      local e = torch.verify(("llama-layer output, rank %d cube %d"):format(r, c), got, want, { tol = 3e-2 })
      worst = math.max(worst, e or 0)
    end
  end
  return worst
end

return M
