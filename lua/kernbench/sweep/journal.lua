--- The sweep journal (DIR/journal.jsonl, docs/sweeps.md "The journal"): one
-- JSON object per finished point, appended with one write(2) on an O_APPEND
-- descriptor and fsync'd (kernbench.output_c.append_line), so a kill at any
-- moment leaves whole lines and at most one torn last line, which reading
-- detects, reports and ignores, and `repair` cuts away before appending.
-- The last line of an id wins (a retried point supersedes its failure).
local json = require "kernbench.json"

local M = {}

local function C() return require "kernbench.output_c" end

--- The JSON line of entry e: {id, params, status, exit_code, error,
-- metrics = {{name, value}, ...} (in column order), wall_s}.
function M.encode(e)
  local m = {}
  for i, kv in ipairs(e.metrics or {}) do m[i] = { kv[1], kv[2] } end
  return json.encode(json.obj({ "id", e.id }, { "params", next(e.params or {}) and e.params or json.obj() },
    { "status", e.status }, { "exit_code", e.exit_code }, { "error", e.error }, { "metrics", json.obj(table.unpack(m)) },
    { "wall_s", e.wall_s }), "journal")
end

--- Parses journal text: returns {entries = {...} (in file order), by_id =
-- {id -> last entry}, problems = {messages}, good = bytes up to the end of
-- the last complete line, torn = whether a last line lacks its newline}.
function M.parse(text, name)
  name = name or "journal"
  local r = { entries = {}, by_id = {}, problems = {}, good = 0, torn = false }
  local pos, lineno = 1, 0
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    lineno = lineno + 1
    if not nl then
      r.torn = true
      r.problems[#r.problems + 1] = ("%s: line %d is torn (%d bytes without a newline: an interrupted write); " ..
        "ignored"):format(name, lineno, #text - pos + 1)
      break
    end
    local line = text:sub(pos, nl - 1)
    r.good = nl
    pos = nl + 1
    if line:match("%S") then
      local ok, v = pcall(json.decode, line)
      if not ok or type(v) ~= "table" or type(v.id) ~= "string" or (v.status ~= "ok" and v.status ~= "failed") then
        r.problems[#r.problems + 1] = ("%s: line %d is not a journal record (%s); ignored"):format(name, lineno,
          ok and "no id or status" or tostring(v))
      else
        r.entries[#r.entries + 1] = v
        r.by_id[v.id] = v
      end
    end
  end
  return r
end

--- Reads the journal at path (a missing file is an empty journal).
function M.read(path)
  local f = io.open(path, "rb")
  if not f then return M.parse("", path), false end
  local text = f:read("a") or ""
  f:close()
  return M.parse(text, path), true
end

--- Cuts a torn last line away (before appending after it). Raises on error.
function M.repair(path, r)
  if r.torn then
    local ok, err = C().truncate(path, r.good)
    if not ok then error("kernbench sweep: " .. err, 0) end
    r.torn = false
  end
end

--- Appends entry e as one line, on disk when this returns. Raises on error.
function M.append(path, e)
  local ok, err = C().append_line(path, M.encode(e))
  if not ok then error("kernbench sweep: journal " .. err, 0) end
end

return M
