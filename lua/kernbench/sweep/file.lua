--- Sweep files (docs/sweeps.md): loading, checking every key with an error
-- naming the file and the key, expanding the points (grid, zip or an
-- explicit list) and giving each a stable id: the fnv1a64 digest of its
-- canonical parameters (sorted "kind:key=value" lines), so reordering the
-- file changes no id.
local M = {}

local KNOWN = {
  name = true, description = true, bench = true, probe = true, topology = true, set = true, param = true,
  case = true, data = true, verify = true, timeout = true, axes = true, order = true, mode = true, points = true,
  metrics = true, derived = true, plots = true,
}
local AXIS_KINDS = { param = true, set = true, topology = true, case = true }
local PLOT_KEYS = { name = true, x = true, y = true, series = true, logx = true, logy = true, title = true,
                    xlabel = true, ylabel = true, style = true }
local MAX_POINTS = 10000000

--- A sweep-file error: the command line prints it and exits 2.
local Err = {}
Err.__tostring = function(e) return e.message end
M.Error = Err
function M.is_error(e) return getmetatable(e) == Err end

local function fail(file, key, fmt, ...)
  error(setmetatable({ message = ("%s: %s%s"):format(file, key and (key .. ": ") or "", fmt:format(...)) }, Err), 0)
end

