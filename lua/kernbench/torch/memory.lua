--- Where a runtime's bytes live (methods of the Runtime, runtime.lua): an
-- HBM-slice allocator per (sip, cube, pe), made when first used, and one
-- VA allocator (kernbench.alloc_c's named kinds); each PE's TCM space is its
-- PE_TCM's (pe_c.tcm_*); MMU mappings sent as timed messages.
local pe_c = require "kernbench.pe_c"
local ac = require "kernbench.alloc_c"

local M = {}
local R = {} -- the methods
M.methods = R

function M.init(rt)
  local topo = rt.topo
  local function pe0_node(kind)
    local id = topo:node_at { kind = kind, sip = 0, cube = 0, pe = 0 }
    return id and topo:node(id)
  end
  local mmu_node = pe0_node("pe_mmu")
  rt.page_size = mmu_node and mmu_node.attrs.page_size or 4096
  local tcm_node = pe0_node("pe_tcm")
  rt.tcm_bytes = tcm_node and math.floor(tcm_node.attrs.size_mb * 1024 * 1024) or 0
  rt.tcm_reserved = tcm_node and math.floor(tcm_node.attrs.scheduler_reserved_kb * 1024) or 0
  rt.hbm_alloc = {} -- (sip, cube, pe) key -> allocator
  rt.va_alloc = ac.va(rt.page_size)
end

--- The HBM slice allocator of PE (sip, cube, pe).
function R:slice_allocator(sip, cube, pe)
  local P, set = self.P, self.hbm_alloc
  local key = (sip * P.cubes_per_sip + cube) * P.pes_per_cube + pe
  set[key] = set[key] or ac.hbm_slice(P.hbm_slice_bytes)
  return set[key]
end

--- Sends a map (or unmap) of `entries` to the PEs of `targets` (a list of
-- {sip, cube, pe}): one MmuMap / MmuUnmap message from the host, which
-- IO_CPU and M_CPU carry to each PE_MMU (src/comp/device). Returns an
-- event that succeeds when the completion is back at the host.
function R:mmu_message(kind, entries, targets, label)
  self.requests = self.requests + 1
  local msg = { targets = targets, entries = entries, label = label }
  if kind == "map" then return self.s:mmu_map(msg) end
  return self.s:mmu_unmap(msg)
end

function R:shard_pa(sh)
  return kb.addr.pe_hbm(sh.sip, sh.cube, sh.pe, sh.hbm_offset, self.P.hbm_slice_bytes)
end

--- Allocates device tensor dt's shards and VA range and sends its mapping
-- (dt.mapped, dt.pending, dt.targets). Errors name the caller of the torch
-- function that made dt (level 4: this, create, the torch function).
function R:map_tensor(dt)
  local P, shards, shape, dp = self.P, dt.shards, dt.shape, dt.dp
  local done = {}
  for _, sh in ipairs(shards) do
    local off, err = self:slice_allocator(sh.sip, sh.cube, sh.pe):alloc(sh.nbytes, 1)
    if not off then
      for _, d in ipairs(done) do self:slice_allocator(d.sip, d.cube, d.pe):free(d.hbm_offset) end
      error(("torch: %s on sip%d.cube%d.pe%d: %s"):format(dt.name, sh.sip, sh.cube, sh.pe, err), 4)
    end
    sh.hbm_offset = off
    sh.pa = self:shard_pa(sh)
    done[#done + 1] = sh
  end
  local va, err = self.va_alloc:alloc(math.max(dt.layout_bytes, 1), self.page_size)
  if not va then error(("torch: %s: virtual address space: %s"):format(dt.name, err), 4) end
  dt.va_base = va
  -- Replicated over cubes: each cube maps only its own copies; sharded:
  -- every shard's mapping goes to every target PE (D-VA3).
  local targets, seen = {}, {}
  for _, sh in ipairs(shards) do
    local key = sh.cube * P.pes_per_cube + sh.pe
    if not seen[key] then
      seen[key] = true
      targets[#targets + 1] = { sip = sh.sip, cube = sh.cube, pe = sh.pe }
    end
  end
  -- map = "cube": every PE of a holding cube maps that cube's shards (they
  -- reach them over the cube's NoC), and only those
  if dt.map_cube then
    local cubes, order = {}, {}
    for _, sh in ipairs(shards) do
      if not cubes[sh.cube] then
        cubes[sh.cube] = { entries = {}, targets = {} }
        order[#order + 1] = sh.cube
        for pe = 0, P.pes_per_cube - 1 do
          cubes[sh.cube].targets[pe + 1] = { sip = sh.sip, cube = sh.cube, pe = pe }
        end
      end
      table.insert(cubes[sh.cube].entries, { va = va + sh.offset_bytes, pa = sh.pa, size = sh.nbytes })
    end
    targets = {}
    for _, c in ipairs(order) do
      for _, tg in ipairs(cubes[c].targets) do targets[#targets + 1] = tg end
    end
    dt.cube_maps, dt.cube_order = cubes, order
  end
  -- PE_MMU names it when a kernel's access leaves one of its mappings
  local label = ("tensor '%s' [%s] %s"):format(dt.name, table.concat(shape, ", "), dt.dtype)
  local maps = {}
  if dt.cube_maps then
    for _, c in ipairs(dt.cube_order) do
      local m = dt.cube_maps[c]
      maps[#maps + 1] = self:mmu_message("map", m.entries, m.targets, label)
    end
  elseif dp.cube == "replicate" then
    for _, tg in ipairs(targets) do
      local entries = {}
      for _, sh in ipairs(shards) do
        if sh.cube == tg.cube and (dp.pe ~= "replicate" or sh.pe == tg.pe) then
          entries[#entries + 1] = { va = va + sh.offset_bytes, pa = sh.pa, size = sh.nbytes }
        end
      end
      maps[#maps + 1] = self:mmu_message("map", entries, { tg }, label)
    end
  else
    local entries = {}
    for _, sh in ipairs(shards) do
      entries[#entries + 1] = { va = va + sh.offset_bytes, pa = sh.pa, size = sh.nbytes }
    end
    maps[#maps + 1] = self:mmu_message("map", entries, targets, label)
  end
  dt.mapped = self:handle(self.s:all_of(maps), "map " .. dt.name)
  dt.pending = { dt.mapped } -- what a kernel launch using it waits for
  dt.targets = targets
end

--- Unmaps dt and frees its shards and VA range (errors at level 3: this,
-- d:free(), the bench).
function R:unmap_tensor(dt)
  if dt.cube_maps then -- each cube's PEs map that cube's shards only
    for _, c in ipairs(dt.cube_order) do
      local m, entries = dt.cube_maps[c], {}
      for i, e in ipairs(m.entries) do entries[i] = { va = e.va, size = e.size } end
      self:mmu_message("unmap", entries, m.targets)
    end
  else
    local entries = {}
    for _, sh in ipairs(dt.shards) do
      entries[#entries + 1] = { va = dt.va_base + sh.offset_bytes, size = sh.nbytes }
    end
    self:mmu_message("unmap", entries, dt.targets)
  end
  for _, sh in ipairs(dt.shards) do
    local ok, err = self:slice_allocator(sh.sip, sh.cube, sh.pe):free(sh.hbm_offset)
    if not ok then error(("torch: free %s: %s"):format(dt.name, err), 3) end
  end
  local ok, err = self.va_alloc:free(dt.va_base)
  if not ok then error(("torch: free %s: %s"):format(dt.name, err), 3) end
end

-- Integer arguments of the PE functions, named in errors. The first three
-- are a PE's sip, cube, pe: checked against the topology.
local function check_ints(rt, call, names, ...)
  for i, name in ipairs(names) do
    local v = select(i, ...)
    if math.type(v) ~= "integer" or v < 0 then
      error(("%s: %s must be an integer >= 0, got %s"):format(call, name,
        type(v) == "number" and tostring(v) or rt:describe(v)), 3)
    end
  end
  local P = rt.P
  local sip, cube, pe = ...
  if sip >= P.sips or cube >= P.cubes_per_sip or pe >= P.pes_per_cube then
    error(("%s: no PE sip%d.cube%d.pe%d: the topology has %d SIP(s) of %d cube(s) of %d PE(s)"):format(call, sip,
      cube, pe, P.sips, P.cubes_per_sip, P.pes_per_cube), 3)
  end
end

--- torch.alloc_tcm(sip, cube, pe, nbytes): nbytes of that PE's TCM (16-byte
-- aligned); the physical address and the TCM offset.
function R:alloc_tcm(sip, cube, pe, nbytes)
  check_ints(self, "torch.alloc_tcm", { "sip", "cube", "pe", "nbytes" }, sip, cube, pe, nbytes)
  local off, err = pe_c.tcm_alloc(self.s, sip, cube, pe, nbytes)
  if not off then error("torch.alloc_tcm: " .. err, 2) end
  return kb.addr.pe_tcm(sip, cube, pe, off), off
end

function R:free_tcm(sip, cube, pe, off)
  check_ints(self, "torch.free_tcm", { "sip", "cube", "pe", "offset" }, sip, cube, pe, off)
  local ok, err = pe_c.tcm_free(self.s, sip, cube, pe, off)
  if not ok then error("torch.free_tcm: " .. err, 2) end
end

--- Whether every allocator is back to its initial state.
function R:allocators_pristine()
  if not self.va_alloc:is_pristine() or not pe_c.tcm_pristine(self.s) then return false end
  for _, a in pairs(self.hbm_alloc) do
    if not a:is_pristine() then return false end
  end
  return true
end

--- torch.translate(sip, cube, pe, va): the PA of va through that PE's page
-- table and the translation's cost in ns (its PE_MMU tlb_overhead_ns).
function R:translate(sip, cube, pe, va)
  check_ints(self, "torch.translate", { "sip", "cube", "pe", "va" }, sip, cube, pe, va)
  local pa, cost = pe_c.mmu_translate(self.s, sip, cube, pe, va, self.pa_fallback, "torch.translate")
  if not pa then error(cost, 2) end
  return pa, cost
end

return M
