--- Installing PE-to-PE queues (docs/ipcq.md): neighbour tables from a
-- named topology or a function, receive rings reserved at real physical
-- addresses, and the plan sent to every PE_IPCQ as a timed IpcqInstall
-- message through IO_CPU and M_CPU (src/comp/pe/ipcq.c).
--
--   local plan = torch.install_ipcq{topology = "ring_1d", pes = {...}, buffer_kind = "tcm",
--                                   n_slots = 4, slot_size = 4096, backpressure = "sleep"}
--   print(kb.ipcq.dump(plan))
--   torch.uninstall_ipcq()   -- clears the PEs' queues, frees the rings (torch.cleanup does it too)
local ac = require "kernbench.alloc_c"
local optkeys = require "kernbench.options"
local topologies = require "kernbench.ccl.topologies"

local M = {}

local DEFAULTS = { buffer_kind = "tcm", n_slots = 4, slot_size = 4096, backpressure = "sleep" }
local KNOWN = { "topology", "pes", "grid", "sip", "buffer_kind", "n_slots", "slot_size", "backpressure", "w", "h" }
local KINDS = { tcm = true, sram = true, hbm = true }

local function fail(fmt, ...) error("torch.install_ipcq: " .. fmt:format(...), 3) end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

--- The options with their defaults, checked.
local function options(o)
  if type(o) ~= "table" then fail("takes one table {topology =, pes =, buffer_kind =, ...}") end
  optkeys.check("torch.install_ipcq", o, KNOWN, 3)
  local r = {}
  for k, v in pairs(DEFAULTS) do r[k] = o[k] == nil and v or o[k] end
  if not KINDS[r.buffer_kind] then fail("buffer_kind must be \"tcm\", \"sram\" or \"hbm\", got %s", tostring(r.buffer_kind)) end
  if r.backpressure ~= "sleep" and r.backpressure ~= "poll" then
    fail("backpressure must be \"sleep\" or \"poll\", got %s", tostring(r.backpressure))
  end
  if math.type(r.n_slots) ~= "integer" or r.n_slots < 1 or r.n_slots > 1024 then
    fail("n_slots must be an integer from 1 to 1024, got %s", tostring(r.n_slots))
  end
  if math.type(r.slot_size) ~= "integer" or r.slot_size < 16 or r.slot_size % 16 ~= 0 then
    fail("slot_size must be a positive multiple of 16 bytes, got %s", tostring(r.slot_size))
  end
  if o.topology == nil then fail("topology is missing (a name such as \"ring_1d\" or a function(rank, world))") end
  r.topology, r.w, r.h = o.topology, o.w, o.h
  return r
end

