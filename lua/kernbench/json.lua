--- A small JSON encoder with deterministic key order, for reports (probe,
-- bench results). Objects are {__obj = {{key, value}, ...}} (json.obj
-- builds one) or plain tables with string keys (sorted); sequences are
-- arrays; nil is null; NaN and infinities are null.
local M = {}

local function num(x)
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  if math.type(x) == "integer" then return ("%d"):format(x) end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return ("%d"):format(math.tointeger(x)) end
  for _, f in ipairs { "%.15g", "%.16g" } do
    local s = f:format(x)
    if tonumber(s) == x then return s end
  end
  return ("%.17g"):format(x)
end

local ESC = { ['"'] = '\\"', ["\\"] = "\\\\", ["\b"] = "\\b", ["\f"] = "\\f", ["\n"] = "\\n",
              ["\r"] = "\\r", ["\t"] = "\\t" }

local function str(s)
  return '"' .. s:gsub('[%c"\\]', function(ch)
    return ESC[ch] or ("\\u%04x"):format(ch:byte())
  end) .. '"'
end

local function encode(v, path, depth)
  local ty = type(v)
  if v == nil then return "null"
  elseif ty == "boolean" then return tostring(v)
  elseif ty == "number" then return num(v)
  elseif ty == "string" then return str(v)
  elseif ty == "table" then
    if depth > 100 then error(("json: %s nests deeper than 100 levels (a cycle?)"):format(path), 0) end
    local parts = {}
    if v.__obj then
      for i, kv in ipairs(v.__obj) do parts[i] = str(kv[1]) .. ":" .. encode(kv[2], path .. "." .. kv[1], depth + 1) end
      return "{" .. table.concat(parts, ",") .. "}"
    end
    local n, strings, others = #v, {}, false
    for k in pairs(v) do
      if type(k) == "string" then strings[#strings + 1] = k
      elseif math.type(k) ~= "integer" or k < 1 or k > n then others = true end
    end
    if others or (#strings > 0 and n > 0) then
      error(("json: %s mixes array items and keys, or has keys that are not strings"):format(path), 0)
    end
    if #strings > 0 then -- a plain table with string keys: an object, keys sorted
      table.sort(strings)
      for i, k in ipairs(strings) do parts[i] = str(k) .. ":" .. encode(v[k], path .. "." .. k, depth + 1) end
      return "{" .. table.concat(parts, ",") .. "}"
    end
    for i = 1, n do parts[i] = encode(v[i], ("%s[%d]"):format(path, i), depth + 1) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  error(("json: %s is a %s, which JSON cannot hold"):format(path, ty), 0)
end

--- The JSON text of v: nil is null; a table built by json.obj keeps its
-- key order; a plain table is an array (keys 1..n) or an object (string
-- keys, sorted). Raises naming the path (e.g. "result.points[3].f") of a
-- value JSON cannot hold (a function, a userdata, a mixed table).
function M.encode(v, root) return encode(v, root or "value", 0) end

--- An object with keys in the given order: json.obj({"a", 1}, {"b", 2}).
function M.obj(...) return { __obj = { ... } } end

return M
