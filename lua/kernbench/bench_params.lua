--- Bench parameters (docs/benches.md): a bench declares them as
--   params = { m = { default = 128, help = "rows of A", env = "GEMM_M" }, ... }
-- and receives them checked and typed as run(torch, params). A value comes
-- from `--param m=256` (repeatable, before the bench), else from the
-- declared environment variable, else from the default.
local usage = require "kernbench.usage"

local M = {}

local TYPES = { integer = true, number = true, boolean = true, string = true }

--- A usage error (kernbench.usage): the command line prints it with the
-- bench's usage line and exits 2.
M.Usage = usage.Usage

function M.usage_error(fmt, ...)
  usage.raise(fmt:format(...), nil, usage.BENCH_HINT)
end

M.is_usage_error = usage.is

--- Raises the usage error of a parameter the bench checks itself (a
-- value its declaration cannot express: an algorithm module, a root that
-- depends on the topology): `--param KEY=VALUE: WHY`, WHY listing the
-- valid choices.
function M.invalid(key, value, why)
  M.usage_error("--param %s=%s: %s", key, tostring(value), why)
end

--- Makes the output directory that parameter `key` names (with its parents)
-- and checks that the bench can write in it, before anything is simulated: a
-- path that is a file, or a directory nobody may write in, is the user's
-- mistake (a usage error naming the parameter), not a failure at the end of
-- a long run. Returns dir.
function M.out_dir(key, dir)
  local q = "'" .. tostring(dir):gsub("'", "'\\''") .. "'"
  local why
  if dir == "" then
    why = "an empty directory name"
  elseif os.execute(("test -e %s && ! test -d %s"):format(q, q)) == true then
    why = "it exists and is not a directory"
  elseif os.execute(("mkdir -p %s 2>/dev/null"):format(q)) ~= true then
    why = "cannot create that directory (a parent is not a directory, or it is not writable)"
  elseif os.execute(("test -w %s -a -x %s"):format(q, q)) ~= true then
    why = "that directory is not writable"
  end
  if why then M.invalid(key, dir, why) end
  return dir
end

--- The grid a bench's `pes` and `cubes` parameters ask for on topology
-- parameters P (torch.spec): 0 is every PE of a cube / every cube of a SIP;
-- more than the topology has is a usage error naming the parameter. Either
-- key may be absent from p (then all). Returns pes, cubes.
function M.grid(P, p)
  if (p.pes or 0) > P.pes_per_cube then
    M.invalid("pes", p.pes, ("a cube of the topology has %d PEs: expected 0 (all) .. %d"):format(P.pes_per_cube,
      P.pes_per_cube))
  end
  if (p.cubes or 0) > P.cubes_per_sip then
    M.invalid("cubes", p.cubes, ("a SIP of the topology has %d cubes: expected 0 (all) .. %d"):format(P.cubes_per_sip,
      P.cubes_per_sip))
  end
  local pes = (p.pes or 0) > 0 and p.pes or P.pes_per_cube
  local cubes = (p.cubes or 0) > 0 and p.cubes or P.cubes_per_sip
  return pes, cubes
end

local function type_of(value)
  if math.type(value) == "integer" then return "integer" end
  return type(value)
end

