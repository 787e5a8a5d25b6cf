--- Named arguments for collective algorithms and their kernels (docs/ccl.md).
-- A kernel takes its arguments by position; an algorithm declares their
-- names once, in the order the kernel takes them (after tl and the tensor),
-- and everything that builds or reads them goes by name:
--
--   local args = require "kernbench.ccl.args"
--   M.ARGS = args.declare("my_allreduce", { "n_elem", "chunk", { "op", default = 0 }, "dtype" })
--   local a = args.pack(M.ARGS, { n_elem = 64, chunk = 32, dtype = 0 })  -- op: its default
--   a.chunk                          --> 32 (a name it does not declare raises)
--   torch.launch(kernel, grid, tensor, args.values(a))  --> 64, 32, 0, 0
--
-- A missing or an unknown name is an error naming the algorithm, the
-- argument and the names it expects.
local M = {}

local PACKED = setmetatable({}, { __mode = "k" }) -- packed table -> its declaration

local function expected(decl)
  local shown = {}
  for i, name in ipairs(decl.names) do
    shown[i] = decl.optional[name] and (name .. " (optional)") or name
  end
  return table.concat(shown, ", ")
end

--- A declaration of `algorithm`'s arguments: `list` holds, in the order the
-- kernel takes them, each argument's name, or {name, default = value} for
-- an optional one (its default when a caller leaves it out).
function M.declare(algorithm, list)
  if type(algorithm) ~= "string" or algorithm == "" then
    error("ccl.args.declare: the algorithm's name must be a non-empty string", 2)
  end
  if type(list) ~= "table" or #list == 0 then
    error(("ccl.args.declare: %s: expected a list of argument names"):format(algorithm), 2)
  end
  local decl = { algorithm = algorithm, names = {}, index = {}, optional = {}, defaults = {} }
  for i, e in ipairs(list) do
    local name = type(e) == "table" and e[1] or e
    if type(name) ~= "string" or not name:match("^[%a_][%w_]*$") then
      error(("ccl.args.declare: %s: argument %d must be a name or {name, default = value}, got %s"):format(
        algorithm, i, tostring(name)), 2)
    end
    if decl.index[name] then
      error(("ccl.args.declare: %s: argument '%s' is declared twice"):format(algorithm, name), 2)
    end
    if type(e) == "table" then
      if e.default == nil then
        error(("ccl.args.declare: %s: optional argument '%s' needs a default"):format(algorithm, name), 2)
      end
      decl.optional[name], decl.defaults[name] = true, e.default
    end
    decl.names[i], decl.index[name] = name, i
  end
  return decl
end

--- Whether `decl` is a declaration made by M.declare.
function M.is_declaration(decl)
  return type(decl) == "table" and type(decl.algorithm) == "string" and type(decl.names) == "table"
    and type(decl.index) == "table" and type(decl.defaults) == "table"
end

--- `named` (name -> value) checked against `decl` and completed with the
-- defaults: every required name given, no name the declaration lacks.
-- Returns the packed arguments, read by name (reading or setting an
-- undeclared name raises) and passed to a kernel by M.values.
function M.pack(decl, named)
  if not M.is_declaration(decl) then error("ccl.args.pack: expected a declaration from ccl.args.declare", 2) end
  if type(named) ~= "table" then
    error(("ccl.args: %s: expected a table of named arguments (%s), got %s"):format(decl.algorithm,
      expected(decl), type(named)), 2)
  end
  for k in pairs(named) do
    if not decl.index[k] then
      error(("ccl.args: %s: unknown argument '%s' (expected: %s)"):format(decl.algorithm, tostring(k),
        expected(decl)), 2)
    end
  end
  local out = {}
  for _, name in ipairs(decl.names) do
    local v = named[name]
    if v == nil then v = decl.defaults[name] end
    if v == nil then
      error(("ccl.args: %s: missing argument '%s' (expected: %s)"):format(decl.algorithm, name, expected(decl)), 2)
    end
    out[name] = v
  end
  setmetatable(out, { __index = function(_, k)
    error(("ccl.args: %s has no argument '%s' (expected: %s)"):format(decl.algorithm, tostring(k), expected(decl)), 2)
  end, __newindex = function(_, k)
    error(("ccl.args: %s has no argument '%s' to set (expected: %s)"):format(decl.algorithm, tostring(k),
      expected(decl)), 2)
  end })
  PACKED[out] = decl
  return out
end

--- The declaration `packed` (from M.pack) was made with, or nil for
-- anything else.
function M.declaration_of(packed)
  return type(packed) == "table" and PACKED[packed] or nil
end

--- The values of one or more packed argument tables, in their declared
-- order, one after the other: what the kernel takes after the tensor.
function M.values(...)
  local out, n = {}, 0
  for i = 1, select("#", ...) do
    local p = select(i, ...)
    local decl = M.declaration_of(p)
    if not decl then
      error(("ccl.args.values: argument %d is not packed arguments (ccl.args.pack)"):format(i), 2)
    end
    for _, name in ipairs(decl.names) do
      n = n + 1
      out[n] = rawget(p, name)
    end
  end
  return table.unpack(out, 1, n)
end

--- The SIP group every algorithm kernel of kernbench.ccl.run takes last
-- (docs/ccl.md): this SIP's rank, the SIP topology's kind and its grid.
M.SIP_GROUP = M.declare("sip group", { "sip_rank", "sip_topo_kind", "sip_topo_w", "sip_topo_h" })

return M
