--- Sweep files (docs/sweeps.md): loading, checking every key with an error
-- naming the file and the key, expanding the points (grid, zip or an
-- explicit list) and giving each a stable id: the fnv1a64 digest of its
-- canonical parameters (sorted "kind:key=value" lines), so reordering the
-- file changes no id. A Loader object holds what one load has read so far;
-- its methods check the file part by part (the points: sweep/points.lua;
-- values, ranges and errors: sweep/values.lua).
local V = require "kernbench.sweep.values"

local M = {}

local KNOWN = {
  name = true, description = true, bench = true, probe = true, topology = true, set = true, param = true,
  case = true, data = true, verify = true, timeout = true, axes = true, order = true, mode = true, points = true,
  metrics = true, derived = true, plots = true,
}
local PLOT_KEYS = { name = true, x = true, y = true, series = true, logx = true, logy = true, title = true,
                    xlabel = true, ylabel = true, style = true }

--- A sweep-file error: the command line prints it and exits 2.
M.Error = V.Error
M.is_error = V.is_error
M.fnv1a64 = V.fnv1a64
M.text = V.text

local fail, sorted_keys, check_scalar = V.fail, V.sorted_keys, V.check_scalar

local function is_dir_path(p)
  local f = io.open(p .. "/.", "r")
  if f then f:close() return true end
  return false
end

local function exists(p)
  local f = io.open(p, "r")
  if f then f:close() return not is_dir_path(p) end
  return false
end

-- The bench table and its file: `bench` as `kernbench run` takes it, a
-- path being tried beside the sweep file first.
local function find_bench(file, name)
  local dir = file:match("^(.*)/[^/]*$") or "."
  local path
  if name:find("/", 1, true) or name:match("%.lua$") then
    if name:sub(1, 1) ~= "/" and exists(dir .. "/" .. name) then path = dir .. "/" .. name end
  end
  if not path then
    local ok, p = pcall(require("kernbench.bench_find").resolve, name)
    if not ok then fail(file, "bench", "%s", tostring(p)) end
    path = p
  end
  local chunk, err = loadfile(path)
  if not chunk then fail(file, "bench", "%s", err) end
  local ok, b = pcall(chunk)
  if not ok then fail(file, "bench", "%s fails to load: %s", path, tostring(b)) end
  local why = require("kernbench.bench").problem(b)
  if why then fail(file, "bench", "%s is not a bench: %s", path, why) end
  while path:sub(1, 2) == "./" do path = path:sub(3) end
  if path:sub(1, 1) ~= "/" then
    local cwd = os.getenv("PWD")
    if cwd then path = cwd .. "/" .. path end
  end
  return b, path
end

local Loader = {}
Loader.__index = Loader
for k, f in pairs(require("kernbench.sweep.points").methods) do Loader[k] = f end

--- A loader of the sweep file at `path`: the file run and its table checked
-- for unknown keys.
function Loader.new(path)
  local file = path
  local chunk, err = loadfile(path)
  if not chunk then
    if not exists(path) then fail(file, nil, "no such sweep file") end
    fail(file, nil, "%s", err)
  end
  local ok, t = pcall(chunk)
  if not ok then fail(file, nil, "fails to load: %s", tostring(t)) end
  if type(t) ~= "table" then
    fail(file, nil, "a sweep file returns a table {bench =, axes =, metrics = ...}, got %s",
      t == nil and "nothing" or ("a " .. type(t)))
  end
  for k in pairs(t) do
    if not KNOWN[k] then
      fail(file, tostring(k), "unknown key (known: %s)", table.concat(sorted_keys(KNOWN), ", "))
    end
  end
  return setmetatable({ file = file, t = t, S = { file = file, description = t.description }, columns = {},
                        by_name = {}, raw_points = {}, mnames = {} }, Loader)
end

