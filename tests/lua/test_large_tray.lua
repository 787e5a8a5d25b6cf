--- A tray of 64 SIPs, the most the 6-bit sip_id allows (docs/decisions.md,
-- "Trays beyond 16 SIPs"): it loads in each SIP topology, the addresses of
-- its SIPs decode and resolve to the right nodes (SIP 63 apart from SIP 15,
-- whose 51-bit address it extends), and traffic reaches SIP 63 through the
-- switch. One cube of one PE per SIP keeps the tray small (4225 nodes).
local lu = require "luaunit"

TestLargeTray = {}

local function tray(sips)
  return kb.topology.load("small_1cube_1pe", { "system.sips=" .. sips })
end

local RING = "{count: 64, topology: ring_1d}"
local SIP_BIT_51 = 1 << 51

function TestLargeTray:test_each_sip_topology_takes_64_sips()
  local cases = {
    { RING, "ring_1d", 0, 0 },
    { "{count: 64, topology: torus_2d}", "torus_2d", 8, 8 },
    { "{count: 64, topology: mesh_2d_no_wrap, w: 16, h: 4}", "mesh_2d_no_wrap", 16, 4 },
  }
  for _, c in ipairs(cases) do
    local t = tray(c[1])
    local p = t:params()
    lu.assertEquals({ p.sips, p.sip_topology, p.sip_grid_w, p.sip_grid_h }, { 64, c[2], c[3], c[4] })
    lu.assertEquals(t:node_at { kind = "pe_dma", sip = 63, cube = 0, pe = 0 }, "sip63.cube0.pe0.pe_dma")
    lu.assertNil(t:node_at { kind = "pe_dma", sip = 64, cube = 0, pe = 0 })
  end
end

function TestLargeTray:test_65_sips_are_refused_naming_the_key()
  lu.assertErrorMsgContains("system.sips.count: 65 is out of range (1 .. 64)", tray, "{count: 65}")
  lu.assertErrorMsgContains("system.sips.w: 65 is out of range (1 .. 64)", tray,
                            "{count: 64, topology: torus_2d, w: 65, h: 1}")
end

function TestLargeTray:test_addresses_of_sip_63_decode_and_resolve_to_sip_63()
  local t = tray(RING)
  local pa = kb.addr.pe_hbm(63, 0, 0, 0x2000)
  lu.assertEquals(pa, (63 << 47) | (1 << 37) | 0x2000)
  local f = kb.addr.decode(pa)
  lu.assertEquals({ f.sip, f.die, f.kind, f.offset }, { 63, 0, "hbm", 0x2000 })
  lu.assertEquals({ t:resolve(pa) }, { "sip63.cube0.hbm_ctrl.pe0", 0x2000 })
  lu.assertEquals(kb.addr.format(pa), "sip63.die0 hbm offset 0x2000")
  -- SIP 15's address is SIP 63's without bits [52:51]: the spec's 51-bit one.
  local pa15 = kb.addr.pe_hbm(15, 0, 0, 0x2000)
  lu.assertEquals(pa15, pa & (SIP_BIT_51 - 1))
  lu.assertEquals({ t:resolve(pa15) }, { "sip15.cube0.hbm_ctrl.pe0", 0x2000 })
  lu.assertEquals({ t:resolve(kb.addr.pe_tcm(63, 0, 0, 0x40)) }, { "sip63.cube0.pe0.pe_tcm", 0x40 })
  lu.assertEquals(kb.addr.decode(SIP_BIT_51 | (1 << 37)).sip, 16)
  lu.assertErrorMsgContains("sip 64 is out of range (0..63)", kb.addr.hbm, 64, 0, 0)
  lu.assertErrorMsgContains("exceeds 53 bits", kb.addr.decode, 1 << 53)
end

function TestLargeTray:test_bytes_written_to_sip_63_stay_apart_from_sip_15()
  local s = sim.new { topology = tray(RING) }
  local at = { [15] = "fifteen.", [63] = "sixty-3." }
  for sip, bytes in pairs(at) do
    s:memory_write { pa = kb.addr.pe_hbm(sip, 0, 0, 0x4000), nbytes = #bytes, data = bytes }
  end
  s:run()
  for sip, bytes in pairs(at) do
    local r = s:memory_read { pa = kb.addr.pe_hbm(sip, 0, 0, 0x4000), nbytes = #bytes, data = true }
    s:run()
    lu.assertEquals(r:value().data, bytes)
  end
end

-- A PE DMA write from SIP 0 to SIP 63's HBM crosses the switch; on one
-- switch every pair of SIPs is equally far apart, so it takes what SIP 0 to
-- SIP 1 takes on a 2-SIP tray. A PE of SIP 63 reaches its own HBM without
-- leaving SIP 63.
function TestLargeTray:test_pe_dma_reaches_sip_63_across_the_switch_and_within_it()
  local function write(t, src_sip, dst)
    local s = sim.new { topology = t }
    local e = s:pe_dma { sip = src_sip, cube = 0, pe = 0, dst_pa = dst, nbytes = 512, write = true }
    s:run()
    return e:value()
  end
  local big = tray(RING)
  local far = write(big, 0, kb.addr.pe_hbm(63, 0, 0, 0x2000))
  lu.assertEquals(far.path[1], "sip0.cube0.pe0.pe_dma")
  lu.assertEquals(far.path[#far.path], "sip63.cube0.hbm_ctrl.pe0")
  local at_switch
  for i, id in ipairs(far.path) do
    if id == "fabric.switch0" then at_switch = i end
  end
  lu.assertEquals({ far.path[at_switch - 1], far.path[at_switch + 1] }, { "sip0.io0.pcie_ep", "sip63.io0.pcie_ep" })
  local two = write(tray("{count: 2}"), 0, kb.addr.pe_hbm(1, 0, 0, 0x2000))
  lu.assertAlmostEquals(far.latency_ns, two.latency_ns, 1e-9)

  local own = write(big, 63, kb.addr.pe_hbm(63, 0, 0, 0x2000))
  lu.assertEquals(own.path[#own.path], "sip63.cube0.hbm_ctrl.pe0")
  for _, id in ipairs(own.path) do
    lu.assertStrMatches(id, "sip63%..*")
  end
  lu.assertTrue(own.latency_ns < far.latency_ns)
end
