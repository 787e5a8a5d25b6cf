--- kb.pretty(v[, opts]): a value as the REPL prints it (docs/repl.md).
-- Tables as nested Lua literals, keys sorted, at most opts.depth levels
-- (default 3) and opts.items entries per table (default 20, then
-- "... (N more)"); host tensors as shape, dtype, device and their first
-- values; topologies as their summary; simulations, processes, events and
-- other values with a __tostring as that text; never "table: 0x...".
-- Top-level strings and numbers print as print prints them.
local optkeys = require "kernbench.options"

local M = {}

M.DEPTH, M.ITEMS, M.VALUES, M.WIDTH, M.STRING = 3, 20, 8, 80, 200

local function quote(s, limit)
  local more = #s - limit
  if more > 0 then s = s:sub(1, limit) end
  s = s:gsub('[%c"\\]', function(c)
    local esc = { ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r", ['"'] = '\\"', ["\\"] = "\\\\" }
    return esc[c] or ("\\%03d"):format(c:byte())
  end)
  return '"' .. s .. '"' .. (more > 0 and ("... (%d more bytes)"):format(more) or "")
end

local function num(x)
  if math.type(x) == "float" then
    if x ~= x then return "0/0" end
    if x == math.huge then return "math.huge" end
    if x == -math.huge then return "-math.huge" end
  end
  return tostring(x)
end

local function mt_field(v, k)
  local mt = getmetatable(v)
  return type(mt) == "table" and rawget(mt, k) or nil
end

-- Host tensors: shape, dtype, device and the first values in row-major order.
local function tensor_text(t, opts)
  local shape, n = t.shape, t:numel()
  local flat = n > 0 and t:reshape({ n }) or nil
  local vals = {}
  for i = 0, math.min(n, opts.values) - 1 do
    local x = flat[i]
    vals[#vals + 1] = math.type(x) == "float" and ("%.6g"):format(x) or tostring(x)
  end
  if n > opts.values then vals[#vals + 1] = ("... (%d more)"):format(n - opts.values) end
  return ("tensor{shape = {%s}, dtype = %s, device = cpu, values = {%s}}"):format(table.concat(shape, ", "),
    t.dtype, table.concat(vals, ", "))
end

-- Values shown by a summary rather than their contents.
local function special(v, opts)
  local name = mt_field(v, "__name")
  if name == "kernbench.tensor" then return tensor_text(v, opts) end
  if name == "kernbench.topology" then
    local ok, s = pcall(function() return v:summary() end)
    if ok and type(s) == "string" then return (s:gsub("\n+$", "")) end
  end
  if name == "kernbench.sim" then
    local text = tostring(v)
    local ok, t = pcall(function() return v:topology() end)
    if ok and t then text = text .. " on topology " .. t.name end
    return text
  end
  if mt_field(v, "__tostring") then
    local ok, s = pcall(tostring, v)
    if ok and type(s) == "string" then return s end
  end
  if type(v) == "userdata" then return name and ("<userdata %s>"):format(name) or "<userdata>" end
  if type(v) == "function" then
    local info = debug.getinfo(v, "S")
    return info.what == "C" and "<function (C)>" or ("<function %s:%d>"):format(info.short_src, info.linedefined)
  end
  if type(v) == "thread" then return ("<coroutine %s>"):format(coroutine.status(v)) end
end

local key_rank = { number = 1, string = 2, boolean = 3 }
local function key_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return (key_rank[ta] or 4) < (key_rank[tb] or 4) end
  if ta == "number" or ta == "string" then return a < b end
  if ta == "boolean" then return (not a) and b end
  return tostring(a) < tostring(b)
end

local format

local function key_text(k, opts, depth, path)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return k end
  return "[" .. format(k, opts, depth, path) .. "]"
end

-- A table as {a, b, k = v}: the array part 1..n in order, then the other
-- keys sorted; on one line when it fits opts.width, else one entry a line.
local function table_text(t, opts, depth, path)
  if path[t] then return "<cycle>" end
  if depth >= opts.depth then
    local n = 0
    for _ in next, t do n = n + 1 end
    return n == 0 and "{}" or ("{...} (%d entr%s)"):format(n, n == 1 and "y" or "ies")
  end
  path[t] = true
  local n = 0
  while rawget(t, n + 1) ~= nil do n = n + 1 end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, key_less)
  local items, total = {}, n + #keys
  for i = 1, n do
    if #items >= opts.items then break end
    items[#items + 1] = format(rawget(t, i), opts, depth + 1, path)
  end
  for _, k in ipairs(keys) do
    if #items >= opts.items then break end
    items[#items + 1] = key_text(k, opts, depth + 1, path) .. " = " .. format(rawget(t, k), opts, depth + 1, path)
  end
  if total > #items then items[#items + 1] = ("... (%d more)"):format(total - #items) end
  path[t] = nil
  if #items == 0 then return "{}" end
  local line = "{" .. table.concat(items, ", ") .. "}"
  if #line + depth * 2 <= opts.width and not line:find("\n", 1, true) then return line end
  -- broken over lines: positional one-line items packed up to the width,
  -- keyed and multi-line items one a line
  local pad, lines, cur = string.rep("  ", depth + 1), {}, nil
  for i, s in ipairs(items) do
    local packable = i <= n and not s:find("\n", 1, true)
    if packable and cur and #cur + #s + 2 <= opts.width then
      cur = cur .. ", " .. s
    else
      if cur then lines[#lines + 1] = cur end
      cur = pad .. s
      if not packable then lines[#lines + 1] = cur; cur = nil end
    end
  end
  if cur then lines[#lines + 1] = cur end
  return "{\n" .. table.concat(lines, ",\n") .. "\n" .. string.rep("  ", depth) .. "}"
end

function format(v, opts, depth, path)
  local ty = type(v)
  if ty == "string" then return quote(v, opts.string) end
  if ty == "number" then return num(v) end
  if ty == "nil" or ty == "boolean" then return tostring(v) end
  local s = special(v, opts)
  if s then return s end
  return table_text(v, opts, depth, path)
end

local function options(o)
  o = o or {}
  return { depth = o.depth or M.DEPTH, items = o.items or M.ITEMS, values = o.values or M.VALUES,
           width = o.width or M.WIDTH, string = o.string or M.STRING }
end

--- v as a Lua literal (strings quoted), kb.pretty's form.
function M.format(v, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(("kb.pretty: argument 2 (opts) must be a table such as {depth = 3} or nil, got %s"):format(type(opts)), 2)
  end
  optkeys.check("kb.pretty", opts, { "depth", "items", "values", "width", "string" }, 2)
  return format(v, options(opts), 0, {})
end

--- One REPL result line: each value as print shows strings, numbers,
-- booleans and nil, the others formatted; separated by tabs.
function M.show(...)
  local opts, parts = options(), {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    local ty = type(v)
    if ty == "string" or ty == "number" or ty == "boolean" or ty == "nil" then parts[i] = tostring(v)
    else parts[i] = format(v, opts, 0, {}) end
  end
  return table.concat(parts, "\t")
end

return M
