--- Running the ring attention kernels (kernels/attention_mesh_kv.lua,
-- attention_mesh_mlo.lua; docs/models.md) on one SIP and checking them
-- against a host reference.
--
--   local att = require "kernbench.models.attention"
--   local r = att.run(torch, { kind = "prefill", ranks = 8, rank_axis = 0, sq = 16, skv = 16, d = 128,
--                              n_heads = 8, n_kv_heads = 1, seed = 1 })
--   -- r = {exec_ns, gemms, ipcq_copies, verified = worst error or nil}
--
-- rank_axis 0: the ranks are PEs 0 .. R-1 of cube 0 (the `intracube_pe_ring`
-- install: a ring_1d plan over them); 1: PE 0 of cubes 0 .. R-1 (a ring over
-- the cubes' PE 0s, in cube order; the original's no-wrap intercube wiring
-- would leave the ring open). Each rank's blocks are its own shards.
local M = {}

local KERNEL = { prefill = "kernels.attention_mesh_kv", decode = "kernels.attention_mesh_mlo" }

local function check(o)
  if type(o) ~= "table" or not KERNEL[o.kind] then error("attention.run: kind must be \"prefill\" or \"decode\"", 3) end
  for _, k in ipairs { "ranks", "d", "n_heads", "n_kv_heads", "skv" } do
    if math.type(o[k]) ~= "integer" or o[k] < 1 then error(("attention.run: %s must be an integer >= 1"):format(k), 3) end
  end
  if o.n_heads % o.n_kv_heads ~= 0 then
    error(("attention.run: n_heads (%d) must be a multiple of n_kv_heads (%d)"):format(o.n_heads, o.n_kv_heads), 3)
  end
  if o.rank_axis ~= 0 and o.rank_axis ~= 1 then error("attention.run: rank_axis must be 0 or 1", 3) end
end

-- Softmax(q k^T / sqrt(d)) v on the host, f32.
local function reference(torch, q, k, v, d)
  local s = torch.mul(torch.matmul(q, k:transpose(0, 1)), 1 / math.sqrt(d))
  return torch.matmul(torch.softmax(s, 1), v)
end

-- Where the time goes: per PE engine (pe_gemm, pe_math, pe_dma, pe_ipcq),
-- the time it had an operation in flight (overlapping operations count
-- once), from the op-log records of the launch, averaged over the R ranks.
local function engine_busy(records, t0, R)
  local spans = {} -- [pe .. engine] = {{start, end}, ...}
  for _, rec in ipairs(records) do
    local pe, engine = rec.component:match("^(sip%d+%.cube%d+%.pe%d+)%.(pe_%w+)$")
    if pe and rec.t_start_ns >= t0 then
      local key = pe .. " " .. engine
      spans[key] = spans[key] or {}
      table.insert(spans[key], { rec.t_start_ns, rec.t_end_ns })
    end
  end
  local busy = { pe_gemm = 0, pe_math = 0, pe_dma = 0, pe_ipcq = 0 }
  for key, list in pairs(spans) do
    local engine = key:match(" (.*)$")
    table.sort(list, function(a, b) return a[1] < b[1] end)
    local total, from, to = 0, list[1][1], list[1][2]
    for i = 2, #list do
      if list[i][1] > to then
        total, from, to = total + (to - from), list[i][1], list[i][2]
      elseif list[i][2] > to then
        to = list[i][2]
      end
    end
    busy[engine] = (busy[engine] or 0) + total + (to - from)
  end
  for engine, ns in pairs(busy) do busy[engine] = ns / R end
  return busy
end

