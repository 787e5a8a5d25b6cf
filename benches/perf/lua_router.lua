--- Cost of a component written in Lua: PE DMA traffic over the cube NoC with
-- the routers as builtin.forwarding (overhead 0) or as the Lua pass-through
-- models.zero_router. Every PE of SIP 0 writes and reads back N KiB to the
-- HBM slice of the PE four cubes away, so the flits cross several routers.
-- The simulated results are identical; the wall time differs.
--
--   kernbench benches/perf/lua_router.lua builtin|lua [KiB]
local which = arg[1] or "lua"
local kib = tonumber(arg[2]) or 64
local sets = { "cube.components.router.attrs.overhead_ns=0" }
if which == "lua" then sets[#sets + 1] = "cube.components.router.impl=lua:models.zero_router" end
local t = kb.topology.load(nil, sets)
local P = t:params()
local s = sim.new { topology = t }
for cube = 0, P.cubes_per_sip - 1 do
  for pe = 0, P.pes_per_cube - 1 do
    local dst = { sip = 0, cube = (cube + 4) % P.cubes_per_sip, pe = pe, offset = 0 }
    s:pe_dma { sip = 0, cube = cube, pe = pe, dst = dst, nbytes = kib * 1024 }
    s:pe_dma { sip = 0, cube = cube, pe = pe, dst = dst, nbytes = kib * 1024, write = false }
  end
end
s:run()
local st = s:stats()
local router_flits, end_ns = 0, st.sim_ns
for _, c in ipairs(st.components) do
  if c.id:match("%.r%d+c%d+$") then router_flits = router_flits + c.flits end
end
print(("lua_router routers=%s kib=%d router_flits=%d events=%d sim_time=%s wall_s=%.4f us_per_router_flit=%.3f")
  :format(which, kib, router_flits, st.events, kb.format_ns(end_ns), st.wall_s, st.wall_s / router_flits * 1e6))
