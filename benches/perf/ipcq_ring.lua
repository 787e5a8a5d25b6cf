--- IPCQ throughput of the simulator: the ring pass with forwarding of
-- benches/ipcq_ring.lua on every PE of every SIP (256 ranks on the default
-- topology), timing-only, run `rounds` times (one launch per SIP per round,
-- the plan installed once). Each round sends n*(n-1) messages of n_elem
-- f32. Prints events, simulated time, clock_s (os.clock around the rounds:
-- the process's CPU time in the simulation and the kernels' Lua), events/s
-- and messages/s per clock_s, and wall_s_in_runs (the simulation's own wall
-- time in its runs, s:stats().wall_s, as the other perf scripts print).
--
--   kernbench benches/perf/ipcq_ring.lua [rounds] [n_elem]     (default 3 rounds of 16 elements)

local rounds = math.tointeger(tonumber(arg[1] or 3))
local m = math.tointeger(tonumber(arg[2] or 16))
if not rounds or rounds < 1 or not m or m < 1 then
  io.stderr:write("usage: kernbench benches/perf/ipcq_ring.lua [rounds >= 1] [n_elem >= 1]\n")
  os.exit(2)
end
local torch = require("kernbench.torch").new {}
local P = torch.spec
local pes = {}
for s = 0, P.sips - 1 do
  for c = 0, P.cubes_per_sip - 1 do
    for p = 0, P.pes_per_cube - 1 do pes[#pes + 1] = { sip = s, cube = c, pe = p } end
  end
end
local n = #pes
torch.install_ipcq { topology = "ring_1d", pes = pes, slot_size = math.max(16, (4 * m + 15) // 16 * 16) }
local kernel = { name = "perf_ipcq_ring", fn = function(tl)
  local r, world = tl.ipcq_rank(), tl.ipcq_world_size()
  local acc = tl.full({ m }, r + 1, "f32")
  local cur = acc
  for _ = 1, world - 1 do
    tl.send("E", cur)
    cur = tl.recv("W", { m }, "f32")
    acc = acc + cur
  end
end }
local s = torch.sim
local before = s:stats()
local sim0 = torch.now_ns()
local c0 = os.clock()
for _ = 1, rounds do
  local hs = {}
  for sip = 0, P.sips - 1 do
    torch.ahbm.set_device(sip)
    hs[#hs + 1] = torch.launch_async(kernel, { pes = P.pes_per_cube, cubes = P.cubes_per_sip })
  end
  for _, h in ipairs(hs) do torch.wait(h) end
end
local wall = os.clock() - c0
local after = s:stats()
local events = after.events - before.events
local messages = rounds * n * (n - 1)
print(("ipcq_ring ranks=%d rounds=%d n_elem=%d messages=%d events=%d sim_time=%s clock_s=%.3f "
  .. "events_per_s=%.0f messages_per_s=%.0f wall_s_in_runs=%.3f")
  :format(n, rounds, m, messages, events, kb.format_ns(torch.now_ns() - sim0), wall, events / wall, messages / wall,
    after.wall_s - before.wall_s))
torch.uninstall_ipcq()
torch.close()
