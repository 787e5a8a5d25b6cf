-- The GEMM milestone (benches/milestone_gemm.lua) as a sweep: its 8 shapes x
-- 3 operand stagings x {PE, cube, SIP}, each point one run of the bench with
-- --param m=, k=, n=, variant=, placement= (and out= empty: the points write
-- no files of their own). The milestone lists a point whose N does not split
-- over its PEs as skipped; here it is left out (the bench would simulate
-- nothing): 60 of the 72 points, on the default topology (8 PEs per cube,
-- 128 per SIP).
--
--   kernbench -j 4 sweep sweeps/gemm_shapes.lua            # out/sweep-gemm_shapes/
--   kernbench sweep sweeps/gemm_shapes.lua --resume        # after a kill
local SHAPES = { { 16, 16, 16 }, { 32, 32, 32 }, { 64, 64, 64 }, { 128, 128, 128 }, { 256, 256, 256 },
                 { 512, 512, 512 }, { 32, 3072, 32 }, { 256, 64, 1024 } }
local points = {}
for _, s in ipairs(SHAPES) do
  for _, variant in ipairs { "load_ref", "ref_ref", "load_load" } do
    for _, placement in ipairs { "pe", "cube", "sip" } do
      local npes = ({ pe = 1, cube = 8, sip = 128 })[placement]
      if s[3] % npes == 0 then points[#points + 1] = { param = { m = s[1], k = s[2], n = s[3], variant = variant, placement = placement } } end
    end
  end
end

return {
  name = "gemm_shapes",
  description = "f16 composite GEMMs: shapes x operand staging x placement against the roofline",
  bench = "milestone-gemm",
  param = { out = "" },
  order = { "m", "k", "n", "variant", "placement" },
  points = points,
  metrics = {
    pe_window_ns = "result.points.1.pe_window_ns",
    tflops = "result.points.1.tflops",
    roofline_ns = "result.points.1.roofline_ns",
    bound = "result.points.1.bound",
    efficiency = "result.points.1.efficiency",
    tiles = "result.points.1.tiles",
  },
  derived = {
    flop = function(r) return 2 * r.m * r.k * r.n end,
    config = function(r) return r.variant .. "/" .. r.placement end,
  },
  plots = {
    { name = "efficiency", x = "flop", y = "efficiency", series = "config", logx = true,
      title = "GEMM efficiency against the roofline (f16)", xlabel = "FLOP (2 m k n)",
      ylabel = "roofline time / simulated time", style = "points" },
    { name = "tflops", x = "flop", y = "tflops", series = "config", logx = true, logy = true,
      title = "achieved TFLOP/s", xlabel = "FLOP (2 m k n)", style = "points" },
  },
}
