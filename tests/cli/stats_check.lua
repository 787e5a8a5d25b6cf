-- Checks for the --stats-json file, run by kernbench for the shell tests:
--   stats_check.lua summary STATS.json       prints request/link/op counts
--   stats_check.lua latency STATS.json PROBE.json
--       the first request's latency equals the probe's first case
package.path = "tests/lua/?.lua;" .. package.path
local json_decode = require "json_decode"
local function read(path) local f = assert(io.open(path)) local s = f:read("a") f:close() return json_decode(s) end
local mode, a, b = ...
if mode == "summary" then
  local d = read(a)
  assert(#d.simulations == 1, "one simulation")
  local s = d.simulations[1]
  for _, l in ipairs(s.links) do assert(l.util >= 0 and l.util <= 1, "link util") end
  for _, c in ipairs(s.components) do assert(c.util >= 0 and c.util <= 1, "component util") end
  print(("topology %s requests %d writes %d"):format(s.topology, #s.requests, s.op_counts.memory_write))
elseif mode == "latency" then
  local st = read(a).simulations[1].requests[1].latency_ns
  local pr = read(b).cases[1].actual_ns
  assert(math.abs(st - pr) < 1e-9, ("stats %.6f vs probe %.6f"):format(st, pr))
  print("equal " .. st)
else
  error("usage: stats_check.lua summary|latency FILES")
end
