--- A small JSON encoder with deterministic key order, for reports (probe,
-- milestone benches). Objects are {__obj = {{key, value}, ...}} (json.obj
-- builds one); other tables are arrays; nil is null; NaN and infinities
-- are null.
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

--- The JSON text of v.
function M.encode(v)
  local ty = type(v)
  if v == nil then return "null"
  elseif ty == "boolean" then return tostring(v)
  elseif ty == "number" then return num(v)
  elseif ty == "string" then return str(v)
  elseif ty == "table" then
    local parts = {}
    if v.__obj then
      for i, kv in ipairs(v.__obj) do parts[i] = str(kv[1]) .. ":" .. M.encode(kv[2]) end
      return "{" .. table.concat(parts, ",") .. "}"
    end
    for i = 1, #v do parts[i] = M.encode(v[i]) end
    return "[" .. table.concat(parts, ",") .. "]"
  end
  error("json: cannot encode a " .. ty)
end

--- An object with keys in the given order: json.obj({"a", 1}, {"b", 2}).
function M.obj(...) return { __obj = { ... } } end

return M
