--- The ring attention kernels (kernels/attention_mesh_kv.lua, prefill;
-- attention_mesh_mlo.lua, decode) through kernbench.models.attention: each
-- on 2, 4 and 8 ranks over both rank axes, GQA groupings, the decode's
-- 2 * n_ranks GEMMs, and the errors. att.run verifies every head of every
-- rank against the host reference in data mode (torch.verify raises on a
-- mismatch), so a wrong result fails these tests.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"
local att = require "kernbench.models.attention"

TestAttention = {}

local function runtime(data)
  return torchmod.new { topology = kb.topology.load("default"), data_mode = data and "data" or nil, op_log = true }
end

local function run(kind, ranks, axis, heads, kv_heads, data)
  local torch = runtime(data ~= false)
  local r = att.run(torch, { kind = kind, ranks = ranks, rank_axis = axis, sq = 4, skv = 8, d = 32,
                             n_heads = heads, n_kv_heads = kv_heads, seed = ranks * 10 + axis })
  torch.close()
  return r
end

function TestAttention:test_both_kernels_on_2_4_8_ranks_both_axes()
  for _, kind in ipairs { "prefill", "decode" } do
    for _, axis in ipairs { 0, 1 } do
      for _, R in ipairs { 2, 4, 8 } do
        local r = run(kind, R, axis, 2, 1)
        lu.assertNotNil(r.verified, ("%s axis %d R %d"):format(kind, axis, R))
        lu.assertTrue(r.verified < 1e-3)
        lu.assertTrue(r.exec_ns > 0)
        -- prefill: every rank passes K and V on R - 1 times; decode: (m, l, o) R - 1 times
        local per_rank = kind == "prefill" and 2 * (R - 1) or 3 * (R - 1)
        lu.assertEquals(r.counts.ipcq_send, R * per_rank)
        lu.assertEquals(r.counts.ipcq_recv, R * per_rank)
      end
    end
  end
end

function TestAttention:test_gqa_groupings()
  for _, kind in ipairs { "prefill", "decode" } do
    for _, hk in ipairs { { 1, 1 }, { 2, 1 }, { 2, 2 }, { 8, 1 }, { 8, 2 }, { 8, 8 } } do
      local r = run(kind, 4, 0, hk[1], hk[2])
      lu.assertTrue(r.verified < 1e-3, ("%s %d/%d heads"):format(kind, hk[1], hk[2]))
      -- one GEMM pair per K/V head per step (prefill: R steps; decode: once)
      local steps = kind == "prefill" and 4 or 1
      lu.assertEquals(r.counts.gemm, 2 * hk[2] * 4 * steps)
    end
  end
end

function TestAttention:test_decode_emits_two_gemms_per_rank()
  for _, c in ipairs { { 8, 0 }, { 4, 1 }, { 2, 0 } } do
    local r = run("decode", c[1], c[2], 8, 1)
    lu.assertEquals(r.counts.gemm, 2 * c[1])
  end
end

function TestAttention:test_timing_only_is_the_same_time_unverified()
  local with = run("prefill", 4, 1, 2, 1, true)
  local without = run("prefill", 4, 1, 2, 1, false)
  lu.assertNil(without.verified)
  lu.assertEquals(without.exec_ns, with.exec_ns)
  lu.assertEquals(without.counts, with.counts)
end

function TestAttention:test_rank_axis_1_leaves_other_pes_idle()
  local r = run("decode", 4, 1, 2, 1)
  -- only the 4 cubes' PE 0 load: Q, K and V each
  lu.assertEquals(r.counts.dma_read, 4 * 3)
  lu.assertEquals(r.counts.dma_write, 4)
  lu.assertTrue(r.engine_ns.pe_gemm > 0 and r.engine_ns.pe_math > 0)
end

function TestAttention:test_errors()
  local torch = runtime(false)
  local base = { kind = "prefill", ranks = 2, rank_axis = 0, skv = 8, d = 16, n_heads = 2, n_kv_heads = 1 }
  local function with(k, v, k2, v2)
    local o = {}
    for kk, vv in pairs(base) do o[kk] = vv end
    o[k] = v
    if k2 then o[k2] = v2 end
    return o
  end
  lu.assertErrorMsgContains('kind must be "prefill" or "decode"', att.run, torch, with("kind", "train"))
  lu.assertErrorMsgContains("n_heads (3) must be a multiple of n_kv_heads (2)", att.run, torch,
    with("n_heads", 3, "n_kv_heads", 2))
  lu.assertErrorMsgContains("rank_axis must be 0 or 1", att.run, torch, with("rank_axis", 2))
  lu.assertErrorMsgContains("9 ranks on the PEs of one cube (it has 8)", att.run, torch, with("ranks", 9))
  lu.assertErrorMsgContains("ranks must be an integer >= 1", att.run, torch, with("ranks", 0))
  torch.close()
end
