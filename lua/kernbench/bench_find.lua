--- Finding benches: the benches of a directory (`kernbench list`), a bench
-- by name, index or file (`kernbench run NAME`, `kernbench help NAME`).
-- Reference: docs/benches.md.
local params = require "kernbench.bench_params"

local M = {}

--- The shipped benches: <lua library>/../benches (the source tree, or
-- share/kernbench after `make install`).
function M.default_dir()
  local lib = kb and kb.lua_dir
  return lib and (lib:gsub("/lua$", "") .. "/benches") or "benches"
end

local function is_dir(path)
  local f = io.open(path .. "/.", "r")
  if f then f:close() return true end
  return false
end

local function is_file(path)
  if is_dir(path) then return false end
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

local function lua_files(dir, skip)
  local out = {}
  local p = io.popen(("find %q -name '*.lua' -type f 2>/dev/null | LC_ALL=C sort"):format(dir))
  for path in p:lines() do
    if not (skip and path:find(skip, 1, true)) then out[#out + 1] = path end
  end
  p:close()
  return out
end

--- The benches under dir (recursively), sorted by name: a list of
-- {index=, name=, description=, path=, bench=}, and a list of {path=,
-- reason=} for files that are not valid benches. Files under dir/perf/
-- (simulator benchmarks and demos, run as plain scripts) are not considered.
function M.list(dir)
  local problem = require("kernbench.bench").problem
  local benches, problems, names = {}, {}, {}
  for _, path in ipairs(lua_files(dir, "/perf/")) do
    local chunk, err = loadfile(path)
    local ok, v = false, err
    if chunk then ok, v = pcall(chunk) end
    local why = not ok and ("it fails to load: " .. tostring(v)) or problem(v)
    if not why and names[v.name] then
      why = ("name '%s' is also used by %s"):format(v.name, names[v.name])
    end
    if why then
      problems[#problems + 1] = { path = path, reason = why }
    else
      names[v.name] = path
      benches[#benches + 1] = { name = v.name, description = v.description, path = path, bench = v }
    end
  end
  table.sort(benches, function(a, b) return a.name < b.name end)
  for i, b in ipairs(benches) do b.index = i end
  return benches, problems
end

local distance = require "kernbench.edit_distance" -- for "did you mean"

--- The names close to `name` (typos, '_' for '-', a part of a name).
function M.close_matches(name, benches)
  local key = name:lower():gsub("%.lua$", ""):gsub("_", "-")
  local scored = {}
  for _, b in ipairs(benches) do
    local d = distance(key, b.name)
    if b.name:find(key, 1, true) or key:find(b.name, 1, true) then d = math.min(d, 1) end
    if d <= math.max(2, #key // 3) then scored[#scored + 1] = { d = d, name = b.name } end
  end
  table.sort(scored, function(x, y) return x.d < y.d or (x.d == y.d and x.name < y.name) end)
  local out = {}
  for i = 1, math.min(#scored, 5) do out[i] = scored[i].name end
  return out
end

--- The file of the bench `name`: an existing file, or in the shipped
-- benches a listed name ("deploy-roundtrip"), an index from `kernbench
-- list` ("1") or a file name ("deploy_roundtrip", "deploy_roundtrip.lua").
-- Raises a usage error listing close matches when there is none.
function M.resolve(name, dir)
  if is_file(name) then return name end
  dir = dir or M.default_dir()
  local benches = M.list(dir)
  local index = name:match("^%d+$") and tonumber(name)
  local file = name:gsub("%.lua$", "")
  for _, b in ipairs(benches) do
    local base = b.path:match("([^/]+)%.lua$")
    if b.name == name or b.index == index or base == file then return b.path end
  end
  local near = M.close_matches(name, benches)
  params.usage_error("no bench '%s': not a file, nor a name, index or file name of the benches in %s%s " ..
                     "(kernbench list shows them)", name, dir,
                     #near > 0 and ("; did you mean " .. table.concat(near, ", ") .. "?") or "")
end

--- resolve for `kernbench run NAME`: an unknown bench is a usage error of
-- `run`, with the bench's usage line.
function M.resolve_for_run(name)
  local usage = require "kernbench.usage"
  return usage.guard("run", usage.BENCH_HINT, M.resolve, name)
end

local LIST_HELP = [[
usage: kernbench list [--verbose] [DIR]

Lists the benches under DIR (default: the shipped benches), sorted by name:
index, name and description; --verbose (-v) adds each bench's file and its
parameters (set them with --param KEY=VALUE). Files that do not return a
valid bench table are reported with the reason (exit status 1); a DIR that
is not a directory is a usage error (exit status 2).]]

-- A usage error of `kernbench list`, reported by the command line.
local function list_usage(msg)
  require("kernbench.usage").raise(msg, "list", "usage: kernbench list [--verbose] [DIR]")
end

--- `kernbench list [--verbose] [DIR]`: returns the exit status.
function M.list_main(args)
  local verbose, dir = false, nil
  for _, a in ipairs(args) do
    if a == "-h" or a == "--help" then print(LIST_HELP) return 0
    elseif a == "-v" or a == "--verbose" then verbose = true
    elseif a:sub(1, 1) == "-" or dir then
      list_usage(("unexpected argument '%s'"):format(a))
    else dir = a end
  end
  dir = dir or M.default_dir()
  if not is_dir(dir) then list_usage(("%s is not a directory"):format(dir)) end
  local benches, problems = M.list(dir)
  local w = 4
  for _, b in ipairs(benches) do w = math.max(w, #b.name) end
  for _, b in ipairs(benches) do
    print(("%3d  %-" .. w .. "s  %s"):format(b.index, b.name, b.description))
    if verbose then
      print(("     %s"):format(b.path))
      for _, line in ipairs(params.describe(b.bench, "       ")) do print(line) end
    end
  end
  if #benches == 0 then print(("no benches under %s"):format(dir)) end
  for _, p in ipairs(problems) do
    io.stderr:write(("kernbench list: %s: not a bench: %s\n"):format(p.path, p.reason))
  end
  return #problems > 0 and 1 or 0
end

--- `kernbench help NAME`: the bench's description, file and parameters.
function M.help_main(args)
  local usage = require "kernbench.usage"
  local HINT = "usage: kernbench help BENCH"
  if #args ~= 1 then
    usage.raise(#args == 0 and "which bench? (kernbench help BENCH: 'kernbench list' shows the names)"
      or ("one bench at a time, got %d arguments"):format(#args), "help", HINT)
  end
  if args[1] == "-h" or args[1] == "--help" then
    io.stdout:write(HINT .. "\n\nShows a bench's description, file and parameters " ..
              "(BENCH: a name, index or file, as for 'kernbench run').\n")
    return 0
  end
  local path = usage.guard("help", HINT, M.resolve, args[1])
  local chunk, err = loadfile(path)
  local okb, b = false, err
  if chunk then okb, b = pcall(chunk) end
  local why = not okb and ("it fails to load: " .. tostring(b)) or require("kernbench.bench").problem(b)
  if why then
    io.stderr:write(("kernbench help: %s: not a bench: %s\n"):format(path, why))
    return 1
  end
  print(("%s: %s"):format(b.name, b.description))
  print(("file: %s"):format(path))
  local lines = params.describe(b, "  ")
  if #lines == 0 then print("parameters: none")
  else
    print("parameters (KEY=DEFAULT; set with --param KEY=VALUE before the bench):")
    for _, line in ipairs(lines) do print(line) end
  end
  print(("run: kernbench [options] [--param KEY=VALUE ...] run %s"):format(b.name))
  return 0
end

return M
