--- kernbench probe (lua/kernbench/probe.lua): cases, invariants, JSON, CLI parsing.
local lu = require "luaunit"
local probe = require "kernbench.probe"

local json_decode = require "json_decode"

local function keys_of(obj) return getmetatable(obj).keys end

-- Runs probe.main(args) with stdout and stderr captured.
local function main(args)
  local out, err = {}, {}
  local real_write, real_stderr = io.write, io.stderr
  io.write = function(...) for _, s in ipairs { ... } do out[#out + 1] = tostring(s) end end
  io.stderr = { write = function(_, ...) for _, s in ipairs { ... } do err[#err + 1] = tostring(s) end end }
  local ok, status = pcall(probe.main, args)
  io.write, io.stderr = real_write, real_stderr
  local usage = require "kernbench.usage"
  if not ok and usage.is(status) then -- the command line prints it and exits 2
    return 2, table.concat(out), usage.text(status)
  end
  if not ok then error(status, 0) end
  return status, table.concat(out), table.concat(err)
end

local ALL = { "h2d-1hop", "h2d-2hop", "h2d-3hop", "h2d-4hop", "d2h-1hop", "d2h-2hop", "d2h-3hop",
              "d2h-4hop", "pe-local-hbm", "pe-same-half-hbm", "pe-cross-half-hbm",
              "pe-cross-cube-hbm-best", "pe-cross-cube-hbm-worst" }

local function names(list)
  local out = {}
  for i, r in ipairs(list) do out[i] = r.name end
  return out
end

-- One run per topology, shared by the tests that only read it.
local cached = {}
local function result(topo)
  if not cached[topo] then cached[topo] = probe.run { topology = topo } end
  return cached[topo]
end

TestProbe = {}

function TestProbe:test_catalogue_has_the_thirteen_cases_in_order()
  lu.assertEquals(probe.case_names(), ALL)
end

function TestProbe:test_every_invariant_passes_on_the_default_topology()
  local res = result("default")
  lu.assertEquals(res.topology, "default")
  lu.assertEquals(res.nbytes, 32768)
  lu.assertEquals(names(res.cases), ALL)
  lu.assertEquals(#res.skipped, 0)
  lu.assertEquals(#res.skipped_checks, 0)
  -- 4 comparisons + one "formula <= actual" per case
  lu.assertEquals(#res.invariants, 4 + 13)
  for _, inv in ipairs(res.invariants) do
    lu.assertTrue(inv.pass, inv.name .. ": " .. inv.detail)
  end
  lu.assertTrue(probe.passed(res))
end

function TestProbe:test_case_columns_are_consistent()
  for _, r in ipairs(result("default").cases) do
    lu.assertTrue(r.actual_ns > 0, r.name)
    lu.assertAlmostEquals(r.formula_ns, r.overhead_ns + r.wire_ns + r.drain_ns, 1e-9)
    lu.assertAlmostEquals(r.drain_ns, 32768 / r.bottleneck_bw_gbs, 1e-9)
    lu.assertAlmostEquals(r.eff_bw_gbs, 32768 / r.actual_ns, 1e-9)
    lu.assertAlmostEquals(r.util_pct, r.eff_bw_gbs / r.bottleneck_bw_gbs * 100, 1e-9)
    lu.assertTrue(r.util_pct <= 100, r.name)
    lu.assertTrue(r.formula_ns <= r.actual_ns + 1e-6, r.name)
  end
end

function TestProbe:test_targets_and_paths_follow_the_mesh()
  local by = {}
  for _, r in ipairs(result("default").cases) do by[r.name] = r end
  -- hop k = the cube at row k-1, column 0 of the 4x4 mesh
  for k, cube in ipairs { 0, 4, 8, 12 } do
    for _, cat in ipairs { "h2d", "d2h" } do
      local r = by[("%s-%dhop"):format(cat, k)]
      lu.assertEquals(r.path[1], "sip0.io0.pcie_ep")
      lu.assertEquals(r.path[#r.path], ("sip0.cube%d.hbm_ctrl.pe0"):format(cube))
    end
  end
  lu.assertEquals(by["pe-local-hbm"].path, { "sip0.cube0.pe0.pe_dma", "sip0.cube0.r0c0", "sip0.cube0.hbm_ctrl.pe0" })
  lu.assertEquals(by["pe-cross-half-hbm"].path[#by["pe-cross-half-hbm"].path], "sip0.cube0.hbm_ctrl.pe4")
  lu.assertEquals(by["pe-cross-cube-hbm-best"].path[#by["pe-cross-cube-hbm-best"].path], "sip0.cube1.hbm_ctrl.pe0")
  lu.assertEquals(by["pe-cross-cube-hbm-worst"].path[#by["pe-cross-cube-hbm-worst"].path], "sip0.cube15.hbm_ctrl.pe0")
  -- D2H includes the command leg and the data leg, the PE DMA its ack
  lu.assertEquals(#by["d2h-1hop"].legs, 2)
  lu.assertEquals(#by["pe-local-hbm"].legs, 2)
  lu.assertEquals(#by["h2d-1hop"].legs, 1)
  -- PE DMA local: pe_dma setup + router (data) + router (ack) = 2 + 2 + 2
  lu.assertEquals(by["pe-local-hbm"].overhead_ns, 6)
end

function TestProbe:test_small_2x2_runs_what_it_can_and_skips_the_rest()
  local res = result("small_2x2")
  lu.assertEquals(res.topology, "small_2x2")
  lu.assertEquals(names(res.cases), { "h2d-1hop", "h2d-2hop", "d2h-1hop", "d2h-2hop", "pe-local-hbm",
    "pe-same-half-hbm", "pe-cross-half-hbm", "pe-cross-cube-hbm-best", "pe-cross-cube-hbm-worst" })
  lu.assertEquals(names(res.skipped), { "h2d-3hop", "h2d-4hop", "d2h-3hop", "d2h-4hop" })
  for _, s in ipairs(res.skipped) do lu.assertStrContains(s.reason, "2 row(s)") end
  -- the worst cross-cube target is the last cube of the 2x2 mesh
  local worst = res.cases[#res.cases]
  lu.assertEquals(worst.path[#worst.path], "sip0.cube3.hbm_ctrl.pe0")
  for _, inv in ipairs(res.invariants) do lu.assertTrue(inv.pass, inv.name .. ": " .. inv.detail) end
  lu.assertEquals(#res.invariants, 4 + 9)
end

function TestProbe:test_one_case_skips_the_comparisons()
  local res = probe.run { topology = "default", case = "h2d-2hop" }
  lu.assertEquals(names(res.cases), { "h2d-2hop" })
  lu.assertEquals(#res.invariants, 1) -- its "formula <= actual"
  lu.assertEquals(#res.skipped_checks, 4)
  lu.assertEquals(#res.sweep, 5)
  -- the same numbers as in the full run (each case has its own simulation)
  lu.assertEquals(res.cases[1].actual_ns, result("default").cases[2].actual_ns)
end

function TestProbe:test_sweep_is_formula_only()
  local res = result("default")
  lu.assertEquals(#res.sweep, 13 * 5)
  local r, s = res.cases[1], res.sweep[5]
  lu.assertEquals(s.case, r.name)
  lu.assertEquals(s.size, "1MB")
  lu.assertEquals(s.nbytes, 1048576)
  lu.assertAlmostEquals(s.total_ns, r.overhead_ns + r.wire_ns + 1048576 / r.bottleneck_bw_gbs, 1e-9)
  lu.assertAlmostEquals(s.util_pct, 1048576 / s.total_ns / r.bottleneck_bw_gbs * 100, 1e-9)
  -- utilisation grows with the size
  for i = 2, 5 do lu.assertTrue(res.sweep[i].util_pct > res.sweep[i - 1].util_pct) end
end

function TestProbe:test_json_parses_back_with_fixed_key_order()
  local res = result("default")
  local doc = json_decode(probe.to_json(res))
  lu.assertEquals(keys_of(doc), { "topology", "nbytes", "cases", "skipped", "sweep", "invariants",
    "skipped_checks" })
  lu.assertEquals(doc.topology, "default")
  lu.assertEquals(doc.nbytes, 32768)
  lu.assertEquals(#doc.cases, 13)
  local c = doc.cases[1]
  lu.assertEquals(keys_of(c), { "name", "category", "actual_ns", "overhead_ns", "drain_ns", "wire_ns",
    "formula_ns", "eff_bw_gbs", "bottleneck_bw_gbs", "util_pct", "path" })
  for i, r in ipairs(res.cases) do
    local d = doc.cases[i]
    lu.assertEquals(d.name, r.name)
    lu.assertEquals(d.category, r.category)
    lu.assertEquals(d.actual_ns, r.actual_ns) -- shortest round-trip formatting is exact
    lu.assertEquals(d.eff_bw_gbs, r.eff_bw_gbs)
    lu.assertEquals(d.path, r.path)
  end
  lu.assertEquals(#doc.sweep, 65)
  lu.assertEquals(#doc.invariants, 17)
  for _, inv in ipairs(doc.invariants) do
    lu.assertEquals(keys_of(inv), { "name", "pass", "detail" })
    lu.assertIsTrue(inv.pass)
  end
end

function TestProbe:test_json_encoder_escapes_and_formats_numbers()
  local enc = probe.json_encode
  lu.assertEquals(enc('a"b\\c\n\t\1'), '"a\\"b\\\\c\\n\\t\\u0001"')
  lu.assertEquals(enc(3), "3")
  lu.assertEquals(enc(256.0), "256")
  lu.assertEquals(enc(0.1), "0.1")
  lu.assertEquals(enc(1 / 3), "0.3333333333333333")
  lu.assertEquals(enc(0 / 0), "null")
  lu.assertEquals(enc(math.huge), "null")
  lu.assertEquals(enc({ 1, true, false, "x" }), '[1,true,false,"x"]')
  lu.assertEquals(enc({}), "[]")
  lu.assertEquals(json_decode(enc('q"\\\n\1é')), 'q"\\\n\1é')
end

function TestProbe:test_output_is_deterministic()
  local a = probe.run { topology = "default" }
  local b = probe.run { topology = "default" }
  lu.assertEquals(probe.to_json(a), probe.to_json(b))
  lu.assertEquals(probe.report(a), probe.report(b))
end

function TestProbe:test_main_prints_the_report_and_returns_0()
  local status, out, err = main { "--topology", "small_2x2" }
  lu.assertEquals(status, 0)
  lu.assertEquals(err, "")
  lu.assertStrContains(out, "[v] PASS H2D latency strictly increasing with hops")
  lu.assertStrContains(out, "skipped h2d-3hop: the cube mesh has 2 row(s)")
  lu.assertStrContains(out, "<BN:128GB/s>")
  lu.assertStrContains(out, "drain:256.00ns")
  lu.assertNotStrContains(out, "[x] FAIL")
end

function TestProbe:test_main_json_prints_one_object_only()
  local status, out = main { "--json", "--case", "pe-local-hbm", "--topology", "small_1cube_8pe" }
  lu.assertEquals(status, 0)
  lu.assertEquals(out:sub(-1), "\n")
  local doc = json_decode(out)
  lu.assertEquals(doc.topology, "small_1cube_8pe")
  lu.assertEquals(#doc.cases, 1)
  lu.assertEquals(doc.cases[1].name, "pe-local-hbm")
end

function TestProbe:test_main_case_runs_only_that_case()
  local status, out = main { "--case", "h2d-2hop", "--topology", "small_2x2" }
  lu.assertEquals(status, 0)
  lu.assertStrContains(out, "1 case(s) run")
  lu.assertStrContains(out, "[-] SKIP H2D latency strictly increasing with hops (1 data point(s))")
  lu.assertNotStrContains(out, "h2d-1hop")
end

function TestProbe:test_unknown_case_is_a_usage_error()
  local status, out, err = main { "--case", "nope" }
  lu.assertEquals(status, 2)
  lu.assertEquals(out, "")
  lu.assertStrContains(err, "unknown case 'nope'")
  lu.assertStrContains(err, "pe-cross-cube-hbm-worst")
  lu.assertErrorMsgContains("unknown case 'nope'", probe.run, { case = "nope" })
end

function TestProbe:test_other_usage_errors_and_help()
  lu.assertEquals((main { "--frobnicate" }), 2)
  lu.assertEquals((main { "--case" }), 2)
  lu.assertEquals((main { "extra" }), 2)
  lu.assertEquals((main { "--set", "novalue" }), 2)
  lu.assertEquals((main { "--topology", "no_such_topology" }), 2)
  local status, out = main { "--help" }
  lu.assertEquals(status, 0)
  lu.assertStrContains(out, "usage: kernbench")
  lu.assertStrContains(out, "h2d-1hop")
end

function TestProbe:test_set_overrides_apply()
  local res = probe.run { topology = "default", case = "pe-same-half-hbm",
                          sets = { "cube.links.router_link_bw_gbs=128" } }
  lu.assertEquals(res.cases[1].bottleneck_bw_gbs, 128)
  local status, out = main { "--json", "--case=pe-same-half-hbm", "--set=cube.links.router_link_bw_gbs=64" }
  lu.assertEquals(status, 0)
  lu.assertEquals(json_decode(out).cases[1].bottleneck_bw_gbs, 64)
end

function TestProbe:test_a_failing_invariant_gives_status_1()
  local res = probe.run { topology = "small_2x2", case = "pe-local-hbm" }
  res.invariants[#res.invariants + 1] = { name = "forced", pass = false, detail = "x" }
  lu.assertFalse(probe.passed(res))
  lu.assertStrContains(probe.report(res), "[x] FAIL forced (x)")
  -- main's status follows the invariants (no topology fails one: stub run)
  local real = probe.run
  probe.run = function() return res end
  local ok, status, out = pcall(main, { "--topology", "small_2x2" })
  probe.run = real
  lu.assertTrue(ok, status)
  lu.assertEquals(status, 1)
  lu.assertStrContains(out, "[x] FAIL forced (x)")
end
