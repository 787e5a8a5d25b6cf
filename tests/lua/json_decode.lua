--- A small strict JSON decoder (RFC 8259 values) for the tests: errors on
-- anything malformed or on trailing text. An object keeps its keys in order
-- in its metatable (getmetatable(obj).keys).
local function json_decode(text)
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
return json_decode
