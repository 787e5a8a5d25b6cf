--- PE page tables (ADR-0039 D3): per PE, VPN -> list of regions
-- {start, stop, pa} within the page (regions may be sub-page). map() adds a
-- region per page the range touches; translate() scans a page's regions
-- backwards (last write wins); unmap() removes the regions lying fully
-- inside the range. Unlike the original, translating an unmapped VA is an
-- error naming the PE and the address (no silent PA fallback;
-- docs/decisions.md).
local M = {}

--- opts.pa_fallback: the original's behaviour, an unmapped VA is used as a
-- PA (a compatibility option, off by default).
function M.new(page_size, opts)
  opts = opts or {}
  local tables = {} -- "sip.cube.pe" -> { [vpn] = { regions } }
  local mmu = { page_size = page_size, pa_fallback = opts.pa_fallback or false }

  local function table_of(sip, cube, pe, create)
    local key = sip .. "." .. cube .. "." .. pe
    local t = tables[key]
    if not t and create then
      t = {}
      tables[key] = t
    end
    return t
  end

  function mmu.map(sip, cube, pe, va, pa, size)
    local t = table_of(sip, cube, pe, true)
    local pos, stop = va, va + size
    while pos < stop do
      local vpn = pos // page_size
      local page_end = (vpn + 1) * page_size
      local e = math.min(stop, page_end)
      local list = t[vpn]
      if not list then
        list = {}
        t[vpn] = list
      end
      -- the region's in-page extent, and the PA of its first byte
      list[#list + 1] = { pos - vpn * page_size, e - vpn * page_size, pa + (pos - va) }
      pos = e
    end
  end

  function mmu.unmap(sip, cube, pe, va, size)
    local t = table_of(sip, cube, pe, false)
    if not t then return end
    local pos, stop = va, va + size
    while pos < stop do
      local vpn = pos // page_size
      local base = vpn * page_size
      local list = t[vpn]
      if list then
        for i = #list, 1, -1 do
          local r = list[i]
          if base + r[1] >= va and base + r[2] <= stop then table.remove(list, i) end
        end
        if #list == 0 then t[vpn] = nil end
      end
      pos = base + page_size
    end
  end

  --- The PA of `va` on PE (sip, cube, pe); an error if it is not mapped.
  function mmu.translate(sip, cube, pe, va)
    local t = table_of(sip, cube, pe, false)
    local vpn = va // page_size
    local list = t and t[vpn]
    if list then
      local off = va - vpn * page_size
      for i = #list, 1, -1 do
        local r = list[i]
        if off >= r[1] and off < r[2] then return r[3] + (off - r[1]) end
      end
    end
    if mmu.pa_fallback then return va end
    error(("MMU of sip%d.cube%d.pe%d: virtual address 0x%x is not mapped"):format(sip, cube, pe, va), 2)
  end

  --- A translate function for one PE: f(va, call) -> pa, true. Errors
  -- name the call, the PE and the address.
  function mmu.translator(sip, cube, pe)
    local where = ("sip%d.cube%d.pe%d"):format(sip, cube, pe)
    local t -- the PE's table, once it exists (tables are never removed)
    return function(va, call)
      t = t or table_of(sip, cube, pe, false)
      local vpn = va // page_size
      local list = t and t[vpn]
      if list then
        local off = va - vpn * page_size
        for i = #list, 1, -1 do
          local r = list[i]
          if off >= r[1] and off < r[2] then return r[3] + (off - r[1]), true end
        end
      end
      if mmu.pa_fallback then return va, true end
      error(("%s: virtual address 0x%x is not mapped on %s (not inside any tensor placed for this PE)"):format(
        call, va, where), 3)
    end
  end

  --- Mapped regions of a PE (for tests): count of regions.
  function mmu.regions(sip, cube, pe)
    local t = table_of(sip, cube, pe, false)
    local n = 0
    for _, list in pairs(t or {}) do n = n + #list end
    return n
  end

  return mmu
end

return M
