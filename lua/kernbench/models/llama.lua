--- Llama-family model shapes (docs/models.md, "A decoder layer"): the
-- shipped models by name, or a Lua file returning one table of the same
-- fields.
--
--   local llama = require "kernbench.models.llama"
--   local m = llama.model("llama-3-70b")     -- or llama.model("my_model.lua")
--
-- Fields: name, hidden (D), heads (H, query heads), kv_heads (G, H a
-- multiple), head_dim (d, even), ffn (F, the SwiGLU width), rope_theta,
-- norm_eps.
local M = {}

M.MODELS = {
  ["llama-3-70b"] = { name = "llama-3-70b", hidden = 8192, heads = 64, kv_heads = 8, head_dim = 128, ffn = 28672,
                      rope_theta = 500000, norm_eps = 1e-5 },
  ["llama-3-8b"] = { name = "llama-3-8b", hidden = 4096, heads = 32, kv_heads = 8, head_dim = 128, ffn = 14336,
                     rope_theta = 500000, norm_eps = 1e-5 },
  -- reduced shapes for checking a layer against the host reference in data mode
  ["llama-tiny"] = { name = "llama-tiny", hidden = 256, heads = 8, kv_heads = 4, head_dim = 32, ffn = 512,
                     rope_theta = 10000, norm_eps = 1e-5 },
}

local INTS = { "hidden", "heads", "kv_heads", "head_dim", "ffn" }

local function check(m, where)
  if type(m) ~= "table" then error(("%s: a model is a table, got %s"):format(where, type(m)), 0) end
  for _, k in ipairs(INTS) do
    if math.type(m[k]) ~= "integer" or m[k] < 1 then
      error(("%s: '%s' must be an integer >= 1, got %s"):format(where, k, tostring(m[k])), 0)
    end
  end
  if m.heads % m.kv_heads ~= 0 then
    error(("%s: heads (%d) must be a multiple of kv_heads (%d)"):format(where, m.heads, m.kv_heads), 0)
  end
  if m.head_dim % 2 ~= 0 then error(("%s: head_dim (%d) must be even (rotary pairs)"):format(where, m.head_dim), 0) end
  for _, k in ipairs { "rope_theta", "norm_eps" } do
    if type(m[k]) ~= "number" or not (m[k] > 0) or m[k] == math.huge then
      error(("%s: '%s' must be a positive number, got %s"):format(where, k, tostring(m[k])), 0)
    end
  end
  if type(m.name) ~= "string" or m.name == "" then error(("%s: 'name' must be a non-empty string"):format(where), 0) end
  return m
end

--- A model by name (M.MODELS) or from a Lua file (a path ending in .lua).
function M.model(name)
  if type(name) ~= "string" then error("llama.model: expected a model name or a .lua file", 2) end
  if M.MODELS[name] then return check(M.MODELS[name], name) end
  if name:match("%.lua$") then
    -- a model file is data: it sees Lua's pure libraries and nothing of the host
    local env = { math = math, string = string, table = table, error = error, assert = assert,
                  type = type, tostring = tostring, tonumber = tonumber, pairs = pairs,
                  ipairs = ipairs, select = select }
    local chunk, err = loadfile(name, "t", env)
    if not chunk then error(("model file %s: %s"):format(name, err), 0) end
    local ok, m = pcall(chunk)
    if not ok then error(("model file %s: %s"):format(name, tostring(m)), 0) end
    return check(m, "model file " .. name)
  end
  local names = {}
  for k in pairs(M.MODELS) do names[#names + 1] = k end
  table.sort(names)
  error(("unknown model '%s': one of %s, or a .lua file returning a model table (docs/models.md)"):format(name,
    table.concat(names, ", ")), 0)
end

return M
