--- The points of a sweep file (docs/sweeps.md): its axis columns, and the
-- points they expand to (a grid, a zip or an explicit list). Methods of
-- kernbench.sweep.file's loader, whose fields they use: file, t (the file's
-- table), S (the sweep), columns and by_name (the axis columns),
-- raw_points (each {column name -> value}).
local V = require "kernbench.sweep.values"

local fail, sorted_keys = V.fail, V.sorted_keys

local M = {}
local L = {} -- the loader's methods
M.methods = L

local AXIS_KINDS = { param = true, set = true, topology = true, case = true }

--- A new axis column (kind, key), named by `where` in errors.
function L:add_column(kind, key, where)
  local file, by_name = self.file, self.by_name
  local name = (kind == "topology" or kind == "case") and kind or key
  if by_name[name] then
    fail(file, where, "column '%s' is already an axis (%s)", name, by_name[name].kind)
  end
  for _, f in ipairs(self.S.fixed) do
    if f.kind == kind and f.key == key then
      fail(file, where, "'%s' is both a fixed option and an axis", key)
    end
  end
  if name == "id" or name == "status" or name == "exit_code" then fail(file, where, "'%s' is reserved", name) end
  local c = { name = name, kind = kind, key = key }
  self.columns[#self.columns + 1] = c
  by_name[name] = c
  return c
end

--- `order`: the axis columns in this order (the grid's nesting, outermost
-- first); the others after them, sorted by name. Column name -> rank.
function L:ranks()
  local t, file = self.t, self.file
  local rank = {}
  if t.order ~= nil then
    if type(t.order) ~= "table" then fail(file, "order", "must be a list of axis column names") end
    for i, name in ipairs(t.order) do
      if not self.by_name[name] then fail(file, "order", "'%s' is not an axis column", tostring(name)) end
      if rank[name] then fail(file, "order", "'%s' is listed twice", name) end
      rank[name] = i
    end
  end
  return rank
end

--- axes = {...}: the columns and the points of the grid (or zip).
function L:axes()
  local t, file, S = self.t, self.file, self.S
  if type(t.axes) ~= "table" then fail(file, "axes", "must be a table {param = {...}, set = {...}, ...}") end
  local axes = {}
  for _, kind in ipairs(sorted_keys(t.axes)) do
    if not AXIS_KINDS[kind] then
      fail(file, "axes." .. tostring(kind), "unknown axis kind (param, set, topology or case)")
    end
    local spec = t.axes[kind]
    if kind == "param" and S.probe then fail(file, "axes.param", "probe points take no bench parameters") end
    if kind == "case" and not S.probe then fail(file, "axes.case", "probe cases need probe = true") end
    if kind == "topology" or kind == "case" then
      local where = "axes." .. kind
      local c = self:add_column(kind, kind, where)
      axes[#axes + 1] = { column = c, values = V.axis_values(file, where, spec) }
    else
      if type(spec) ~= "table" then fail(file, "axes." .. kind, "must be a table {KEY = {values...}, ...}") end
      for _, k in ipairs(sorted_keys(spec)) do
        local where = ("axes.%s[%q]"):format(kind, tostring(k))
        if kind == "set" then V.check_set_key(file, where, k) end
        local vals = V.axis_values(file, where, spec[k])
        if kind == "param" then
          for i, v in ipairs(vals) do V.check_param(file, ("%s[%d]"):format(where, i), S.bench_table, k, v) end
        end
        axes[#axes + 1] = { column = self:add_column(kind, k, where), values = vals }
      end
    end
  end
  if #axes == 0 then fail(file, "axes", "no axis given") end
  -- grid nesting: `order` (outermost first), else the column names sorted
  local rank = self:ranks()
  table.sort(axes, function(a, b)
    local ra, rb = rank[a.column.name] or math.huge, rank[b.column.name] or math.huge
    if ra ~= rb then return ra < rb end
    return a.column.name < b.column.name
  end)
  self.columns = {}
  for i, a in ipairs(axes) do self.columns[i] = a.column end
  S.mode = t.mode or "grid"
  local raw_points = self.raw_points
  if S.mode == "zip" then
    local n = #axes[1].values
    for _, a in ipairs(axes) do
      if #a.values ~= n then
        fail(file, "axes", "mode = \"zip\" needs axes of one length: %s has %d values, %s has %d",
          axes[1].column.name, n, a.column.name, #a.values)
      end
    end
    for i = 1, n do
      local p = {}
      for _, a in ipairs(axes) do p[a.column.name] = a.values[i] end
      raw_points[i] = p
    end
  else
    local total = 1
    for _, a in ipairs(axes) do
      total = total * #a.values
      if total > V.MAX_POINTS then fail(file, "axes", "the grid has more than %d points", V.MAX_POINTS) end
    end
    local idx = {}
    for i = 1, #axes do idx[i] = 1 end
    for _ = 1, total do
      local p = {}
      for i, a in ipairs(axes) do p[a.column.name] = a.values[idx[i]] end
      raw_points[#raw_points + 1] = p
      for i = #axes, 1, -1 do -- the last axis varies fastest
        idx[i] = idx[i] + 1
        if idx[i] <= #axes[i].values then break end
        idx[i] = 1
      end
    end
  end
end

--- points = {...}: the explicit points and their columns.
function L:points()
  local t, file, S = self.t, self.file, self.S
  if type(t.points) ~= "table" or #t.points == 0 then
    fail(file, "points", "must be a non-empty list of {param = {...}, set = {...}, topology =, case =}")
  end
  S.mode = "points"
  local seen_cols = {}
  for i, pt in ipairs(t.points) do
    local where = ("points[%d]"):format(i)
    if type(pt) ~= "table" then fail(file, where, "must be a table {param = {...}, set = {...}, ...}") end
    local p = {}
    for _, kind in ipairs(sorted_keys(pt)) do
      if not AXIS_KINDS[kind] then
        fail(file, where .. "." .. tostring(kind), "unknown key (param, set, topology or case)")
      end
      if kind == "param" and S.probe then fail(file, where .. ".param", "probe points take no bench parameters") end
      if kind == "case" and not S.probe then fail(file, where .. ".case", "probe cases need probe = true") end
      local function put(key, v, w)
        local name = (kind == "topology" or kind == "case") and kind or key
        local c = seen_cols[name]
        if not c then
          c = self:add_column(kind, key, w)
          seen_cols[name] = c
        elseif c.kind ~= kind then
          fail(file, w, "column '%s' is a %s elsewhere", name, c.kind)
        end
        p[name] = V.check_scalar(file, w, v)
        if kind == "param" then V.check_param(file, w, S.bench_table, key, v) end
      end
      if kind == "topology" or kind == "case" then
        put(kind, pt[kind], where .. "." .. kind)
      else
        if type(pt[kind]) ~= "table" then fail(file, where .. "." .. kind, "must be a table {KEY = VALUE}") end
        for _, k in ipairs(sorted_keys(pt[kind])) do
          local w = ("%s.%s[%q]"):format(where, kind, tostring(k))
          if kind == "set" then V.check_set_key(file, w, k) end
          put(k, pt[kind][k], w)
        end
      end
    end
    self.raw_points[i] = p
  end
  local rank = self:ranks()
  table.sort(self.columns, function(a, b)
    local ra, rb = rank[a.name] or math.huge, rank[b.name] or math.huge
    if ra ~= rb then return ra < rb end
    return a.name < b.name
  end)
end

return M
