--- docs/topology.md documents every key of the default topology and every
-- builtin implementation with each of its attributes.
local lu = require "luaunit"

TestTopologyDoc = {}

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("a")
  f:close()
  return s
end

local doc = read("../../docs/topology.md")

-- Leaf keys of a YAML file, one per line "key: value" or "{ k: v, ... }".
local function keys_of(text)
  local keys = {}
  for line in text:gmatch("[^\n]+") do
    line = line:gsub("#.*$", "")
    for k in line:gmatch("([%a_][%w_]*)%s*:") do keys[k] = true end
  end
  return keys
end

function TestTopologyDoc:test_every_key_of_default_yaml_is_documented()
  local missing = {}
  for k in pairs(keys_of(read("../../topologies/default.yaml"))) do
    if not doc:find(k, 1, true) then missing[#missing + 1] = k end
  end
  table.sort(missing)
  lu.assertEquals(missing, {})
end

function TestTopologyDoc:test_every_implementation_and_attribute_is_documented()
  local missing = {}
  for _, impl in ipairs(kb.topology.implementations()) do
    local section = doc:match("## Implementations.*$") or ""
    local row = section:match("\n|[^\n]*`" .. impl.name:gsub("%.", "%%.") .. "`[^\n]*")
    if not row then
      missing[#missing + 1] = impl.name
    else
      for _, a in ipairs(impl.attrs) do
        if not row:find("`" .. a.name .. "`", 1, true) then
          missing[#missing + 1] = impl.name .. "." .. a.name
        end
      end
    end
  end
  lu.assertEquals(missing, {})
end
