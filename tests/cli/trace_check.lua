-- Reads a trace file written by --trace, checks its structure (a
-- transaction's slice carries bytes, src, dst and txn), and prints
-- a canonical digest for the shell tests:
--   kernbench tests/cli/trace_check.lua FILE
package.path = "tests/lua/?.lua;" .. package.path
local json_decode = require "json_decode"
local path = assert(..., "usage: trace_check.lua FILE")
local f = assert(io.open(path))
local doc = json_decode(f:read("a"))
f:close()
assert(type(doc.traceEvents) == "table", "no traceEvents array")
local count, procs, threads = {}, {}, {}
local min_ts, max_end = math.huge, -math.huge
local errors = {}
for i, e in ipairs(doc.traceEvents) do
  assert(type(e.ph) == "string", "event " .. i .. " has no ph")
  count[e.ph] = (count[e.ph] or 0) + 1
  if e.ph ~= "M" then assert(type(e.ts) == "number", "event " .. i .. " has no ts") end
  if e.ph == "M" and e.name == "process_name" then procs[#procs + 1] = e.args.name end
  if e.ph == "M" and e.name == "thread_name" then threads[#threads + 1] = e.args.name end
  if e.ph == "X" then
    assert(type(e.dur) == "number" and e.dur >= 0, "slice " .. i .. " has no dur")
    assert(type(e.name) == "string" and type(e.tid) == "number" and type(e.pid) == "number")
    local a = e.args
    -- a transaction's slice names it; engine slices (kernels' commands) may carry other arguments
    if a and a.txn ~= nil then
      assert(type(a.bytes) == "number" and type(a.src) == "string" and type(a.dst) == "string"
             and type(a.txn) == "number", "slice " .. i .. " lacks bytes/src/dst/txn")
    end
    min_ts = math.min(min_ts, e.ts)
    max_end = math.max(max_end, e.ts + e.dur)
  end
  if e.ph == "i" and e.name == "error" then errors[#errors + 1] = e.args.message end
end
table.sort(procs)
print("events " .. #doc.traceEvents)
for _, ph in ipairs { "X", "M", "i", "C", "s", "t", "f" } do print(ph .. " " .. (count[ph] or 0)) end
print("processes " .. table.concat(procs, ","))
print("threads " .. #threads)
for _, name in ipairs(threads) do print("thread " .. name) end
if count.X then print(("slices_us %.6f %.6f"):format(min_ts, max_end)) end
for _, m in ipairs(errors) do print("error " .. m:gsub("\n.*", "")) end