--- FNV-1a 64 of text, as 16 hex digits (the topology digest's hash).
function M.fnv1a64(text)
  local h = -3750763034362895579 -- 14695981039346656037, the offset basis
  for i = 1, #text do h = (h ~ text:byte(i)) * 1099511628211 end
  return ("%016x"):format(h)
end

--- A value as it is written on the command line: integers (and integral
-- floats) in decimal, other floats in the shortest form that reads back
-- exactly, booleans as true/false, strings as they are.
function M.text(v)
  if type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge then
    return require("kernbench.json").number(v)
  end
  return tostring(v)
end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

local function check_scalar(file, key, v)
  local ty = type(v)
  if ty == "number" then
    if v ~= v or v == math.huge or v == -math.huge then fail(file, key, "%s is not a finite number", tostring(v)) end
  elseif ty ~= "string" and ty ~= "boolean" then
    fail(file, key, "a value must be a string, a number or a boolean, got a %s", ty)
  end
  return v
end

-- The values of an axis: a list, or a range {from =, to =, step =} /
-- {from =, to =, times =} (a geometric range), to included when reached.
local function axis_values(file, key, spec)
  if type(spec) ~= "table" then
    fail(file, key, "expected a list of values or a range {from =, to =, step = | times =}, got a %s", type(spec))
  end
  if spec.from ~= nil or spec.to ~= nil or spec.step ~= nil or spec.times ~= nil then
    for k in pairs(spec) do
      if k ~= "from" and k ~= "to" and k ~= "step" and k ~= "times" then
        fail(file, key, "a range takes from, to and step or times; unknown key '%s'", tostring(k))
      end
    end
    local a, b, step, times = spec.from, spec.to, spec.step, spec.times
    if type(a) ~= "number" or type(b) ~= "number" then fail(file, key, "a range needs numbers from = and to =") end
    if (step == nil) == (times == nil) then fail(file, key, "a range needs exactly one of step = and times =") end
    if step ~= nil and (type(step) ~= "number" or step <= 0) then fail(file, key, "step must be a number > 0") end
    if times ~= nil and (type(times) ~= "number" or times <= 1 or a <= 0) then
      fail(file, key, "times must be a number > 1, with from > 0")
    end
    if b < a then fail(file, key, "a range needs from <= to (from = %s, to = %s)", M.text(a), M.text(b)) end
    local out, v = {}, a
    while v <= b * (1 + 1e-12) do
      out[#out + 1] = v
      if #out > MAX_POINTS then fail(file, key, "the range has more than %d values", MAX_POINTS) end
      if step then v = a + #out * step else v = v * times end
    end
    return out
  end
  local n = #spec
  if n == 0 then fail(file, key, "an axis needs at least one value (a list or a range)") end
  for k in pairs(spec) do
    if math.type(k) ~= "integer" or k < 1 or k > n then
      fail(file, key, "expected a list of values (keys 1..%d), found key %s", n, tostring(k))
    end
  end
  local seen, out = {}, {}
  for i = 1, n do
    local v = check_scalar(file, ("%s[%d]"):format(key, i), spec[i])
    local t = type(v) .. ":" .. M.text(v)
    if seen[t] then fail(file, key, "value %s is listed twice", M.text(v)) end
    seen[t] = true
    out[i] = v
  end
  return out
end

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

-- Checks that bench b takes --param key=value.
local function check_param(file, where, b, key, v)
  if type(key) ~= "string" or not key:match("^[%a_][%w_]*$") then
    fail(file, where, "a parameter name must be an identifier, got %s", tostring(key))
  end
  local ok, err = pcall(require("kernbench.bench_params").resolve, b, { key .. "=" .. M.text(v) }, function() end)
  if not ok then fail(file, where, "%s", tostring(err)) end
end

local function check_set_key(file, where, key)
  if type(key) ~= "string" or not key:match("^[%a_][%w_]*[%w_.%[%]]*$") then
    fail(file, where, "a --set key must be a topology field path such as cube.links.router_link_bw_gbs, got %s",
      tostring(key))
  end
end

--- Loads and checks the sweep file at `path`. Returns the sweep table
-- (normalised: columns, points with ids and command parts, metrics,
-- derived, plots). Raises an M.Error naming the file and key.
function M.load(path, opts)
  opts = opts or {}
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
  local S = { file = file, description = t.description }
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
        if kind == "set" then check_set_key(file, where, k) end
        check_scalar(file, where, tab[k])
        if kind == "param" then check_param(file, where, S.bench_table, k, tab[k]) end
        S.fixed[#S.fixed + 1] = { kind = kind, key = k, value = tab[k] }
      end
    end
  end
  -- axes
  local columns, by_name = {}, {}
  local function add_column(kind, key, where)
    local name = (kind == "topology" or kind == "case") and kind or key
    if by_name[name] then
      fail(file, where, "column '%s' is already an axis (%s)", name, by_name[name].kind)
    end
    for _, f in ipairs(S.fixed) do
      if f.kind == kind and f.key == key then
        fail(file, where, "'%s' is both a fixed option and an axis", key)
      end
    end
    if name == "id" or name == "status" or name == "exit_code" then fail(file, where, "'%s' is reserved", name) end
    local c = { name = name, kind = kind, key = key }
    columns[#columns + 1] = c
    by_name[name] = c
    return c
  end
  if t.mode ~= nil and t.mode ~= "grid" and t.mode ~= "zip" then
    fail(file, "mode", "must be \"grid\" or \"zip\", got %s", tostring(t.mode))
  end
  if t.points ~= nil and t.axes ~= nil then fail(file, "points", "give axes = or points =, not both") end
  if t.points ~= nil and t.mode ~= nil then fail(file, "mode", "mode applies to axes, not to explicit points") end
  local raw_points = {} -- list of {column name -> value}
  -- `order`: the axis columns in this order (the grid's nesting, outermost
  -- first); the others after them, sorted by name
  local function ranks()
    local rank = {}
    if t.order ~= nil then
      if type(t.order) ~= "table" then fail(file, "order", "must be a list of axis column names") end
      for i, name in ipairs(t.order) do
        if not by_name[name] then fail(file, "order", "'%s' is not an axis column", tostring(name)) end
        if rank[name] then fail(file, "order", "'%s' is listed twice", name) end
        rank[name] = i
      end
    end
    return rank
  end
  if t.axes ~= nil then
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
        local c = add_column(kind, kind, where)
        axes[#axes + 1] = { column = c, values = axis_values(file, where, spec) }
      else
        if type(spec) ~= "table" then fail(file, "axes." .. kind, "must be a table {KEY = {values...}, ...}") end
        for _, k in ipairs(sorted_keys(spec)) do
          local where = ("axes.%s[%q]"):format(kind, tostring(k))
          if kind == "set" then check_set_key(file, where, k) end
          local vals = axis_values(file, where, spec[k])
          if kind == "param" then
            for i, v in ipairs(vals) do check_param(file, ("%s[%d]"):format(where, i), S.bench_table, k, v) end
          end
          axes[#axes + 1] = { column = add_column(kind, k, where), values = vals }
        end
      end
    end
    if #axes == 0 then fail(file, "axes", "no axis given") end
    -- grid nesting: `order` (outermost first), else the column names sorted
    local rank = ranks()
    table.sort(axes, function(a, b)
      local ra, rb = rank[a.column.name] or math.huge, rank[b.column.name] or math.huge
      if ra ~= rb then return ra < rb end
      return a.column.name < b.column.name
    end)
    columns = {}
    for i, a in ipairs(axes) do columns[i] = a.column end
    S.mode = t.mode or "grid"
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
        if total > MAX_POINTS then fail(file, "axes", "the grid has more than %d points", MAX_POINTS) end
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
  elseif t.points ~= nil then
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
            c = add_column(kind, key, w)
            seen_cols[name] = c
          elseif c.kind ~= kind then
            fail(file, w, "column '%s' is a %s elsewhere", name, c.kind)
          end
          p[name] = check_scalar(file, w, v)
          if kind == "param" then check_param(file, w, S.bench_table, key, v) end
        end
        if kind == "topology" or kind == "case" then
          put(kind, pt[kind], where .. "." .. kind)
        else
          if type(pt[kind]) ~= "table" then fail(file, where .. "." .. kind, "must be a table {KEY = VALUE}") end
          for _, k in ipairs(sorted_keys(pt[kind])) do
            local w = ("%s.%s[%q]"):format(where, kind, tostring(k))
            if kind == "set" then check_set_key(file, w, k) end
            put(k, pt[kind][k], w)
          end
        end
      end
      raw_points[i] = p
    end
    local rank = ranks()
    table.sort(columns, function(a, b)
      local ra, rb = rank[a.name] or math.huge, rank[b.name] or math.huge
      if ra ~= rb then return ra < rb end
      return a.name < b.name
    end)
  else
    fail(file, nil, "no points: give axes = {...} or points = {...}")
  end
  if S.probe then
    local has_case = by_name.case ~= nil
    for _, f in ipairs(S.fixed) do has_case = has_case or f.kind == "case" end
    if not has_case then fail(file, "case", "a probe sweep needs a case (case = NAME or axes.case = {...})") end
  end
  S.columns = columns
  S.column = by_name
  -- metrics: {name = "path"} and/or a list of paths (named by their last part)
  S.metrics = {}
  local mnames = {}
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
  -- derived columns: {name = function(row)} (sorted) or {{name, fn}, ...}
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
  -- plots
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
  M.check_topologies(S)
  return S
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
