-- Checks the outputs of a run that was stopped early (tests/cli/run_cases.sh):
--   kernbench tests/cli/stop_check.lua DIR REASON
-- DIR holds t.json (--trace), s.json (--stats-json), o.jsonl (--op-log) and
-- c.yaml (--dump-config). Each must be complete as a file and say that the
-- run was cut short by REASON; prints what the run reached.
package.path = "tests/lua/?.lua;" .. package.path
local json_decode = require "json_decode"
local dir, reason = ...
assert(dir and reason, "usage: stop_check.lua DIR REASON")
local function read(name)
  local f = assert(io.open(dir .. "/" .. name))
  local s = f:read("a")
  f:close()
  return s
end

local trace = json_decode(read("t.json"))
assert(type(trace.traceEvents) == "table", "trace: no traceEvents")
assert(trace.otherData and trace.otherData.truncated == "true", "trace: otherData.truncated missing")
assert(trace.otherData.stopped_by == reason, "trace: stopped_by " .. tostring(trace.otherData.stopped_by))
local last = trace.traceEvents[#trace.traceEvents]
assert(last.name == "truncated" and last.args.stopped_by == reason, "trace: no closing 'truncated' instant")
local slices = 0
for _, e in ipairs(trace.traceEvents) do if e.ph == "X" then slices = slices + 1 end end
assert(slices > 0, "trace: no slices")

local stats = json_decode(read("s.json"))
assert(stats.interrupted == true, "stats: interrupted is not true")
assert(stats.stopped_by == reason, "stats: stopped_by " .. tostring(stats.stopped_by))
assert(#stats.simulations >= 1, "stats: no simulation")

local lines, records = {}, 0
for line in read("o.jsonl"):gmatch("[^\n]+") do lines[#lines + 1] = line end
for i = 1, #lines - 1 do
  local r = json_decode(lines[i])
  assert(r.sim and r.op_name and r.t_start_ns, "op log: line " .. i .. " is not a record")
  records = records + 1
end
local tail = json_decode(lines[#lines])
assert(tail.truncated == true and tail.stopped_by == reason, "op log: no closing truncated line")
assert(records > 0, "op log: no records")

assert(read("c.yaml"):match("\nname: "), "dump-config: not a topology document")

print(("stopped_by %s"):format(reason))
if stats.stopped_at then
  print(("stopped_at sim %d sim_ns %.3f events %d"):format(stats.stopped_at.sim, stats.stopped_at.sim_ns,
    stats.stopped_at.events))
end
print(("simulation_1 sim_ns %.3f events %d"):format(stats.simulations[1].sim_ns, stats.simulations[1].events))
print(("records %d slices %d"):format(records, slices))
