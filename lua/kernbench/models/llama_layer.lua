--- One Llama decoder layer over the tray (docs/models.md, "A decoder
-- layer"): the plan (kernbench.models.layer_plan), its tensors on every
-- SIP, the phases run by the ranks of torch.distributed, where each
-- phase's time goes, and in data mode the check against the host
-- reference (kernbench.models.layer_reference).
--
--   local layer = require "kernbench.models.llama_layer"
--   local r = layer.run(torch, model, {mode = "prefill", tokens = 128, context = 0, cubes = 16, pes = 8, seed = 1})
local Plan = require "kernbench.models.layer_plan"
local K = require "kernbench.models.layer_kernels"
local ref = require "kernbench.models.layer_reference"

local M = {}

-- Phases in order; class "comm" for the all-reduces.
M.PHASES = {
  prefill = { "norm_attn", "qkv", "rope", "attention", "out_proj", "allreduce_attn", "norm_mlp", "gate_up", "down",
              "allreduce_mlp", "residual" },
  decode = { "norm_attn", "qkv", "rope", "attention", "attention_combine", "out_proj", "allreduce_attn", "norm_mlp",
             "gate_up", "down", "allreduce_mlp", "residual" },
}
local COMM = { allreduce_attn = true, allreduce_mlp = true }
-- the engines whose busy time a phase reports, by implementation
M.ENGINES = { "pe_gemm", "pe_math", "pe_dma", "pe_tcm", "hbm_ctrl" }
local COMPUTE, MEMORY = { pe_gemm = true, pe_math = true }, { pe_dma = true, hbm_ctrl = true }

-- Device tensors of one SIP (the current device): cube rows on PE 0 of
-- each cube, per-PE buffers on each PE, replicated constants on every PE.
local function allocate(torch, plan)
  local C, P, T, D, d = plan.C, plan.P, plan.T, plan.D, plan.d
  local cube = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1, num_cubes = C }
  local pe = torch.DPPolicy { cube = "row_wise", pe = "row_wise", num_cubes = C, num_pes = P }
  local rep = torch.DPPolicy { cube = "replicate", pe = "replicate", num_cubes = C, num_pes = P }
  -- every PE of a cube reaches the cube's rows and its PEs' buffers
  local function t(shape, dp, name, dtype, zero)
    return (zero and torch.zeros or torch.empty)(shape, { dtype = dtype or "f16", dp = dp, name = name,
                                                          map = dp ~= rep and "cube" or nil })
  end
  -- a cube's activation [T, n], its rows split over the cube's PEs (plan:row)
  local function rows(n, name) return t({ C * P, plan.Tp * n }, pe, name) end
  local n = P * plan.Tp * D
  local x = { x = rows(D, "x"), xn = rows(D, "xn"), h = rows(D, "h"), hn = rows(D, "hn"), out = rows(D, "out"),
              -- the all-reduces' rows, on each cube's PE 0 (docs/ccl.md); a
              -- cube without heads adds nothing: in data mode its row is zero
              -- (timing-only, values do not matter and zeroing would time
              -- and hold tens of MB per SIP)
              ar_attn = t({ C, n }, cube, "ar_attn", nil, torch.data),
              ar_mlp = t({ C, n }, cube, "ar_mlp", nil, torch.data),
              att = rows(plan.Hc * d, "att"), act = rows(plan.fc, "act"),
              qkv = t({ C * P, plan.qkv_out_n }, pe, "qkv"), wqkv = t({ C * P, plan.qkv_w_n }, pe, "w_qkv"),
              stage = t({ C * P, plan.stage_n }, pe, "stage"), wo = t({ C * P, plan.wo_n }, pe, "w_o"),
              wg = t({ C * P, plan.wgu_n }, pe, "w_gate"), wu = t({ C * P, plan.wgu_n }, pe, "w_up"),
              gbuf = t({ C * P, T * plan.fp_max }, pe, "gate"), ubuf = t({ C * P, plan.ubuf_n }, pe, "up"),
              wd = t({ C * P, plan.wd_n }, pe, "w_down"),
              g_attn = t({ D }, rep, "g_attn"), g_mlp = t({ D }, rep, "g_mlp"),
              cos = t({ T, d // 2 }, rep, "rope_cos"), sin = t({ T, d // 2 }, rep, "rope_sin") }
  if plan.mode == "prefill" then
    x.mask = t({ plan.qb, plan.qb }, rep, "causal_mask", "f32")
    if plan.qr > 0 then x.mask_rest = t({ plan.qr, plan.qr }, rep, "causal_mask_rest", "f32") end
  else
    local cache = plan.Gc * T * plan.Lp
    x.kc1 = t({ C * P, cache * d // 2 }, pe, "k_cache_lo")
    x.kc2 = t({ C * P, cache * d // 2 }, pe, "k_cache_hi")
    x.vc = t({ C * P, cache * d }, pe, "v_cache")
    x.state = t({ C * P, plan.Hc * T * (d + 2) }, pe, "softmax_state", "f32")
  end
  return x
end

-- Component busy time by id, link busy time by "src -> dst".
local function snapshot(s)
  local st = s:stats()
  local comps, links = {}, {}
  for _, c in ipairs(st.components) do
    local busy = c.busy_ns
    if c.pcs then -- an HBM controller's work is its channels': their mean busy time
      busy = 0
      for _, pc in ipairs(c.pcs) do busy = busy + pc.busy_ns end
      busy = busy / #c.pcs
    end
    comps[c.id] = { impl = c.impl, busy = busy }
  end
  for _, l in ipairs(st.links) do links[l.src .. " -> " .. l.dst] = { busy = l.busy_ns, bw = l.bw_gbs } end
  return { comps = comps, links = links, events = st.events }
end

-- A phase's engines (mean utilisation over the tray's units of each) and
-- its busiest link, from two snapshots.
local function account(plan, a, b, ns)
  local busy, units = {}, plan.W * plan.C * plan.P
  for _, e in ipairs(M.ENGINES) do busy[e] = 0 end
  local top_c, top_c_busy = nil, -1
  for id, c in pairs(b.comps) do
    local v = c.busy - (a.comps[id] and a.comps[id].busy or 0)
    local kind = c.impl:match("^builtin%.(.*)$")
    if kind and busy[kind] then busy[kind] = busy[kind] + v end
    if v > top_c_busy or (v == top_c_busy and id < top_c) then top_c, top_c_busy = id, v end
  end
  local util = {}
  for e, v in pairs(busy) do util[e] = ns > 0 and v / (units * ns) or 0 end
  local top, top_busy, top_bw = nil, -1, nil
  for key, l in pairs(b.links) do
    local v = l.busy - (a.links[key] and a.links[key].busy or 0)
    if v > top_busy or (v == top_busy and key < top) then top, top_busy, top_bw = key, v, l.bw end
  end
  return { engine_busy_ns = busy, engine_util = util, events = b.events - a.events,
           busiest_component = top_c and { id = top_c, util = ns > 0 and top_c_busy / ns or 0 } or nil,
           bottleneck_link = top and { link = top, util = ns > 0 and top_busy / ns or 0, bw_gbs = top_bw } or nil }
end

-- compute when the busiest compute engine is busier than the busiest
-- memory part, else memory; the all-reduces are communication
local function classify(name, acct)
  if COMM[name] then return "communication" end
  local cu, mu = 0, 0
  for e, u in pairs(acct.engine_util) do
    if COMPUTE[e] then cu = math.max(cu, u) elseif MEMORY[e] then mu = math.max(mu, u) end
  end
  return cu >= mu and "compute" or "memory"
end

--- The plan of a layer on torch's tray (errors: a plain message naming
-- the shape that does not fit).
function M.plan(torch, model, o)
  local plan = Plan.new(model, torch.spec, { mode = o.mode, tokens = o.tokens, context = o.context,
                                             sips = torch.spec.sips, cubes = o.cubes, pes = o.pes })
  return plan
end

--- Runs the layer on every SIP (one rank each); returns the breakdown
-- (rank 0's phases) and, in data mode, the worst error against the host
-- reference.

function M.run(torch, model, o, plan)
  plan = plan or M.plan(torch, model, o)
  local W = plan.W
  local dist = torch.distributed
  if not dist.is_initialized() then
    local ccl = o.ccl or {}
    dist.init_process_group { backend = "kernbench", slot_size = ccl.slot_size, n_slots = ccl.n_slots,
                              buffer_kind = ccl.buffer_kind }
  end
  local bufs, host = {}, nil
  if torch.data then host = ref.weights(torch, plan, o.seed or 1) end
  local device = torch.ahbm.current_device()
  for w = 0, W - 1 do
    torch.ahbm.set_device(w)
    bufs[w] = allocate(torch, plan)
    if host then ref.load(torch, plan, host, w, bufs[w]) end
  end
  torch.ahbm.set_device(device)
  torch.synchronize()

  local names = M.PHASES[plan.mode]
  local phases, outs = {}, {}
  local s = torch.sim
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    local b = bufs[rank]
    local grid = { plan.P, plan.C }
    local function launch(name, fn, ...)
      torch.launch({ name = name, fn = function(tl, ...) return fn(plan, tl, ...) end }, grid, ...)
    end
    local run = {
      norm_attn = function() launch("norm_attn", K.norm, b.x, false, false, b.xn, b.g_attn) end,
      qkv = function() launch("qkv", K.qkv, b.xn, b.wqkv, b.qkv) end,
      rope = function()
        if plan.mode == "decode" then launch("rope", K.rope, b.qkv, b.cos, b.sin, b.kc1, b.kc2, b.vc)
        else launch("rope", K.rope, b.qkv, b.cos, b.sin) end
      end,
      attention = function()
        if plan.mode == "decode" then
          launch("attention", K.attention_decode, rank, b.qkv, b.kc1, b.kc2, b.vc, b.state)
        else
          launch("attention", K.attention_prefill, rank, b.qkv, b.mask, b.mask_rest or b.mask, b.att, b.stage)
        end
      end,
      attention_combine = function() launch("attention_combine", K.attention_combine, b.state, b.att) end,
      out_proj = function() launch("out_proj", K.out_proj, b.att, b.wo, b.ar_attn, b.stage) end,
      allreduce_attn = function() dist.all_reduce(b.ar_attn) end,
      norm_mlp = function() launch("norm_mlp", K.norm, b.x, b.ar_attn, b.h, b.hn, b.g_mlp) end,
      gate_up = function() launch("gate_up", K.gate_up, b.hn, b.wg, b.wu, b.gbuf, b.ubuf, b.act) end,
      down = function() launch("down", K.down, b.act, b.wd, b.ar_mlp, b.stage) end,
      allreduce_mlp = function() dist.all_reduce(b.ar_mlp) end,
      residual = function() launch("residual", K.residual, b.h, b.ar_mlp, b.out) end,
    }
    for _, name in ipairs(names) do
      local t0 = torch.now_ns()
      local snap = rank == 0 and snapshot(s) or nil
      run[name]()
      if rank == 0 then
        local ns = torch.now_ns() - t0
        local acct = account(plan, snap, snapshot(s), ns)
        acct.name, acct.ns = name, ns
        acct.class = classify(name, acct)
        phases[#phases + 1] = acct
      end
    end
    if torch.data then outs[rank] = b.out:cpu() end
  end, {}, W)

  local total, shares = 0, { compute = 0, memory = 0, communication = 0 }
  for _, p in ipairs(phases) do
    total = total + p.ns
    shares[p.class] = shares[p.class] + p.ns
  end
  for k, v in pairs(shares) do shares[k] = total > 0 and v / total or 0 end
  local r = { plan = plan, phases = phases, total_ns = total, shares = shares }
  if torch.data then r.worst_error = ref.check(torch, plan, host, outs) end
  return r
end

return M