--- Why the declaration `params` of a bench is wrong, or nil. Each entry:
-- default (required; its Lua type is the parameter's type unless `type`
-- says "number" for an integer default), help (a line), optional env,
-- choices (a list of allowed values), min and max (numbers), labels (what
-- the run's header prints for special values: {[0] = "all"}), multiple (an
-- integer parameter's values are multiples of it: a ring slot's 16 bytes).
function M.problem(params)
  if params == nil then return nil end
  if type(params) ~= "table" then return "field 'params' must be a table of parameter declarations" end
  for key, p in pairs(params) do
    if type(key) ~= "string" or not key:match("^[%a_][%w_]*$") then
      return ("params: key %s must be an identifier (letters, digits, '_')"):format(tostring(key))
    end
    local where = "params." .. key
    if type(p) ~= "table" then return where .. " must be a table {default =, help =}" end
    if p.default == nil then return where .. ": 'default' is missing" end
    local ty = p.type or type_of(p.default)
    if not TYPES[ty] then return ("%s: type '%s' is not integer, number, boolean or string"):format(where, ty) end
    if not (ty == type_of(p.default) or (ty == "number" and type(p.default) == "number")) then
      return ("%s: the default %s is not a %s"):format(where, tostring(p.default), ty)
    end
    if type(p.help) ~= "string" or not p.help:match("%S") then return where .. ": 'help' (one line) is missing" end
    if p.env ~= nil and (type(p.env) ~= "string" or not p.env:match("^[%u_][%u%d_]*$")) then
      return where .. ": 'env' must be an environment variable name (A-Z, 0-9, '_')"
    end
    if p.choices ~= nil and (type(p.choices) ~= "table" or #p.choices == 0) then
      return where .. ": 'choices' must be a non-empty list"
    end
    if p.multiple ~= nil and (ty ~= "integer" or math.type(p.multiple) ~= "integer" or p.multiple < 1) then
      return where .. ": 'multiple' must be an integer >= 1, for an integer parameter"
    end
    if p.labels ~= nil and type(p.labels) ~= "table" then
      return where .. ": 'labels' must be a table {[value] = \"what the run's header prints\"}"
    end
  end
  return nil
end

local function type_name(p) return p.type or type_of(p.default) end

--- The value of string s as parameter p's type, or nil and why.
local function convert(p, s)
  local ty = type_name(p)
  local v
  if ty == "integer" then
    v = s:match("^[+-]?%d+$") and math.tointeger(tonumber(s))
    if not v then return nil, "expected an integer" end
  elseif ty == "number" then
    v = tonumber(s)
    if not v or v ~= v or v == math.huge or v == -math.huge then return nil, "expected a finite number" end
    v = v + 0.0 -- a number parameter is always a float
  elseif ty == "boolean" then
    local b = { ["true"] = true, ["1"] = true, yes = true, on = true,
                ["false"] = false, ["0"] = false, no = false, off = false }
    v = b[s:lower()]
    if v == nil then return nil, "expected true or false (also 1/0, yes/no, on/off)" end
  else
    v = s
  end
  if p.choices then
    local ok = false
    for _, c in ipairs(p.choices) do ok = ok or c == v end
    if not ok then
      local cs = {}
      -- an empty choice ("use the default") would print as nothing between commas
      for i, c in ipairs(p.choices) do cs[i] = c == "" and "'' (empty)" or tostring(c) end
      return nil, "expected one of " .. table.concat(cs, ", ")
    end
  end
  if p.min and v < p.min then return nil, ("expected at least %s"):format(tostring(p.min)) end
  if p.max and v > p.max then return nil, ("expected at most %s"):format(tostring(p.max)) end
  if p.multiple and v % p.multiple ~= 0 then return nil, ("expected a multiple of %d"):format(p.multiple) end
  return v
end

--- The sorted keys of a declaration.
function M.keys(params)
  local keys = {}
  for k in pairs(params or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

--- The parameters of bench b from the "key=value" strings `given` (the
-- command line's --param), the environment and the defaults: a table of
-- typed values, and the source of each ("param", "env NAME", "default").
-- Raises a usage error for an unknown key, a key given twice or a bad value.
function M.resolve(b, given, getenv)
  getenv = getenv or os.getenv
  local decl = b.params or {}
  local values, sources, seen = {}, {}, {}
  for _, kv in ipairs(given or {}) do
    local key, text = kv:match("^([^=]*)=(.*)$")
    if not key or key == "" then M.usage_error("--param '%s': expected KEY=VALUE", kv) end
    local p = decl[key]
    if not p then
      local known = M.keys(decl)
      M.usage_error("--param %s: bench %s has no parameter '%s' (%s)", kv, b.name, key,
        #known > 0 and ("its parameters: " .. table.concat(known, ", ")) or "it takes none")
    end
    if seen[key] then M.usage_error("--param %s: '%s' given twice", kv, key) end
    seen[key] = true
    local v, why = convert(p, text)
    if v == nil then M.usage_error("--param %s: %s for %s (%s)", kv, why, key, p.help) end
    values[key], sources[key] = v, "param"
  end
  for _, key in ipairs(M.keys(decl)) do
    local p = decl[key]
    if values[key] == nil and p.env and getenv(p.env) and getenv(p.env) ~= "" then
      local v, why = convert(p, getenv(p.env))
      if v == nil then M.usage_error("%s=%s: %s for parameter %s of bench %s", p.env, getenv(p.env), why, key, b.name) end
      values[key], sources[key] = v, "env " .. p.env
    elseif values[key] == nil then
      values[key], sources[key] = p.default, "default"
    end
  end
  return values, sources
end

--- Lines describing the parameters of b (for `kernbench help NAME` and
-- `kernbench list --verbose`): "<indent>key=default  type, limits, env:
-- help", the key=default column aligned.
function M.describe(b, indent)
  local lines, left, w = {}, {}, 0
  local keys = M.keys(b.params)
  for i, key in ipairs(keys) do
    left[i] = key .. "=" .. tostring(b.params[key].default)
    w = math.max(w, #left[i])
  end
  for i, key in ipairs(keys) do
    local p = b.params[key]
    local about = { type_name(p) }
    if p.choices then
      local cs = {}
      for j, c in ipairs(p.choices) do cs[j] = tostring(c) end
      about[#about + 1] = "one of " .. table.concat(cs, "|")
    end
    if p.min then about[#about + 1] = ">= " .. tostring(p.min) end
    if p.max then about[#about + 1] = "<= " .. tostring(p.max) end
    if p.multiple then about[#about + 1] = "a multiple of " .. p.multiple end
    if p.env then about[#about + 1] = "env " .. p.env end
    lines[i] = ("%s%-" .. w .. "s  %s: %s"):format(indent, left[i], table.concat(about, ", "), p.help)
  end
  return lines
end

return M
