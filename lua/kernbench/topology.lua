--- kb.topology: load hardware descriptions (YAML, docs/topology.md).
--
--   kb.topology.load([path[, overrides]]) -> topology
--
-- `path` is a file, or the name of a shipped topology ("default",
-- "small_1cube_1pe", ...; searched in the topologies directory). Without a
-- path, the command line's --topology (else "default") is loaded, with the
-- command line's --set overrides applied first. `overrides` is a list of
-- "key.path=value" strings or a table {["key.path"] = value}.
local C = require "kernbench.topology_c"

local M = {
  implementations = C.implementations,
  -- Set by the command line (--topology, --set).
  default_path = nil,
  default_overrides = {},
}

local function dir_of(file)
  return file:match("^(.*)/[^/]*$") or "."
end

-- The shipped topologies sit beside the Lua library: <lua>/../topologies.
local here = debug.getinfo(1, "S").source:match("^@(.*)$")
M.dir = here and (dir_of(dir_of(dir_of(here))) .. "/topologies") or "topologies"

-- Whether p names something, without opening p itself: opening a FIFO
-- would wait for a writer, and the loader (which refuses anything but a
-- regular file, without blocking) is the one to say what is wrong with it.
-- "p/" fails with ENOENT (2) only when p does not exist; for an existing
-- file, FIFO or device it fails with ENOTDIR, and a directory opens.
local function exists(p)
  local f, _, code = io.open(p .. "/", "r")
  if f then f:close() return true end
  return code ~= 2
end

--- The file a topology name refers to.
function M.find(path)
  if exists(path) then return path end
  if not path:find("/", 1, true) then
    local name = path:match("%.ya?ml$") and path or (path .. ".yaml")
    local shipped = M.dir .. "/" .. name
    if exists(shipped) then return shipped end
  end
  error(string.format("kb.topology: no topology file '%s' (looked in the current directory and %s)",
                      path, M.dir), 3)
end

local function encode(v)
  local t = type(v)
  if t == "table" then
    local parts = {}
    for i = 1, #v do parts[i] = encode(v[i]) end
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  return tostring(v)
end

local function normalise(overrides, into)
  if overrides == nil then return into end
  if type(overrides) ~= "table" then
    error("kb.topology.load: overrides must be a table, got " .. type(overrides), 3)
  end
  for _, s in ipairs(overrides) do into[#into + 1] = s end
  local keys = {}
  for k in pairs(overrides) do
    if type(k) == "string" then keys[#keys + 1] = k end
  end
  table.sort(keys) -- deterministic order
  for _, k in ipairs(keys) do into[#into + 1] = k .. "=" .. encode(overrides[k]) end
  return into
end

function M.load(path, overrides)
  if path ~= nil and (type(path) ~= "string" or path:find("\0", 1, true)) then
    error(("kb.topology.load: argument 1 (path) must be a topology name or file without NUL bytes, got %s"):format(
      type(path) == "string" and "a string with a NUL byte" or type(path)), 2)
  end
  local list = {}
  local from_command_line = path == nil and overrides == nil and
    (M.default_path ~= nil or #(M.default_overrides or {}) > 0)
  if path == nil then
    path = M.default_path or "default"
    normalise(M.default_overrides, list)
  end
  normalise(overrides, list)
  if not from_command_line then return C.load(M.find(path), list, M.dir) end
  -- the command line's --topology/--set/--profile: what is wrong is the
  -- user's mistake, a usage error (exit status 2, no traceback)
  local ok, topo = pcall(C.load, M.find(path), list, M.dir)
  if ok then return topo end
  require("kernbench.usage").error("%s", tostring(topo))
end

return M
