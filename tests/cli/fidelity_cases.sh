#!/usr/bin/env bash
# The original profile and docs/fidelity.md (sourced by tests/cli/cli_test.sh;
# uses its helpers): the tables are current, the original profile reproduces
# the calibration figures within 5%, its switches do what docs/fidelity.md
# says, and both profiles pass the probe's invariants.

fidelity_cases=(fidelity_doc_is_current fidelity_original_reproduces_calibration fidelity_switches
                fidelity_profiles_pass_probe)

fidelity_doc_is_current() {
  run -q tools/fidelity.lua --check docs/fidelity.md; expect_status 0
  # a stale table is caught
  cp docs/fidelity.md "$tmp/f.md"; sed -i 's/| 77.00 ns | 79.00 ns |/| 77.00 ns | 78.00 ns |/' "$tmp/f.md"
  run -q tools/fidelity.lua --check "$tmp/f.md"; expect_status 1; expect_err "are stale"
}

fidelity_original_reproduces_calibration() {
  run -q tools/fidelity.lua; expect_status 0
  # every calibration row: the original profile within 5% of the original's figure
  local rows; rows=$(awk -F'|' '/^\| (PE DMA|ctrl_hot|sip_local_all|host MemoryWrite)/ {print $7}' "$tmp/out")
  [ "$(echo "$rows" | wc -l)" -eq 8 ] || fail "expected 8 calibration rows: $(cat "$tmp/out")"
  echo "$rows" | awk '{ if ($1 < 0.95 || $1 > 1.05) { print "ratio " $1; bad = 1 } } END { exit bad }' \
    || fail "a ratio outside 5%: $(cat "$tmp/out")"
}

fidelity_switches() {
  cat >"$tmp/sw.lua" <<'LUA'
local function read16k(overrides)
  local s = sim.new { topology = kb.topology.load("default", overrides) }
  local w = s:pe_dma { sip = 0, cube = 0, pe = 0, dst = { sip = 0, cube = 1, pe = 0, offset = 0 }, nbytes = 16384,
                       write = false }
  s:run()
  return w:value().latency_ns
end
local full, ack = read16k(), read16k { "cube.pe_template.components.pe_dma.attrs.read_response_data=false" }
-- a read's response carries 64 flits back over the 128 GB/s connection: at least 64 x 2 ns more
assert(full - ack >= 128, ("read with data %g, acknowledgement only %g"):format(full, ack))
local function host4k(name)
  local s = sim.new { topology = kb.topology.load(name) }
  local w = s:memory_write { sip = 0, cube = 0, pe = 0, offset = 0, nbytes = 4096 }
  s:run()
  return w:value().latency_ns
end
-- two unpaced bridges save one 128 GB/s flit time each on the first flit
assert(math.abs(host4k("default") - host4k("original") - 4) < 1e-9)
print("ok")
LUA
  run -q "$tmp/sw.lua"; expect_status 0; expect_out "ok"
  # 0 is allowed on the bridges only; a negative value or a non-boolean switch is refused
  run -q --set cube.links.ucie_conn_to_port_bw_gbs=-1 -e 'kb.topology.load()'; expect_status 2
  expect_err "ucie_conn_to_port_bw_gbs"
  run -q --set cube.links.router_link_bw_gbs=0 -e 'kb.topology.load()'; expect_status 2
  expect_err "router_link_bw_gbs"
  run -q --set cube.pe_template.components.pe_dma.attrs.tcm_ports=maybe -e 'kb.topology.load()'; expect_status 2
  expect_err "tcm_ports"
  # without TCM charges a kernel's load is shorter by its bytes at the TCM port's 512 GB/s
  cat >"$tmp/tcm.lua" <<'LUA'
local function window(overrides)
  local torch = kb.torch { topology = kb.topology.load("default", overrides) }
  local d = torch.zeros({ 64, 128 }, { dtype = "f16", dp = torch.DPPolicy { num_cubes = 1, num_pes = 1 } })
  local h = torch.launch({ name = "ld", fn = function(tl, p) tl.load(p, { 64, 128 }, "f16") end }, 1, d)
  local ns = h.result.pe_exec_ns
  torch.close()
  return ns
end
local with, without = window(), window { "cube.pe_template.components.pe_dma.attrs.tcm_ports=false" }
assert(math.abs(with - without - 16384 / 512) < 1e-9, ("%g vs %g"):format(with, without))
print("ok")
LUA
  run -q "$tmp/tcm.lua"; expect_status 0; expect_out "ok"
}

fidelity_profiles_pass_probe() {
  local t
  for t in default original; do
    run -q -t "$t" probe; expect_status 0
    ! grep -qF "[x] FAIL" "$tmp/out" || fail "$t: $(grep -F '[x] FAIL' "$tmp/out")"
    grep -qF "[v] PASS" "$tmp/out" || fail "$t: no invariant checked"
  done
}
