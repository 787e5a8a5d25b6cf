--- An analytic estimate of a collective's time (kb.ccl.predict, docs/ccl.md):
-- alpha-beta per hop from the compiled topology's path formula
-- (t:path_latency_ns: node overheads, propagation, bytes at the narrowest
-- link) and the PE's own costs read from its attributes, with no queueing:
-- what the simulation adds beyond it is contention.
--
--   kb.ccl.predict{algorithm = "lrab_hierarchical_allreduce", topology = t, nbytes = 98304,
--                  buffer_kind = "tcm", slot_size = 4096, root = nil}
--     -> {predicted_ns, hop_ns, sip_hop_ns, period_ns, chunks, groups, hops, sip_rounds, load_ns, store_ns}
local options = require "kernbench.options"
local sfr = require "kernbench.ccl.sfr"

local M = {}

local function attr(t, kind, name, at)
  local id = t:node_at { kind = kind, sip = at.sip, cube = at.cube, pe = at.pe }
  return id and t:node(id).attrs[name] or 0
end

local function node(t, kind, at) return t:node_at { kind = kind, sip = at.sip, cube = at.cube, pe = at.pe } end

-- The PE-side costs of one message of c bytes (ns), from the attributes of
-- sip0.cube0.pe0's parts.
local function pe_costs(t, c, kind)
  local at = { sip = 0, cube = 0, pe = 0 }
  local clock = attr(t, "pe_cpu", "clock_ghz", at)
  local dispatch = attr(t, "pe_cpu", "dispatch_cycles", at) / clock + attr(t, "pe_cpu", "overhead_ns", at)
    + attr(t, "pe_scheduler", "overhead_ns", at)
  local tcm_r, tcm_w = attr(t, "pe_tcm", "read_bw_gbs", at), attr(t, "pe_tcm", "write_bw_gbs", at)
  local slot -- one slot write or read
  if kind == "tcm" then
    slot = attr(t, "pe_ipcq", "tcm_slot_overhead_ns", at) + c / tcm_w
  else
    local bank = kind == "sram" and node(t, "sram", { sip = 0, cube = 0 }) or node(t, "hbm_ctrl", at)
    local dma = node(t, "pe_dma", at)
    -- the hop to the bank: c bytes at the route's narrowest link (its drain, no overheads)
    local drain = t:path_latency_ns(dma, bank, "data", c) - t:path_latency_ns(dma, bank, "data", 0)
    slot = attr(t, "pe_ipcq", kind .. "_slot_overhead_ns", at) + c / attr(t, "pe_ipcq", kind .. "_slot_bw_gbs", at)
      + drain
  end
  -- an f16 combine: fetch both operands, PE_MATH's vectors, write back
  local lanes = math.max(1, attr(t, "pe_math", "simd_bytes", at) // 2)
  local combine = dispatch + attr(t, "pe_fetch_store", "overhead_ns", at) * 2 + 2 * c / tcm_r + c / tcm_w
    + attr(t, "pe_math", "overhead_ns", at) + math.ceil(c / 2 / lanes) / attr(t, "pe_math", "clock_ghz", at)
  local send = dispatch + c / tcm_r -- the source's TCM read (the comm setup is in the path formula)
  return { dispatch = dispatch, slot = slot, combine = combine, send = send }
end

-- One message's latency from PE a to PE b (c bytes) and the receiver's
-- blocking credit back, plus the PE costs around it.
local function hop(t, a, b, c, pc)
  local da, db = node(t, "pe_dma", a), node(t, "pe_dma", b)
  local token = t:path_latency_ns(da, db, "data", c)
  local credit = t:path_latency_ns(db, da, "data", attr(t, "pe_ipcq", "credit_bytes", b))
  return pc.send + token + 2 * pc.slot + pc.dispatch + credit + pc.combine, credit
end

local MODELS = {}

--- The estimate for algorithm o.algorithm on topology o.topology of an
-- all-reduce of o.nbytes per cube (f16).
function M.predict(o)
  if type(o) ~= "table" then error("kb.ccl.predict: takes {algorithm =, topology =, nbytes =, ...}", 2) end
  options.check("kb.ccl.predict", o, { "algorithm", "topology", "nbytes", "buffer_kind", "slot_size", "root" }, 2)
  local algo = o.algorithm or "lrab_hierarchical_allreduce"
  if not MODELS[algo] then
    error(("kb.ccl.predict: no model for algorithm '%s' yet (models: lrab_hierarchical_allreduce, "
      .. "ring_allreduce, tree_allreduce)"):format(tostring(algo)), 2)
  end
  local nbytes = o.nbytes
  if math.type(nbytes) ~= "integer" or nbytes < 2 then error("kb.ccl.predict: nbytes must be an integer >= 2", 2) end
  return MODELS[algo](o)
end

-- The ring (ring_allreduce.lua): 2 (W - 1) steps, each moving a segment of
-- nbytes / W in slot-sized pieces, one piece sent and received at a time.
function MODELS.ring_allreduce(o)
  local t = o.topology or kb.topology.load()
  local P = t:params()
  local nbytes, kind, slot_size = o.nbytes, o.buffer_kind or "tcm", o.slot_size or 4096
  local ring = require("kernbench.ccl.algorithms.ring_allreduce").wiring(P)
  local W = ring.world
  local seg = math.max(2, (nbytes // 2 + W - 1) // W * 2)
  local c = math.min(seg, slot_size)
  local pieces = (seg + slot_size - 1) // slot_size
  local pc = pe_costs(t, c, kind)
  local hops = {}
  for i = 1, W do hops[i] = (hop(t, ring.pes[i], ring.pes[i % W + 1], c, pc)) end
  table.sort(hops)
  local typical, worst = hops[(W + 1) // 2], hops[W]
  local at = { sip = 0, cube = 0, pe = 0 }
  local dma, hbm = node(t, "pe_dma", at), node(t, "hbm_ctrl", at)
  -- every piece of every segment is loaded at the start and stored at the end
  local rows = W * pieces * (2 * pc.dispatch + t:path_latency_ns(dma, hbm, "data", 0)
    + t:path_latency_ns(hbm, dma, "data", c) + t:path_latency_ns(dma, hbm, "data", c)
    + t:path_latency_ns(hbm, dma, "data", 0))
  -- rank r's step s waits for rank r - 1's step s - 1: the critical path
  -- moves one rank per step, so it crosses the slowest link about twice in
  -- 2 (W - 1) steps and the typical one the rest of the time
  local steps = 2 * (W - 1)
  local predicted = steps * pieces * typical + math.min(steps, 2) * pieces * (worst - typical) + rows
  return { predicted_ns = predicted, hop_ns = typical, worst_hop_ns = worst, steps = steps, pieces = pieces,
           ranks = W }
end

-- The tree (tree_allreduce.lua): floor(log2 W) hops up and as many down,
-- once per group of chunks; further chunks stream at the period of a rank
-- with two children (two receives and combines, a send); every chunk is
-- loaded and stored.
function MODELS.tree_allreduce(o)
  local t = o.topology or kb.topology.load()
  local P = t:params()
  local nbytes, kind, slot_size = o.nbytes, o.buffer_kind or "tcm", o.slot_size or 4096
  local tree = require "kernbench.ccl.algorithms.tree_allreduce"
  local w = tree.wiring(P)
  local W = w.world
  local c = math.min(nbytes, slot_size)
  local chunks = (nbytes + slot_size - 1) // slot_size
  local pc = pe_costs(t, c, kind)
  local depth = 0
  while (1 << (depth + 1)) <= W do depth = depth + 1 end
  -- the hops along the deepest path (rank 2^d - 1 up to the root)
  local up, credit = 0, 0
  local r = (1 << depth) - 1
  while r > 0 do
    local p = (r - 1) // 2
    local h, cr = hop(t, w.pes[r + 1], w.pes[p + 1], c, pc)
    up, credit = up + h, math.max(credit, cr)
    r = p
  end
  local at = { sip = 0, cube = 0, pe = 0 }
  local args = tree.kernel_args(W, nbytes // 2, { slot_size = slot_size,
                                                 scratch_bytes = attr(t, "pe_cpu", "scratch_kb", at) * 1024 })
  local groups = (chunks + args.group - 1) // args.group
  local recv = pc.dispatch + pc.slot + credit
  local stream = chunks > 1 and (chunks - 1) * (2 * (recv + pc.combine) + pc.send + recv + 2 * pc.send) or 0
  local dma, hbm = node(t, "pe_dma", at), node(t, "hbm_ctrl", at)
  local rows = chunks * (2 * pc.dispatch + t:path_latency_ns(dma, hbm, "data", 0) + t:path_latency_ns(hbm, dma, "data", c)
    + t:path_latency_ns(dma, hbm, "data", c) + t:path_latency_ns(hbm, dma, "data", 0))
  local predicted = groups * 2 * up + stream + rows
  return { predicted_ns = predicted, depth = depth, ranks = W, chunks = chunks, groups = groups }
end

function MODELS.lrab_hierarchical_allreduce(o)
  local t = o.topology or kb.topology.load()
  local P = t:params()
  local nbytes = o.nbytes
  local kind = o.buffer_kind or "tcm"
  local slot_size = o.slot_size or 4096
  local c = math.min(nbytes, slot_size)
  local chunks = (nbytes + slot_size - 1) // slot_size
  local w, h = P.cube_w, P.cube_h
  local root = o.root or (h // 2) * w + w // 2
  local rc, rr = root % w, root // w
  local pc = pe_costs(t, c, kind)
  -- the longest chains of the intra-SIP phases, one cube per hop
  local hops = math.max(rc, w - 1 - rc) * 2 + math.max(rr, h - 1 - rr) * 2
  if w * h == 1 then hops = 0 end
  local nb = w > 1 and 1 or w
  local hop_ns, credit = hop(t, { sip = 0, cube = 0, pe = 0 }, { sip = 0, cube = nb, pe = 0 }, c, pc)
  -- the exchange between SIPs: rounds of the SIP topology, one SIP hop each
  local sw, sh = sfr.sip_grid(P)
  local rounds = 0
  if P.sips > 1 then
    if P.sip_topology == "ring_1d" then rounds = P.sips - 1
    elseif P.sip_topology == "torus_2d" then rounds = (sw - 1) + (sh - 1)
    else rounds = 2 * (sw - 1) + 2 * (sh - 1) end
  end
  local sip_hop = P.sips > 1 and hop(t, { sip = 0, cube = root, pe = 0 }, { sip = 1, cube = root, pe = 0 }, c, pc) or 0
  -- a chain streams a chunk each period, set by its busiest PE: in a reduce
  -- the root, which receives (slot read, blocking credit) and combines two
  -- streams; in a broadcast a middle cube's receive and forward
  local recv = pc.dispatch + pc.slot + credit
  local period = 2 * (recv + pc.combine)
  local period_b = math.max(2 * pc.send, recv + pc.send)
  local stream = chunks > 1 and hops > 0 and 2 * (chunks - 1) * (period + period_b) or 0
  -- chunks go a group at a time (as many as the kernel's scratch keeps alive,
  -- the module's kernel_args): each group fills and drains the chains anew;
  -- every chunk is loaded from and stored back to the PE's HBM slice
  local lrab = require "kernbench.ccl.algorithms.lrab_hierarchical_allreduce"
  local at = { sip = 0, cube = 0, pe = 0 }
  local args = lrab.kernel_args(P.sips, nbytes // 2, { cube_w = w, cube_h = h, slot_size = slot_size,
                                                      scratch_bytes = attr(t, "pe_cpu", "scratch_kb", at) * 1024 })
  local groups = (chunks + args.group - 1) // args.group
  local dma, hbm = node(t, "pe_dma", at), node(t, "hbm_ctrl", at)
  local load = pc.dispatch + t:path_latency_ns(dma, hbm, "data", 0) + t:path_latency_ns(hbm, dma, "data", c)
    + c / attr(t, "pe_tcm", "write_bw_gbs", at)
  local store = pc.dispatch + c / attr(t, "pe_tcm", "read_bw_gbs", at) + t:path_latency_ns(dma, hbm, "data", c)
    + t:path_latency_ns(hbm, dma, "data", 0)
  local predicted = groups * hops * hop_ns + stream + chunks * rounds * sip_hop + chunks * (load + store)
  return { predicted_ns = predicted, hop_ns = hop_ns, sip_hop_ns = sip_hop, period_ns = period, chunks = chunks,
           groups = groups, hops = hops, sip_rounds = rounds, load_ns = load, store_ns = store }
end

return M