--- The PEs in rank order: o.pes, or every PE of o.grid ({pes =, cubes =};
-- default the whole SIP) on SIP o.sip (default the current device), cube-major.
local function rank_pes(o, P, sip)
  if o.pes ~= nil then
    if type(o.pes) ~= "table" or #o.pes == 0 then fail("pes must be a non-empty list of {sip =, cube =, pe =}") end
    local out = {}
    for i, p in ipairs(o.pes) do
      local v = type(p) == "table" and { p.sip or p[1], p.cube or p[2], p.pe or p[3] }
      if not v or math.type(v[1]) ~= "integer" or math.type(v[2]) ~= "integer" or math.type(v[3]) ~= "integer" then
        fail("pes[%d] must be {sip =, cube =, pe =} (or {s, c, p})", i)
      end
      if v[1] < 0 or v[1] >= P.sips or v[2] < 0 or v[2] >= P.cubes_per_sip or v[3] < 0 or v[3] >= P.pes_per_cube then
        fail("pes[%d]: no PE sip%d.cube%d.pe%d (the topology has %d SIP(s) of %d cubes of %d PEs)", i, v[1], v[2],
          v[3], P.sips, P.cubes_per_sip, P.pes_per_cube)
      end
      out[i] = { sip = v[1], cube = v[2], pe = v[3] }
    end
    return out
  end
  local g = o.grid or {}
  if type(g) ~= "table" then fail("grid must be a table {pes =, cubes =}, got %s", type(g)) end
  optkeys.check("torch.install_ipcq", g, { "pes", "cubes" }, 3, "grid's fields", true)
  local pes, cubes = g.pes or g[1] or P.pes_per_cube, g.cubes or g[2] or P.cubes_per_sip
  if math.type(pes) ~= "integer" or pes < 1 or pes > P.pes_per_cube or math.type(cubes) ~= "integer" or cubes < 1
      or cubes > P.cubes_per_sip then
    fail("grid must be {pes = 1..%d, cubes = 1..%d}, got {pes = %s, cubes = %s}", P.pes_per_cube, P.cubes_per_sip,
      tostring(pes), tostring(cubes))
  end
  local out = {}
  for c = 0, cubes - 1 do
    for p = 0, pes - 1 do out[#out + 1] = { sip = o.sip or sip, cube = c, pe = p } end
  end
  return out
end

local function key(pe) return ("%d.%d.%d"):format(pe.sip, pe.cube, pe.pe) end

-- The PEs holding a plan (st.holding) that `pes` (nil: none) leaves out, in
-- a stable order.
local function leaving(st, pes)
  local keep = {}
  for _, pe in ipairs(pes or {}) do keep[key(pe)] = true end
  local out = {}
  for k, pe in pairs(st.holding) do
    if not keep[k] then out[#out + 1] = { sip = pe.sip, cube = pe.cube, pe = pe.pe } end
  end
  table.sort(out, function(a, b)
    if a.sip ~= b.sip then return a.sip < b.sip end
    if a.cube ~= b.cube then return a.cube < b.cube end
    return a.pe < b.pe
  end)
  return out
end

local function keyed(set, k, make)
  set[k] = set[k] or make()
  return set[k]
end

-- Reserves one ring of `bytes` for the PE: its PA and how to free it.
local function reserve(rt, kind, pe, bytes)
  local st = rt.ext.ipcq
  local where = ("sip%d.cube%d.pe%d"):format(pe.sip, pe.cube, pe.pe)
  if kind == "tcm" then
    -- the PE_LOCAL sub-unit IPCQ: 256 KiB unless the topology sizes it (pe_ipcq.attrs.window_kb),
    -- read once per PE (topo:node builds a table of every attribute)
    local window = keyed(st.window_bytes, where, function()
      local q = rt.topo:node_at { kind = "pe_ipcq", sip = pe.sip, cube = pe.cube, pe = pe.pe }
      return math.floor(rt.topo:node(q).attrs.window_kb * 1024)
    end)
    local a = keyed(st.windows, where, function() return ac.new(0, window, 16) end)
    local off, err = a:alloc(bytes, 16)
    if not off then
      fail("%s: its IPCQ window (%d KiB) cannot hold another ring of %d bytes (%s): fewer directions, "
        .. "smaller n_slots x slot_size, or buffer_kind = \"sram\" / \"hbm\"", where, window // 1024, bytes, err)
    end
    return kb.addr.pe_local(pe.sip, pe.cube, pe.pe, "IPCQ", off), function() a:free(off) end
  elseif kind == "sram" then
    local a = keyed(st.srams, pe.sip .. "." .. pe.cube, function() return ac.new(0, st.sram_bytes, 16) end)
    local off, err = a:alloc(bytes, 16)
    if not off then fail("%s: the cube SRAM (%d MiB) cannot hold another ring of %d bytes (%s)", where,
      st.sram_bytes // (1024 * 1024), bytes, err) end
    return kb.addr.cube_sram(pe.sip, pe.cube, off), function() a:free(off) end
  end
  local a = rt:slice_allocator(pe.sip, pe.cube, pe.pe)
  local off, err = a:alloc(bytes, 16)
  if not off then fail("%s: its HBM slice cannot hold another ring of %d bytes (%s)", where, bytes, err) end
  return kb.addr.pe_hbm(pe.sip, pe.cube, pe.pe, off, rt.P.hbm_slice_bytes), function() a:free(off) end
end

local function free_rings(st)
  if not st.current then return end
  for i = #st.current.frees, 1, -1 do st.current.frees[i]() end
  st.current = nil
end

--- torch.uninstall_ipcq(): removes the queues: a timed message clears every
-- PE_IPCQ that holds the plan (they must be idle), then the rings are freed.
function M.uninstall(rt)
  local st = rt.ext.ipcq
  local clear = leaving(st, nil)
  if #clear > 0 then
    rt:count_request()
    rt:wait(rt.s:ipcq_install { buffer_kind = "tcm", backpressure = "sleep", n_slots = 1, slot_size = 16, pes = {},
                                clear = clear })
    st.holding = {}
  end
  free_rings(st)
end

--- torch.install_ipcq(o) (the header's example).
function M.install(rt, o)
  local st, s = rt.ext.ipcq, rt.s
  local opts = options(o)
  local pes = rank_pes(o, rt.P, rt:sip())
  local world = #pes
  local ok, tables = pcall(topologies.build, opts.topology, world, { w = opts.w, h = opts.h })
  if not ok then fail("%s", tostring(tables):gsub("^.-ccl%.topologies: ", "")) end
  local ok2, pairs_or_err = pcall(topologies.pairs_of, tables, world)
  if not ok2 then fail("%s", tostring(pairs_or_err):gsub("^.-ccl%.topologies: ", "")) end
  free_rings(st)
  -- each rank's directions in name order; the index a peer names
  local dirs, index = {}, {}
  for r = 0, world - 1 do
    dirs[r] = sorted_keys(tables[r])
    index[r] = {}
    for i, d in ipairs(dirs[r]) do index[r][d] = i - 1 end
  end
  local bytes = opts.n_slots * opts.slot_size
  local plan = { world = world, buffer_kind = opts.buffer_kind, n_slots = opts.n_slots, slot_size = opts.slot_size,
                 backpressure = opts.backpressure, ranks = {}, frees = {} }
  local msg = { buffer_kind = opts.buffer_kind, backpressure = opts.backpressure, n_slots = opts.n_slots,
                slot_size = opts.slot_size, pes = {} }
  st.current = plan
  for _, pr in ipairs(pairs_or_err) do
    local r = pr.rank
    local pe = pes[r + 1]
    local rank = plan.ranks[r + 1] or { sip = pe.sip, cube = pe.cube, pe = pe.pe, dirs = {} }
    plan.ranks[r + 1] = rank
    local ok3, pa, free = pcall(reserve, rt, opts.buffer_kind, pe, bytes)
    if not ok3 then
      free_rings(st)
      error(pa, 2)
    end
    plan.frees[#plan.frees + 1] = free
    rank.dirs[#rank.dirs + 1] = { name = pr.dir, peer = pr.peer, peer_dir = pr.peer_dir, rx_pa = pa }
  end
  for r = 0, world - 1 do
    local pe = pes[r + 1]
    local rank = plan.ranks[r + 1] or { sip = pe.sip, cube = pe.cube, pe = pe.pe, dirs = {} }
    plan.ranks[r + 1] = rank
    table.sort(rank.dirs, function(a, b) return a.name < b.name end)
    local m = { sip = pe.sip, cube = pe.cube, pe = pe.pe, dirs = {} }
    for i, d in ipairs(rank.dirs) do
      m.dirs[i] = { name = d.name, peer = d.peer, peer_dir = index[d.peer][d.peer_dir], rx_pa = d.rx_pa }
    end
    msg.pes[r + 1] = m
  end
  local clear = leaving(st, pes)
  if #clear > 0 then msg.clear = clear end -- PEs of the last plan that leave the queues
  local ok4, ev = pcall(s.ipcq_install, s, msg)
  if not ok4 then
    free_rings(st)
    error("torch.install_ipcq: " .. tostring(ev):gsub("^s:ipcq_install{}: ", ""), 2)
  end
  rt:count_request()
  rt:wait(ev)
  st.holding = {}
  for _, pe in ipairs(pes) do st.holding[key(pe)] = pe end
  plan.install_done_ns = s:now()
  return setmetatable(plan, { __index = { dump = M.dump }, __name = "ipcq.plan" })
end

--- Adds torch.install_ipcq and torch.uninstall_ipcq to runtime rt
-- (lua/kernbench/torch/runtime.lua); torch.cleanup() uninstalls first. Its
-- state, rt.ext.ipcq: the installed plan and its reservations.
function M.attach(rt)
  local sram_node = rt.topo:node_at { kind = "sram", sip = 0, cube = 0 }
  rt.ext.ipcq = {
    windows = {}, srams = {}, -- ring allocators: per PE IPCQ window, per cube SRAM
    window_bytes = {},        -- per PE: its IPCQ window's size
    current = nil,            -- the installed plan
    holding = {},             -- "sip.cube.pe" -> {sip, cube, pe}: PEs whose PE_IPCQ holds a plan
    sram_bytes = sram_node and math.floor(rt.topo:node(sram_node).attrs.size_mb * 1024 * 1024) or 0,
  }
  rt:export("uninstall_ipcq", rt:bind(M.uninstall))
  rt:export("install_ipcq", rt:bind(M.install))
  rt:on_cleanup(M.uninstall)
end

--- The plan as text: per rank, each direction's peer and receive ring.
function M.dump(plan)
  if type(plan) ~= "table" or type(plan.ranks) ~= "table" then
    error("kb.ipcq.dump: expected a plan from torch.install_ipcq", 2)
  end
  local bytes = plan.n_slots * plan.slot_size
  local lines = { ("IPCQ plan: %d ranks, %s rings of %d x %d bytes, backpressure %s"):format(plan.world,
    plan.buffer_kind, plan.n_slots, plan.slot_size, plan.backpressure) }
  for r, rank in ipairs(plan.ranks) do
    for _, d in ipairs(rank.dirs) do
      local peer = plan.ranks[d.peer + 1]
      lines[#lines + 1] = ("rank %d sip%d.cube%d.pe%d  %-10s -> rank %d sip%d.cube%d.pe%d (%s)  rx [%s, +%d)"):format(
        r - 1, rank.sip, rank.cube, rank.pe, d.name, d.peer, peer.sip, peer.cube, peer.pe, d.peer_dir,
        kb.addr.format(d.rx_pa), bytes)
    end
  end
  return table.concat(lines, "\n")
end

return M
