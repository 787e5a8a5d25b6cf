-- Shared by the performance benchmarks (cross_sip.lua, collective_scale.lua,
-- pending_flits.lua, chain.lua, allreduce_6sip.lua, deploy.lua; docs/scaling.md): the
-- tray of N SIPs, a wall clock, peak memory, the flits that cross a SIP
-- boundary and an all-reduce over every SIP.
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

-- The line of transit nodes the fabric benchmarks run on: the command
-- line's topology if it names one (else topologies/chain.yaml, with the
-- --set overrides either way), its first and last node (by the number at the
-- end of their ids).
function M.chain_ends()
  local topo = kb.topology.default_path and kb.topology.load()
               or kb.topology.load("chain", kb.topology.default_overrides)
  local nodes = topo:nodes("*")
  table.sort(nodes, function(a, b) return tonumber(a:match("%d+$")) < tonumber(b:match("%d+$")) end)
  return topo, nodes[1], nodes[#nodes], #nodes
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

-- An all-reduce over every SIP of torch's tray as a bench would run it: one
-- rank per SIP through torch.distributed and spawn, a [cubes, n_elem] f16
-- tensor per SIP (a row on PE 0 of each cube), tcm rings. all_reduce_setup
-- installs the group and deploys the tensors; all_reduce_run spawns the
-- ranks and returns the critical path (the largest pe_exec_ns).
function M.all_reduce_setup(torch, n_elem, algorithm)
  local P = torch.spec
  torch.distributed.init_process_group { backend = "kernbench", algorithm = algorithm }
  local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
  local tensors = {}
  for r = 0, P.sips - 1 do
    torch.ahbm.set_device(r)
    tensors[r] = torch.full({ P.cubes_per_sip, n_elem }, r + 1, { dtype = "f16", dp = dp })
  end
  torch.ahbm.set_device(nil)
  torch.synchronize()
  return tensors
end

function M.all_reduce_run(torch, tensors)
  local crit = 0
  torch.multiprocessing.spawn(function(rank)
    torch.ahbm.set_device(rank)
    local h = torch.distributed.all_reduce(tensors[rank])
    crit = math.max(crit, h.event:value().pe_exec_ns)
  end, {}, torch.spec.sips)
  return crit
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
