-- Shared by the scaling benchmarks (cross_sip.lua, collective_scale.lua,
-- pending_flits.lua; docs/scaling.md): the tray of N SIPs, a wall clock, peak
-- memory and the flits that cross a SIP boundary.
local M = {}

M.wall = require("kernbench.progress_c").wall -- monotonic, seconds

-- The command line's topology (else the default) with its --set overrides and
-- system.sips.count = n (when n is given), and the seconds its load and
-- compile took.
function M.load_tray(n)
  local overrides = {}
  for _, o in ipairs(kb.topology.default_overrides or {}) do overrides[#overrides + 1] = o end
  if n then overrides[#overrides + 1] = "system.sips.count=" .. n end
  local t0 = M.wall()
  local topo = kb.topology.load(kb.topology.default_path or "default", overrides)
  return topo, M.wall() - t0
end

-- A /proc/self/status field in KiB (VmHWM: peak resident, VmRSS: now).
function M.status_kib(field)
  local f = io.open("/proc/self/status")
  if not f then return 0 end
  local text = f:read("a")
  f:close()
  return tonumber(text:match(field .. ":%s*(%d+)")) or 0
end

-- Flits the tray switch received (every one came from a SIP's PCIe endpoint)
-- and sent (every one into a SIP): the traffic a partition by SIP exchanges.
function M.switch_flits(stats)
  local into, out = 0, 0
  for _, l in ipairs(stats.links) do
    if l.dst:match("^fabric%.switch") then into = into + l.flits end
    if l.src:match("^fabric%.switch") then out = out + l.flits end
  end
  return into, out
end

-- The lookahead a partition by SIP has through the switch: the path formula
-- (both ends' overheads, propagation, one flit at the narrowest link) from
-- SIP 0's first PCIe endpoint to SIP 1's, in ns, for a data flit and for a
-- control message (0 bytes); nil on a one-SIP tray.
function M.lookahead_ns(topo)
  local p = topo:params()
  if p.sips < 2 then return nil end
  local a = topo:node_at { kind = "pcie_ep", sip = 0, io = 0 }
  local b = topo:node_at { kind = "pcie_ep", sip = 1, io = 0 }
  return topo:path_latency_ns(a, b, "all", p.flit_bytes), topo:path_latency_ns(a, b, "all", 0)
end

-- One key=value result line.
function M.line(name, fields)
  local out = { name .. ":" }
  for _, kv in ipairs(fields) do
    local k, v = kv[1], kv[2]
    if math.type(v) == "float" then v = string.format(kv[3] or "%.4f", v) end
    out[#out + 1] = k .. "=" .. tostring(v)
  end
  print(table.concat(out, " "))
end

return M
