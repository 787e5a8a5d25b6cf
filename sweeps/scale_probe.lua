-- The scale test of kernbench sweep (docs/sweeps.md, docs/PERFORMANCE.md):
-- many cheap points, each one probe case on the one-cube, one-PE topology;
-- the PCIe endpoint's overhead (1, 2, ... ns) makes the points distinct.
-- SCALE_POINTS=N sets how many (default 100):
--
--   SCALE_POINTS=10000 kernbench -j 2 sweep sweeps/scale_probe.lua
local count = tonumber(os.getenv("SCALE_POINTS") or "") or 100
return {
  name = "scale_probe",
  description = "cheap points for measuring the per-point overhead: one probe case each",
  probe = true,
  topology = "small_1cube_1pe",
  case = "h2d-1hop",
  axes = {
    set = { ["sip.io_chiplets.0.components.pcie_ep.attrs.overhead_ns"] = { from = 1, to = count, step = 1 } },
  },
  metrics = { actual_ns = "cases.1.actual_ns", eff_bw_gbs = "cases.1.eff_bw_gbs" },
}
