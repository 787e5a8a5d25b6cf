-- The all-reduce (benches/ccl_allreduce.lua: init_process_group, spawn,
-- all_reduce with the algorithm of ccl.yaml) over the size per cube x the SIP
-- topology (6 SIPs: ring_1d, torus_2d 2x3, mesh_2d_no_wrap 2x3) x the kind of
-- buffer the receive rings live in: 5 x 3 x 3 = 45 points.
--
--   kernbench -j 4 sweep sweeps/allreduce.lua              # out/sweep-allreduce/
return {
  name = "allreduce",
  description = "all-reduce crit_ns against size, SIP topology and buffer kind",
  bench = "ccl-allreduce",
  axes = {
    param = { n_elem = { 8, 64, 512, 4096, 49152 }, buffer_kind = { "tcm", "sram", "hbm" } },
    topology = { "ring_1d_6sip", "torus_2d_6sip_2x3", "mesh_2d_no_wrap_6sip_2x3" },
  },
  order = { "topology", "buffer_kind", "n_elem" },
  metrics = {
    crit_ns = "result.crit_ns",
    predicted_ns = "result.predicted_ns",
    bytes_per_pe = "result.bytes_per_pe",
    algorithm = "result.algorithm",
    sim_ns = "simulation.sim_ns",
  },
  derived = {
    -- bytes each PE contributes over the critical path: GB/s
    gbs = function(r) return r.bytes_per_pe / r.crit_ns end,
    config = function(r) return r.topology:gsub("_6sip.*", "") .. "/" .. r.buffer_kind end,
  },
  plots = {
    { name = "crit_ns", x = "n_elem", y = "crit_ns", series = "config", logx = true, logy = true,
      title = "all-reduce critical path against size", xlabel = "f16 elements per cube", ylabel = "ns" },
    { name = "bandwidth", x = "n_elem", y = "gbs", series = "config", logx = true,
      title = "all-reduce bytes per PE over crit_ns", xlabel = "f16 elements per cube", ylabel = "GB/s" },
  },
}