--- Runs one attention on `torch`'s current SIP; checks it in data mode.
function M.run(torch, o)
  check(o)
  local P = torch.spec
  local R, d, H, G = o.ranks, o.d, o.n_heads, o.n_kv_heads
  local sq = o.kind == "prefill" and (o.sq or 16) or 1
  local skv = o.skv
  if o.rank_axis == 0 and R > P.pes_per_cube then
    error(("attention.run: %d ranks on the PEs of one cube (it has %d)"):format(R, P.pes_per_cube), 2)
  elseif o.rank_axis == 1 and R > P.cubes_per_sip then
    error(("attention.run: %d ranks on the cubes of one SIP (it has %d)"):format(R, P.cubes_per_sip), 2)
  end
  local sip = torch.ahbm.current_device() or 0
  local pes = {}
  for r = 0, R - 1 do
    pes[r + 1] = o.rank_axis == 0 and { sip = sip, cube = 0, pe = r } or { sip = sip, cube = r, pe = 0 }
  end
  torch.install_ipcq { topology = "ring_1d", pes = pes, slot_size = math.max(4096, (H // G) * d * 4, skv * d * 2) }
  local dp = o.rank_axis == 0 and torch.DPPolicy { pe = "row_wise", num_cubes = 1, num_pes = R }
    or torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1, num_cubes = R }
  torch.manual_seed(o.seed or 1)
  -- the query: prefill, each rank its own rows; decode, one token every rank holds
  local qh = o.kind == "prefill" and torch.randn({ R * H * sq, d }, { dtype = "f16" })
    or torch.randn({ H, d }, { dtype = "f16" })
  local qdev = o.kind == "prefill" and qh or torch.cat((function()
    local t = {}
    for r = 1, R do t[r] = qh end
    return t
  end)(), 0)
  local kh = torch.randn({ R * G * skv, d }, { dtype = "f16" })
  local vh = torch.randn({ R * G * skv, d }, { dtype = "f16" })
  local q, k, v = torch.to_device(qdev, dp), torch.to_device(kh, dp), torch.to_device(vh, dp)
  local out = torch.zeros({ R * H * sq, d }, { dtype = "f32", dp = dp })
  local before = torch.sim:stats().op_counts
  local t0 = torch.sim:now()
  local h = o.kind == "prefill"
    and torch.launch(KERNEL.prefill, o.rank_axis == 0 and { R, 1 } or { 1, R }, q, k, v, out, sq, skv, d, H, G, o.rank_axis)
    or torch.launch(KERNEL.decode, o.rank_axis == 0 and { R, 1 } or { 1, R }, q, k, v, out, skv, d, H, G, o.rank_axis)
  local st = torch.sim:stats()
  local function count(prefix)
    local n = 0
    for name, c in pairs(st.op_counts) do
      if name:sub(1, #prefix) == prefix then n = n + c - (before[name] or 0) end
    end
    return n
  end
  local r = { exec_ns = h.result.pe_exec_ns, ranks = R, sq = sq, skv = skv, d = d, n_heads = H, n_kv_heads = G,
              counts = { gemm = count("gemm_"), dma_read = count("dma_read"), dma_write = count("dma_write"),
                         ipcq_send = 0, ipcq_recv = 0 },
              ipcq_wait_ns = 0 }
  -- the plan's queues (this install's, counted from zero)
  for _, c in ipairs(st.components) do
    for _, dir in ipairs(c.directions or {}) do
      r.counts.ipcq_send = r.counts.ipcq_send + dir.sent
      r.counts.ipcq_recv = r.counts.ipcq_recv + dir.received
      r.ipcq_wait_ns = r.ipcq_wait_ns + dir.credit_wait_ns + dir.recv_wait_ns
    end
  end
  r.ipcq_wait_ns = r.ipcq_wait_ns / R
  local held, log = pcall(torch.sim.op_log, torch.sim)
  r.engine_ns = held and #log.records > 0 and engine_busy(log.records, t0, R) or nil
  if torch.data then
    local got = out:cpu()
    local worst = 0
    local group = H // G
    -- every key of K/V head g: the ranks' blocks one after another
    local function all_kv(t, g)
      local parts = {}
      for rr = 0, R - 1 do parts[rr + 1] = t:narrow(0, (rr * G + g) * skv, skv) end
      return torch.cat(parts, 0):float()
    end
    for rank = 0, (o.kind == "prefill" and R or R) - 1 do
      for hh = 0, H - 1 do
        local g = hh // group
        local qrows = o.kind == "prefill" and qh:narrow(0, (rank * H + hh) * sq, sq) or qh:narrow(0, hh, 1)
        local want = reference(torch, qrows:float(), all_kv(kh, g), all_kv(vh, g), d)
        local have = got:narrow(0, (rank * H + hh) * sq, sq)
        local e = torch.verify(("%s rank %d head %d"):format(o.kind, rank, hh), have, want, { tol = 2e-2 })
        worst = math.max(worst, e or 0)
      end
    end
    r.verified = worst
  end
  torch.uninstall_ipcq()
  for _, t in ipairs { q, k, v, out } do t:free() end
  return r
end

return M