--- The name, what runs (a bench or probe cases), the data mode, the
-- timeout and the fixed options.
function Loader:header()
  local file, t, S = self.file, self.t, self.S
  -- name
  local base = file:match("([^/]+)%.lua$") or file:match("([^/]+)$")
  S.name = t.name or base
  if type(S.name) ~= "string" or not S.name:match("^[%w][%w_%-]*$") then
    fail(file, "name", "must be letters, digits, '_' and '-', got %s", tostring(t.name))
  end
  if t.description ~= nil and type(t.description) ~= "string" then fail(file, "description", "must be a string") end
  -- what runs
  if t.probe ~= nil and type(t.probe) ~= "boolean" then fail(file, "probe", "must be true or false") end
  S.probe = t.probe == true
  if S.probe and t.bench ~= nil then fail(file, "bench", "give either bench = or probe = true, not both") end
  if not S.probe then
    if type(t.bench) ~= "string" or t.bench == "" then
      fail(file, "bench", "missing: the bench to run (a name from 'kernbench list' or a path), or probe = true")
    end
    S.bench = t.bench
    S.bench_table, S.bench_path = find_bench(file, t.bench)
  end
  if not S.probe and t.case ~= nil then fail(file, "case", "probe cases need probe = true") end
  if S.probe and t.param ~= nil then fail(file, "param", "probe points take no bench parameters") end
  if S.probe and (t.data ~= nil or t.verify ~= nil) then fail(file, "data", "probe points have no data mode") end
  for _, k in ipairs { "data", "verify" } do
    if t[k] ~= nil and type(t[k]) ~= "boolean" then fail(file, k, "must be true or false") end
  end
  S.data_mode = t.verify and "verify" or t.data and "data" or nil
  if t.timeout ~= nil and (type(t.timeout) ~= "number" or t.timeout <= 0) then
    fail(file, "timeout", "must be a number of seconds > 0 (each point's --timeout)")
  end
  S.timeout = t.timeout
  -- fixed options
  S.fixed = {} -- list of {kind, key, value}
  if t.topology ~= nil then
    if type(t.topology) ~= "string" then fail(file, "topology", "must be a topology name or file") end
    S.fixed[#S.fixed + 1] = { kind = "topology", key = "topology", value = t.topology }
  end
  if t.case ~= nil then
    if type(t.case) ~= "string" then fail(file, "case", "must be a probe case name") end
    S.fixed[#S.fixed + 1] = { kind = "case", key = "case", value = t.case }
  end
  for _, kind in ipairs { "set", "param" } do
    local tab = t[kind]
    if tab ~= nil then
      if type(tab) ~= "table" then fail(file, kind, "must be a table {KEY = VALUE, ...}") end
      for _, k in ipairs(sorted_keys(tab)) do
        local where = ("%s[%q]"):format(kind, tostring(k))
        if kind == "set" then V.check_set_key(file, where, k) end
        check_scalar(file, where, tab[k])
        if kind == "param" then V.check_param(file, where, S.bench_table, k, tab[k]) end
        S.fixed[#S.fixed + 1] = { kind = kind, key = k, value = tab[k] }
      end
    end
  end
end

--- The axes or the explicit points (sweep/points.lua).
function Loader:expand()
  local file, t, S = self.file, self.t, self.S
  if t.mode ~= nil and t.mode ~= "grid" and t.mode ~= "zip" then
    fail(file, "mode", "must be \"grid\" or \"zip\", got %s", tostring(t.mode))
  end
  if t.points ~= nil and t.axes ~= nil then fail(file, "points", "give axes = or points =, not both") end
  if t.points ~= nil and t.mode ~= nil then fail(file, "mode", "mode applies to axes, not to explicit points") end
  if t.axes ~= nil then
    self:axes()
  elseif t.points ~= nil then
    self:points()
  else
    fail(file, nil, "no points: give axes = {...} or points = {...}")
  end
  if S.probe then
    local has_case = self.by_name.case ~= nil
    for _, f in ipairs(S.fixed) do has_case = has_case or f.kind == "case" end
    if not has_case then fail(file, "case", "a probe sweep needs a case (case = NAME or axes.case = {...})") end
  end
  S.columns = self.columns
  S.column = self.by_name
end

--- metrics: {name = "path"} and/or a list of paths (named by their last
-- part); self.mnames: the names of the metric and derived columns.
function Loader:metrics()
  local file, t, S, by_name, mnames = self.file, self.t, self.S, self.by_name, self.mnames
  S.metrics = {}
  local function add_metric(name, mpath, where)
    if type(mpath) ~= "string" or not mpath:match("^[%w_]+[%w_.%-]*$") or mpath:find("%.%.") or mpath:find("%.$") then
      fail(file, where, "a metric is a path into the point's results JSON such as \"result.crit_ns\", got %s",
        tostring(mpath))
    end
    if type(name) ~= "string" or not name:match("^[%a_][%w_%.%-]*$") then
      fail(file, where, "a metric name must start with a letter or '_', got %s", tostring(name))
    end
    if mnames[name] or by_name[name] or name == "id" or name == "status" or name == "exit_code" then
      fail(file, where, "column '%s' is defined twice", name)
    end
    mnames[name] = true
    local parts = {}
    for seg in mpath:gmatch("[^.]+") do parts[#parts + 1] = seg:match("^%d+$") and tonumber(seg) or seg end
    S.metrics[#S.metrics + 1] = { name = name, path = mpath, parts = parts }
  end
  if t.metrics ~= nil then
    if type(t.metrics) ~= "table" then fail(file, "metrics", "must be a table {NAME = \"path\", ...} or a list") end
    for i, mp in ipairs(t.metrics) do add_metric(tostring(mp):match("([^.]+)$"), mp, ("metrics[%d]"):format(i)) end
    for _, k in ipairs(sorted_keys(t.metrics)) do
      if math.type(k) ~= "integer" then add_metric(k, t.metrics[k], ("metrics.%s"):format(tostring(k))) end
    end
  end
end

--- derived columns: {name = function(row)} (sorted) or {{name, fn}, ...}.
function Loader:derived()
  local file, t, S, by_name, mnames = self.file, self.t, self.S, self.by_name, self.mnames
  S.derived = {}
  if t.derived ~= nil then
    if type(t.derived) ~= "table" then fail(file, "derived", "must be a table {NAME = function(row) ... end}") end
    local list = {}
    for i, d in ipairs(t.derived) do
      if type(d) ~= "table" then fail(file, ("derived[%d]"):format(i), "must be {NAME, function(row) ... end}") end
      list[#list + 1] = { name = d[1], fn = d[2], where = ("derived[%d]"):format(i) }
    end
    for _, k in ipairs(sorted_keys(t.derived)) do
      if math.type(k) ~= "integer" then list[#list + 1] = { name = k, fn = t.derived[k], where = "derived." .. k } end
    end
    for _, d in ipairs(list) do
      if type(d.name) ~= "string" or not d.name:match("^[%a_][%w_%.%-]*$") then
        fail(file, d.where, "a column name must start with a letter or '_', got %s", tostring(d.name))
      end
      if type(d.fn) ~= "function" then fail(file, d.where, "must be a function(row) returning the value") end
      if mnames[d.name] or by_name[d.name] or d.name == "id" or d.name == "status" or d.name == "exit_code" then
        fail(file, d.where, "column '%s' is defined twice", d.name)
      end
      mnames[d.name] = true
      S.derived[#S.derived + 1] = { name = d.name, fn = d.fn }
    end
  end
end

--- plots = {{x =, y =, series =, ...}, ...}, naming columns.
function Loader:plots()
  local file, t, S, by_name, mnames = self.file, self.t, self.S, self.by_name, self.mnames
  S.plots = {}
  if t.plots ~= nil then
    if type(t.plots) ~= "table" then fail(file, "plots", "must be a list of {x =, y =, series =, ...}") end
    local all = { id = true, status = true, exit_code = true }
    for n in pairs(by_name) do all[n] = true end
    for n in pairs(mnames) do all[n] = true end
    local pnames = {}
    for i, pl in ipairs(t.plots) do
      local where = ("plots[%d]"):format(i)
      if type(pl) ~= "table" then fail(file, where, "must be a table {x =, y =, series =, logx =, logy =, ...}") end
      for k in pairs(pl) do
        if not PLOT_KEYS[k] then
          fail(file, where .. "." .. tostring(k), "unknown key (known: %s)", table.concat(sorted_keys(PLOT_KEYS), ", "))
        end
      end
      local ys = type(pl.y) == "table" and pl.y or { pl.y }
      if #ys == 0 then fail(file, where .. ".y", "missing: the column(s) to plot") end
      for _, c in ipairs { pl.x, table.unpack(ys) } do
        if type(c) ~= "string" or not all[c] then fail(file, where, "'%s' is not a column", tostring(c)) end
      end
      if pl.series ~= nil and (type(pl.series) ~= "string" or not all[pl.series]) then
        fail(file, where .. ".series", "'%s' is not a column", tostring(pl.series))
      end
      local name = pl.name or (ys[1] .. "_vs_" .. pl.x)
      if type(name) ~= "string" or not name:match("^[%w][%w_%-%.]*$") then
        fail(file, where .. ".name", "a file name stem (letters, digits, '_', '-', '.'), got %s", tostring(name))
      end
      if pnames[name] then fail(file, where .. ".name", "plot '%s' is declared twice", name) end
      pnames[name] = true
      for _, k in ipairs { "logx", "logy" } do
        if pl[k] ~= nil and type(pl[k]) ~= "boolean" then fail(file, where .. "." .. k, "must be true or false") end
      end
      for _, k in ipairs { "title", "xlabel", "ylabel", "style" } do
        if pl[k] ~= nil and type(pl[k]) ~= "string" then fail(file, where .. "." .. k, "must be a string") end
      end
      S.plots[#S.plots + 1] = { name = name, x = pl.x, y = ys, series = pl.series, logx = pl.logx, logy = pl.logy,
                                title = pl.title, xlabel = pl.xlabel, ylabel = pl.ylabel,
                                style = pl.style or "linespoints" }
    end
  end
end

--- The points with their canonical lines, ids and values.
function Loader:identify()
  local file, S, columns, raw_points = self.file, self.S, self.columns, self.raw_points
  -- the points: canonical lines, id, values
  local common = { S.probe and "probe" or ("bench=" .. S.bench) }
  if S.data_mode then common[#common + 1] = "mode=" .. S.data_mode end
  for _, f in ipairs(S.fixed) do
    common[#common + 1] = (f.kind == "topology" or f.kind == "case") and (f.kind .. "=" .. M.text(f.value))
      or (f.kind .. ":" .. f.key .. "=" .. M.text(f.value))
  end
  S.points = {}
  local ids = {}
  for i, rp in ipairs(raw_points) do
    local lines = { table.unpack(common) }
    for _, c in ipairs(columns) do
      local v = rp[c.name]
      if v ~= nil then
        lines[#lines + 1] = (c.kind == "topology" or c.kind == "case") and (c.kind .. "=" .. M.text(v))
          or (c.kind .. ":" .. c.key .. "=" .. M.text(v))
      end
    end
    table.sort(lines)
    local canon = table.concat(lines, "\n")
    local id = M.fnv1a64(canon)
    if ids[id] then
      fail(file, S.mode == "points" and ("points[%d]"):format(i) or "axes",
        "point %d is the same as point %d (%s)", i, ids[id], canon:gsub("\n", ", "))
    end
    ids[id] = i
    S.points[i] = { index = i, id = id, values = rp, canon = canon }
  end
end

--- Loads and checks the sweep file at `path`. Returns the sweep table
-- (normalised: columns, points with ids and command parts, metrics,
-- derived, plots). Raises an M.Error naming the file and key.
function M.load(path, opts)
  opts = opts or {}
  local L = Loader.new(path)
  L:header()
  L:expand()
  L:metrics()
  L:derived()
  L:plots()
  L:identify()
  M.check_topologies(L.S)
  return L.S
end

--- Loads each distinct topology with the fixed --set values, and each
-- --set axis value on the first: a bad key or value fails now, naming it.
function M.check_topologies(S)
  local file = S.file
  local fixed_sets, topo = {}, nil
  for _, f in ipairs(S.fixed) do
    if f.kind == "set" then fixed_sets[#fixed_sets + 1] = f.key .. "=" .. M.text(f.value) end
    if f.kind == "topology" then topo = f.value end
  end
  local topos = {}
  if S.column.topology then
    local seen = {}
    for _, p in ipairs(S.points) do
      local v = p.values.topology
      if v ~= nil and not seen[v] then seen[v] = true topos[#topos + 1] = v end
    end
  end
  if #topos == 0 then topos = { topo or "default" } end
  local function try(where, name, sets)
    local ok, err = pcall(kb.topology.load, name, sets)
    if not ok then fail(file, where, "%s", tostring(err):gsub("^kb%.topology: ", "")) end
  end
  for _, name in ipairs(topos) do
    if type(name) ~= "string" then fail(file, "topology", "must be a topology name or file, got %s", tostring(name)) end
    try(S.column.topology and "axes.topology" or "topology", name, fixed_sets)
  end
  local checked = 0
  for _, c in ipairs(S.columns) do
    if c.kind == "set" then
      local seen = {}
      for _, p in ipairs(S.points) do
        local v = p.values[c.name]
        if v ~= nil and not seen[M.text(v)] and checked < 64 then
          seen[M.text(v)] = true
          checked = checked + 1
          local sets = { table.unpack(fixed_sets) }
          sets[#sets + 1] = c.key .. "=" .. M.text(v)
          try(("set %s=%s"):format(c.key, M.text(v)), topos[1], sets)
        end
      end
    end
  end
end

--- The kernbench argv of point p (exe first) writing its results to json.
function M.argv(S, p, exe, json)
  local a = { exe, "-q" }
  local topo, case
  local sets, params = {}, {}
  for _, f in ipairs(S.fixed) do
    if f.kind == "topology" then topo = f.value
    elseif f.kind == "case" then case = f.value
    elseif f.kind == "set" then sets[#sets + 1] = { f.key, f.value }
    else params[#params + 1] = { f.key, f.value } end
  end
  for _, c in ipairs(S.columns) do
    local v = p.values[c.name]
    if v ~= nil then
      if c.kind == "topology" then topo = v
      elseif c.kind == "case" then case = v
      elseif c.kind == "set" then sets[#sets + 1] = { c.key, v }
      else params[#params + 1] = { c.key, v } end
    end
  end
  table.sort(sets, function(x, y) return x[1] < y[1] end)
  table.sort(params, function(x, y) return x[1] < y[1] end)
  if topo then a[#a + 1] = "-t"; a[#a + 1] = M.text(topo) end
  for _, s in ipairs(sets) do a[#a + 1] = "--set"; a[#a + 1] = s[1] .. "=" .. M.text(s[2]) end
  if S.timeout then a[#a + 1] = "--timeout"; a[#a + 1] = M.text(S.timeout) end
  if S.probe then
    for _, x in ipairs { "probe", "--case", M.text(case), "--output", json } do a[#a + 1] = x end
    return a
  end
  for _, s in ipairs(params) do a[#a + 1] = "--param"; a[#a + 1] = s[1] .. "=" .. M.text(s[2]) end
  if S.data_mode == "verify" then a[#a + 1] = "--verify-data" elseif S.data_mode == "data" then a[#a + 1] = "--data" end
  for _, x in ipairs { "--results-json", json, "run", S.bench_path } do a[#a + 1] = x end
  return a
end

--- The value at metric path parts (strings: object keys; integers: 1-based
-- array indices) in the decoded document doc, or nil.
function M.extract(doc, parts)
  local v = doc
  for _, k in ipairs(parts) do
    if type(v) ~= "table" then return nil end
    local nv = v[k]
    if nv == nil and type(k) == "number" then nv = v[tostring(k)] end
    v = nv
  end
  return v
end

return M
