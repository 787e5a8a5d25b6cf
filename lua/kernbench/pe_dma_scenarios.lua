--- The PE DMA perf harness's scenarios (topology-fabric-latency.md §5.1),
-- shared by benches/perf/pe_dma.lua and tools/fidelity.lua: who sends to
-- whose HBM slice, for a topology and a transfer size. Every transfer is a
-- PE DMA write issued at t = 0.
local M = {}

local function issuer(sip, cube, pe, dsip, dcube, dpe, offset)
  return { sip = sip, cube = cube, pe = pe, dst = { sip = dsip, cube = dcube, pe = dpe, offset = offset or 0 } }
end

local function dma_id(topo, sip, cube, pe) return topo:node_at { kind = "pe_dma", sip = sip, cube = cube, pe = pe } end
local function hbm_id(topo, sip, cube, pe) return topo:node_at { kind = "hbm_ctrl", sip = sip, cube = cube, pe = pe } end
M.dma_id, M.hbm_id = dma_id, hbm_id

--- Path length in mm and edge count of the route src -> dst.
function M.path_cost(topo, src, dst)
  local mm = 0
  local es = topo:path_edges(src, dst)
  for _, e in ipairs(es) do mm = mm + (e.mm or 0) end
  return mm, #es
end

-- The PE of (sip, cube) whose controller is farthest from src in path mm
-- (ties: more hops, then the lower index).
local function farthest_pe(topo, pes, src, sip, cube, exclude)
  local best, bmm, bhops
  for pe = 0, pes - 1 do
    if pe ~= exclude then
      local mm, hops = M.path_cost(topo, src, hbm_id(topo, sip, cube, pe))
      if best == nil or mm > bmm + 1e-9 or (math.abs(mm - bmm) <= 1e-9 and hops > bhops) then
        best, bmm, bhops = pe, mm, hops
      end
    end
  end
  return best
end

--- The scenarios the topology can run, in the harness's order: a list of
-- {name, group ("single" or "congestion"), issuers}, and a list of {name,
-- reason} for those it is too small for. Hot-target issuers write to
-- disjoint offsets (i x nbytes).
function M.list(topo, nbytes)
  local P = topo:params()
  local SIPS, CUBES, PES = P.sips or 0, P.cubes_per_sip or 0, P.pes_per_cube or 0
  local scenarios, skipped = {}, {}
  local function add(name, group, issuers) scenarios[#scenarios + 1] = { name = name, group = group, issuers = issuers } end
  local function skip(name, why) skipped[#skipped + 1] = { name = name, reason = why } end

  local src0 = dma_id(topo, 0, 0, 0)
  add("same_cube_local", "single", { issuer(0, 0, 0, 0, 0, 0) })
  if PES >= 2 then
    add("same_cube_remote_best", "single", { issuer(0, 0, 0, 0, 0, 1) })
    add("same_cube_remote_worst", "single", { issuer(0, 0, 0, 0, 0, farthest_pe(topo, PES, src0, 0, 0, 0)) })
  else
    skip("same_cube_remote_best", "one PE per cube")
    skip("same_cube_remote_worst", "one PE per cube")
  end
  if CUBES >= 2 then
    add("remote_cube_best", "single", { issuer(0, 0, 0, 0, 1, 0) })
    add("remote_cube_worst", "single",
      { issuer(0, 0, 0, 0, CUBES - 1, farthest_pe(topo, PES, src0, 0, CUBES - 1)) })
  else
    skip("remote_cube_best", "one cube per SIP")
    skip("remote_cube_worst", "one cube per SIP")
  end
  if SIPS >= 2 then
    add("remote_sip", "single", { issuer(0, 0, 0, 1, 0, 0) })
  else
    skip("remote_sip", "one SIP")
  end

  for k = 1, 3 do
    local name = "ctrl_hot_" .. k
    if PES > k then
      local list = {}
      for pe = 1, k do list[#list + 1] = issuer(0, 0, pe, 0, 0, 0, (pe - 1) * nbytes) end
      add(name, "congestion", list)
    else
      skip(name, ("needs %d PEs per cube"):format(k + 1))
    end
  end
  if CUBES >= 2 then
    local list = {}
    for pe = 0, PES - 1 do list[#list + 1] = issuer(0, 0, pe, 0, 1, pe) end
    add("ucie_eastbound", "congestion", list)
  else
    skip("ucie_eastbound", "one cube per SIP")
  end
  local list = {}
  for pe = 0, PES - 1 do list[#list + 1] = issuer(0, 0, pe, 0, 0, 0, pe * nbytes) end
  add("all_pe_cube0_to_pe0", "congestion", list)
  local loc, hot = {}, {}
  for cube = 0, CUBES - 1 do
    for pe = 0, PES - 1 do
      loc[#loc + 1] = issuer(0, cube, pe, 0, cube, pe)
      hot[#hot + 1] = issuer(0, cube, pe, 0, 0, 0, #hot * nbytes)
    end
  end
  add("sip_local_all", "congestion", loc)
  add("sip_hotspot_pe0", "congestion", hot)
  return scenarios, skipped
end

--- The scenario `name` of M.list, or an error naming why it is missing.
function M.find(topo, nbytes, name)
  local scenarios, skipped = M.list(topo, nbytes)
  for _, sc in ipairs(scenarios) do
    if sc.name == name then return sc end
  end
  for _, s in ipairs(skipped) do
    if s.name == name then error(("scenario %s: %s"):format(name, s.reason), 2) end
  end
  error("no scenario " .. tostring(name), 2)
end

return M
