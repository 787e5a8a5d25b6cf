--- A small JSON encoder with deterministic key order, for reports (probe,
-- bench results), and a strict decoder (M.decode). Objects are
-- {__obj = {{key, value}, ...}} (json.obj builds one) or plain tables with
-- string keys (sorted); sequences are
-- arrays; nil is null; NaN and infinities are null.
local M = {}

--- A finite number as text in its shortest exact form: integers (and
-- integral floats below 2^53) in decimal, other floats as the shortest
-- %.Ng (N = 1 .. 17) that reads back as the same double. The one number
-- format of every CSV and JSON writer of the Lua side (the C side's is
-- kb_json_write_number, src/trace/val.c, the same digits).
function M.number(x)
  if math.type(x) == "integer" then return ("%d"):format(x) end
  if x == math.floor(x) and math.abs(x) < 2 ^ 53 then return ("%d"):format(math.tointeger(x)) end
  -- for a normal double %.15g is the shortest form whenever one of at most
  -- 15 digits exists (%g drops trailing zeros), so only 15, 16 and 17 need
  -- trying; a subnormal one (fewer bits) may read back from fewer digits
  local from = math.abs(x) < 2.2250738585072014e-308 and 1 or 15
  for p = from, 16 do
    local s = ("%." .. p .. "g"):format(x)
    if tonumber(s) == x then return s end
  end
  return ("%.17g"):format(x)
end

local function num(x)
  if x ~= x or x == math.huge or x == -math.huge then return "null" end
  return M.number(x)
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

--- Decodes JSON text (RFC 8259 values), strictly: anything malformed or
-- trailing text is an error naming the byte. An object keeps its keys in
-- order in its metatable (getmetatable(obj).keys); null is nil.
function M.decode(text)
  local pos = 1
  local function fail(msg) error(("JSON: %s at byte %d"):format(msg, pos), 0) end
  local function ws() pos = text:find("[^ \t\r\n]", pos) or #text + 1 end
  local value
  local function str()
    pos = pos + 1 -- opening quote
    local out = {}
    while true do
      local c = text:sub(pos, pos)
      if c == "" then fail("unterminated string") end
      if c == '"' then pos = pos + 1 break end
      if c:byte() < 0x20 then fail("control character in string") end
      if c == "\\" then
        local e = text:sub(pos + 1, pos + 1)
        local simple = { ['"'] = '"', ["\\"] = "\\", ["/"] = "/", b = "\b", f = "\f", n = "\n",
                         r = "\r", t = "\t" }
        if simple[e] then
          out[#out + 1] = simple[e]
          pos = pos + 2
        elseif e == "u" then
          local hex = text:sub(pos + 2, pos + 5)
          if not hex:match("^%x%x%x%x$") then fail("bad \\u escape") end
          out[#out + 1] = utf8.char(tonumber(hex, 16))
          pos = pos + 6
        else
          fail("bad escape")
        end
      else
        out[#out + 1] = c
        pos = pos + 1
      end
    end
    return table.concat(out)
  end
  function value()
    ws()
    local c = text:sub(pos, pos)
    if c == "{" then
      pos = pos + 1
      local obj, keys = {}, {}
      ws()
      if text:sub(pos, pos) == "}" then pos = pos + 1 return obj, keys end
      while true do
        ws()
        if text:sub(pos, pos) ~= '"' then fail("object key expected") end
        local k = str()
        ws()
        if text:sub(pos, pos) ~= ":" then fail("':' expected") end
        pos = pos + 1
        obj[k] = value()
        keys[#keys + 1] = k
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "}" then return setmetatable(obj, { keys = keys }) end
        if d ~= "," then fail("',' or '}' expected") end
      end
    elseif c == "[" then
      pos = pos + 1
      local arr = {}
      ws()
      if text:sub(pos, pos) == "]" then pos = pos + 1 return arr end
      while true do
        arr[#arr + 1] = value()
        ws()
        local d = text:sub(pos, pos)
        pos = pos + 1
        if d == "]" then return arr end
        if d ~= "," then fail("',' or ']' expected") end
      end
    elseif c == '"' then
      return str()
    elseif text:sub(pos, pos + 3) == "true" then pos = pos + 4 return true
    elseif text:sub(pos, pos + 4) == "false" then pos = pos + 5 return false
    elseif text:sub(pos, pos + 3) == "null" then pos = pos + 4 return nil
    else
      local num = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
      if not num or num == "" or not text:match("^-?%d", pos) then fail("value expected") end
      pos = pos + #num
      return tonumber(num) or fail("bad number")
    end
  end
  local v = value()
  ws()
  if pos <= #text then fail("trailing text") end
  return v
end

return M
