--- kernbench.ccl.config: ccl.yaml, the collectives' configuration file
-- (docs/ccl.md; spec §4.2): which algorithm module an all-reduce runs
-- and the IPCQ rings it installs.
--
--   local config = require "kernbench.ccl.config"
--   local path, origin = config.find { path =, bench_dir =, cwd = }
--   local cfg = config.load(path)         -- raises "file:line:col: key.path: message"
--   for _, w in ipairs(cfg.warnings) do io.stderr:write("kernbench: ", w, "\n") end
--   local c = config.resolve(cfg[, name]) -- {name, source, module, buffer_kind, ...}
--
-- The file is read with kernbench.yaml_c (the topology's reader), so every
-- error names the file, line, column and key path.
local yaml = require "kernbench.yaml_c"
local topologies = require "kernbench.ccl.topologies"

local M = {}

local function dir_of(file)
  return file:match("^(.*)/[^/]*$") or "."
end

-- The shipped ccl.yaml sits beside the Lua library, as the topologies do:
-- <lua>/../ccl.yaml (the repository root, or share/kernbench once installed).
local here = debug.getinfo(1, "S").source:match("^@(.*)$")
M.shipped = here and (dir_of(dir_of(dir_of(dir_of(here)))) .. "/ccl.yaml") or "ccl.yaml"

-- Whether p names something, without opening it (as kb.topology.find: a
-- FIFO would block; the reader refuses anything but a regular file).
local function exists(p)
  local f, _, code = io.open(p .. "/", "r")
  if f then f:close() return true end
  return code ~= 2
end

-- The directory of the bench or script the command line runs: arg[0] (for
-- `kernbench run NAME` the bench's file). nil in the REPL, under -e alone
-- (arg[0] is then the interpreter, with no arg[-1]) and for standard input.
local function script_dir()
  local a = rawget(_G, "arg")
  if type(a) ~= "table" or a[-1] == nil or type(a[0]) ~= "string" or a[0] == "-" then return nil end
  return dir_of(a[0])
end

--- The ccl.yaml to use, and where it was found ("explicit", "bench", "cwd",
-- "shipped"), by the first that applies:
--   1. opts.path, else kb.ccl_path (the command line's --ccl FILE): it must exist;
--   2. ccl.yaml in opts.bench_dir (default: the directory of the bench or
--      script being run; false: none);
--   3. ccl.yaml in opts.cwd (default: the working directory);
--   4. the shipped ccl.yaml (opts.shipped, default M.shipped).
-- Returns nil and a message naming the places tried when none exists.
function M.find(opts)
  opts = opts or {}
  local explicit = opts.path
  if explicit == nil then explicit = rawget(_G, "kb") and kb.ccl_path end
  if explicit then
    if type(explicit) ~= "string" then
      error(("ccl: a ccl.yaml path must be a string, got %s"):format(type(explicit)), 2)
    end
    if not exists(explicit) then error(("ccl: no ccl.yaml file '%s'"):format(explicit), 2) end
    return explicit, "explicit"
  end
  local bench_dir = opts.bench_dir
  if bench_dir == nil then bench_dir = script_dir() end
  local places = {}
  if bench_dir then places[#places + 1] = { bench_dir .. "/ccl.yaml", "bench" } end
  places[#places + 1] = { opts.cwd and (opts.cwd .. "/ccl.yaml") or "ccl.yaml", "cwd" }
  places[#places + 1] = { opts.shipped or M.shipped, "shipped" }
  local tried = {}
  for _, p in ipairs(places) do
    if exists(p[1]) then return p[1], p[2] end
    tried[#tried + 1] = p[1]
  end
  return nil, "no ccl.yaml (looked for " .. table.concat(tried, ", ") .. ")"
end

-- ---- the schema ----

local BUFFER_KINDS = { "tcm", "hbm", "sram" }
local BACKPRESSURE = { "poll", "sleep" }
local TOPOLOGIES = { "none" }
for _, n in ipairs(topologies.names) do TOPOLOGIES[#TOPOLOGIES + 1] = n end

-- Keys of the original's `defaults:` that are hardware parameters here:
-- they belong to the topology (docs/ipcq.md), set with --set.
local HARDWARE = {
  vc_chunk_size = "cube.pe_template.components.pe_dma.attrs.vc_chunk_size",
  ipcq_credit_size_bytes = "cube.pe_template.components.pe_ipcq.attrs.credit_bytes",
}

-- A value for messages: strings quoted, tables as map or list.
local function show(v)
  if type(v) == "string" then
    local s = ("'%s'"):format(#v > 60 and (v:sub(1, 57) .. "...") or v)
    if v:match("^[-+]?%d+%.?%d*$") then s = s .. " (a quoted string; write numbers without quotes)" end
    return s
  end
  if type(v) == "table" then return next(v) == nil and "an empty map or list" or (v[1] ~= nil and "a list" or "a map") end
  if v == yaml.null then return "null" end
  return tostring(v)
end

local function is_int(v) return math.type(v) == "integer" end

-- Value checks: each returns nil, or what was expected.
local function one_of(list)
  local set = {}
  for _, s in ipairs(list) do set[s] = true end
  return function(v)
    if type(v) == "string" and set[v] then return nil end
    return "expected one of " .. table.concat(list, ", ")
  end
end

local function int_in(lo, hi)
  return function(v)
    if is_int(v) and v >= lo and (not hi or v <= hi) then return nil end
    return hi and ("expected an integer from %d to %d"):format(lo, hi) or ("expected an integer >= %d"):format(lo)
  end
end

local function slot_size(v)
  if is_int(v) and v >= 16 and v % 16 == 0 then return nil end
  return "expected a number of bytes >= 16 and a multiple of 16 (as torch.install_ipcq requires)"
end

local function root(v)
  if v == "center" or v == "corner" or (is_int(v) and v >= 0) then return nil end
  return "expected center, corner or a cube index (an integer >= 0)"
end

local function module_name(v)
  if type(v) == "string" and v ~= "" then
    local ok = true
    for part in (v .. "."):gmatch("(.-)%.") do
      if not part:match("^[%a_][%w_]*$") then ok = false end
    end
    if ok then return nil end
  end
  return "expected a Lua module name such as kernbench.ccl.algorithms.lrab_hierarchical_allreduce"
end

-- That `require` finds module `name` and it is a collective algorithm
-- (docs/ccl.md: kernel and kernel_args functions); nil or what is wrong.
local function module_problem(name)
  local found = package.loaded[name] ~= nil or package.preload[name] ~= nil
      or package.searchpath(name, package.path) ~= nil or package.searchpath(name, package.cpath) ~= nil
  if not found then
    return ("module '%s' not found: no %s.lua on the Lua path (package.path)"):format(name, name:gsub("%.", "/"))
  end
  local ok, mod = pcall(require, name)
  if not ok then return ("module '%s' fails to load: %s"):format(name, tostring(mod)) end
  if type(mod) ~= "table" or type(mod.kernel) ~= "function" or type(mod.kernel_args) ~= "function" then
    return ("module '%s' is not a collective algorithm: it must return a table with the functions kernel and " ..
      "kernel_args (docs/ccl.md)"):format(name)
  end
  return nil
end

-- A module key: a module name that `require` finds, an algorithm (the
-- second result says the message is complete, without the value). Each
-- name is looked up once per load (r.modules), however many entries use it.
local function algorithm_module(v, r)
  local why = module_name(v)
  if why then return why end
  if r.modules[v] == nil then r.modules[v] = module_problem(v) or false end
  why = r.modules[v] or nil
  return why, why ~= nil
end

-- The keys of each map, in the order of the spec's example.
local DEFAULT_KEYS = {
  algorithm = function(v)
    if type(v) == "string" and v ~= "" then return nil end
    return "expected the name of an entry of algorithms"
  end,
  buffer_kind = one_of(BUFFER_KINDS),
  backpressure = one_of(BACKPRESSURE),
  n_slots = int_in(1, 1024),
  slot_size = slot_size,
  world_size = int_in(1),
}
local DEFAULT_ORDER = { "algorithm", "buffer_kind", "backpressure", "n_slots", "slot_size", "world_size" }

local ALGO_KEYS = {
  module = algorithm_module,
  topology = one_of(TOPOLOGIES),
  buffer_kind = DEFAULT_KEYS.buffer_kind,
  backpressure = DEFAULT_KEYS.backpressure,
  n_slots = DEFAULT_KEYS.n_slots,
  slot_size = slot_size,
  world_size = DEFAULT_KEYS.world_size,
  n_elem = int_in(1),
  root = root,
  root_cube = int_in(0),
  params = function() return nil end, -- a map, checked by Reader:algorithm
}
local ALGO_ORDER = { "module", "topology", "buffer_kind", "backpressure", "n_slots", "slot_size", "world_size",
                     "n_elem", "root", "root_cube", "params" }

-- ---- reading ----

local MAX_ERRORS = 20 -- problems reported at once, as the topology's unknown keys

local function path_of(parent, key)
  return parent == "" and key or (parent .. "." .. key)
end

local function position(mark)
  local l, c = (mark or ""):match(":(%d+):(%d+)$")
  return tonumber(l) or 0, tonumber(c) or 0
end

-- A load in progress: the document, the keys of each map and the problems found.
local Reader = {}
Reader.__index = Reader

local function reader(doc)
  local r = setmetatable({ doc = doc, errors = {}, warnings = {}, children = {}, modules = {} }, Reader)
  -- Every key by the path of its map, once for the document (a large file
  -- stays linear): a key written without a value (null) is absent from its
  -- table but still a key the file wrote.
  for p in pairs(doc.key_marks) do
    local parent, key = p:match("^(.*)%.([^.]*)$")
    if not parent then parent, key = "", p end
    local list = r.children[parent] or {}
    r.children[parent] = list
    list[#list + 1] = key
  end
  return r
end

function Reader:mark(path) return self.doc.marks[path] or self.doc.marks[""] end
function Reader:key_mark(path) return self.doc.key_marks[path] or self:mark(path) end
function Reader:written(path) return self.doc.key_marks[path] ~= nil end

function Reader:fail(mark, path, fmt, ...)
  local msg = fmt:format(...)
  self.errors[#self.errors + 1] = path ~= "" and ("%s: %s: %s"):format(mark, path, msg) or ("%s: %s"):format(mark, msg)
end

-- The keys of the map at `path` (its value t) in document order.
function Reader:keys(path, t)
  local keys, seen = {}, {}
  local function add(k)
    if type(k) == "string" and not seen[k] then keys[#keys + 1] = k; seen[k] = true end
  end
  for k in pairs(t) do add(k) end
  for _, k in ipairs(self.children[path] or {}) do add(k) end
  local at = {}
  for _, k in ipairs(keys) do at[k] = { position(self:key_mark(path_of(path, k))) } end
  table.sort(keys, function(a, b)
    local pa, pb = at[a], at[b]
    if pa[1] ~= pb[1] then return pa[1] < pb[1] end
    if pa[2] ~= pb[2] then return pa[2] < pb[2] end
    return a < b
  end)
  return keys
end

-- Whether t is a map (a table with string keys; `key:` without a value is an empty one).
local function is_map(t)
  if type(t) ~= "table" then return false end
  for k in pairs(t) do
    if type(k) ~= "string" then return false end
  end
  return true
end

-- Reports a key of the map at `path` that is not in `known`; true if it is.
function Reader:known(path, k, known, order, what)
  local p = path_of(path, k)
  if HARDWARE[k] then
    self:fail(self:key_mark(p), p, "%s is a hardware parameter in kernbench, not a ccl.yaml key: set it in the " ..
      "topology with --set %s=VALUE", k, HARDWARE[k])
    return false
  end
  if not known[k] then
    self:fail(self:key_mark(p), p, "unknown key in %s (known: %s)", what, table.concat(order, ", "))
    return false
  end
  return true
end

-- Checks the map at `path` (its value t) against `spec` (key -> check);
-- `order` lists the known keys for messages. Returns the valid values.
function Reader:map(path, t, spec, order, what)
  local out = {}
  for _, k in ipairs(self:keys(path, t)) do
    local p, v = path_of(path, k), t[k]
    if self:known(path, k, spec, order, what) then
      if v == nil then
        if k ~= "params" then self:fail(self:mark(p), p, "no value (write one, or remove the key)") end
      else
        local why, complete = spec[k](v, self)
        if complete then
          self:fail(self:mark(p), p, "%s", why)
        elseif why then
          self:fail(self:mark(p), p, "%s, got %s", why, show(v))
        else
          out[k] = v
        end
      end
    end
  end
  return out
end

-- A deep copy of plain data.
local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

function Reader:algorithm(name, t)
  local path = path_of("algorithms", name)
  if t == nil then t = {} end
  if not is_map(t) then
    self:fail(self:mark(path), path, "expected a map (module: ..., topology: ...), got %s", show(t))
    return nil
  end
  local a = self:map(path, t, ALGO_KEYS, ALGO_ORDER, "an algorithm entry")
  if not self:written(path .. ".module") then
    self:fail(self:key_mark(path), path, "missing key 'module' (the algorithm's Lua module, e.g. " ..
      "kernbench.ccl.algorithms.lrab_hierarchical_allreduce)")
  end
  if a.params ~= nil then
    if is_map(a.params) then
      a.params = copy(a.params)
    else
      self:fail(self:mark(path .. ".params"), path .. ".params", "expected a map of parameters (name: value), got %s",
        show(a.params))
      a.params = nil
    end
  end
  if a.root_cube ~= nil then
    self.warnings[#self.warnings + 1] = ("%s: %s.root_cube: ignored (the original's unread placeholder); " ..
      "root: center, corner or a cube index chooses the root cube"):format(self:key_mark(path .. ".root_cube"), path)
    a.root_cube = nil
  end
  return a
end

--- Reads and checks the ccl.yaml at `path` (default: M.find()'s). Returns
-- {source, defaults, algorithms = {[name] = entry}, names (in file order),
-- warnings (a list of "file:line:col: key.path: message" to print)}.
-- Raises "file:line:col: key.path: message", a line per problem (at most
-- 20), when the file cannot be read or breaks the schema.
function M.load(path)
  if path == nil then
    local why
    path, why = M.find()
    if not path then error("ccl: " .. why, 2) end
  end
  local doc, err = yaml.load(path)
  if not doc then error(err, 0) end
  local r = reader(doc)
  local root = doc.value
  if root == nil then root = {} end
  if not is_map(root) then
    error(("%s: expected a map with the keys defaults and algorithms, got %s"):format(r:mark(""), show(root)), 0)
  end
  local cfg = { source = path, defaults = {}, algorithms = {}, names = {}, warnings = r.warnings }
  local TOP = { defaults = true, algorithms = true }
  for _, k in ipairs(r:keys("", root)) do r:known("", k, TOP, { "defaults", "algorithms" }, "ccl.yaml") end
  local d = root.defaults or {} -- `defaults:` without a value: none
  if is_map(d) then
    cfg.defaults = r:map("defaults", d, DEFAULT_KEYS, DEFAULT_ORDER, "defaults")
  else
    r:fail(r:mark("defaults"), "defaults", "expected a map (algorithm: ..., buffer_kind: ...), got %s", show(d))
  end
  local algos = root.algorithms
  if algos == nil and not r:written("algorithms") then
    r:fail(r:mark(""), "algorithms", "missing: a map of algorithm name -> {module: ..., ...}")
  elseif algos ~= nil and not is_map(algos) then
    r:fail(r:mark("algorithms"), "algorithms", "expected a map of algorithm name -> {module: ..., ...}, got %s",
      show(algos))
  else
    for _, name in ipairs(r:keys("algorithms", algos or {})) do
      cfg.names[#cfg.names + 1] = name
      cfg.algorithms[name] = r:algorithm(name, (algos or {})[name])
    end
    if #cfg.names == 0 then
      r:fail(r:mark("algorithms"), "algorithms", "empty: name at least one algorithm")
    end
    local want = cfg.defaults.algorithm
    if want and #cfg.names > 0 and not r:written("algorithms." .. want) then
      r:fail(r:mark("defaults.algorithm"), "defaults.algorithm", "'%s' is not an entry of algorithms (known: %s)",
        want, table.concat(cfg.names, ", "))
    end
  end
  if #r.errors > 0 then
    local n = #r.errors
    local shown = { table.unpack(r.errors, 1, math.min(n, MAX_ERRORS)) }
    if n > MAX_ERRORS then shown[#shown + 1] = ("... and %d more"):format(n - MAX_ERRORS) end
    error(table.concat(shown, "\n"), 0)
  end
  return cfg
end

--- The configuration of algorithm `name` (default: defaults.algorithm):
-- the entry's keys over defaults' (spec §4.2), without defaults.algorithm
-- and the ignored root_cube, plus `name` and `source` (the file). Keys that
-- neither sets are absent: the IPCQ install's defaults apply (docs/ipcq.md).
-- world_size is the entry's, else defaults', else nil: the caller then
-- takes the topology's SIP count (spec §3.1 step 3).
function M.resolve(cfg, name)
  if type(cfg) ~= "table" or type(cfg.algorithms) ~= "table" then
    error("ccl.resolve: expected a configuration from kernbench.ccl.config.load", 2)
  end
  local known = table.concat(cfg.names or {}, ", ")
  if name == nil then name = cfg.defaults.algorithm end
  if name == nil then
    error(("ccl: %s: which algorithm? defaults.algorithm is not set and no name was given (known: %s)"):format(
      cfg.source, known), 2)
  end
  local entry = cfg.algorithms[name]
  if not entry then
    error(("ccl: %s: no algorithm '%s' (known: %s)"):format(cfg.source, tostring(name), known), 2)
  end
  local r = {}
  for k, v in pairs(cfg.defaults) do
    if k ~= "algorithm" then r[k] = v end
  end
  for k, v in pairs(entry) do
    if k ~= "root_cube" then r[k] = copy(v) end
  end
  r.world_size = entry.world_size or cfg.defaults.world_size
  r.name, r.source = name, cfg.source
  return r
end

-- The command line's --ccl FILE: what is wrong in it is the user's mistake,
-- a usage error (kernbench.usage: one line per problem, exit status 2),
-- found when the file is first read, as a --set is when the topology is.
do
  local load_file = M.load
  function M.load(path)
    local ok, r = pcall(load_file, path)
    if ok then return r end
    local cli = rawget(_G, "kb") and kb.ccl_path
    if cli and (path == nil or path == cli) then require("kernbench.usage").error("--ccl %s", tostring(r)) end
    error(r, 0)
  end
end

return M
