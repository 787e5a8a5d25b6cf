--- Benches: Lua files that return {name=, description=, run=function(torch)}.
-- This module checks the contract, lists the benches of a directory and
-- runs one on a simulation (the command line's `kernbench FILE.lua`,
-- `kernbench run FILE.lua` and `kernbench list`). Reference: docs/benches.md.
local M = {}

local NAME_PATTERN = "^[a-z][a-z0-9]*%-?[a-z0-9%-]*$"

--- Why v is not a bench table, or nil if it is one.
function M.problem(v)
  if type(v) ~= "table" then
    return ("the file returns %s, not a bench table {name=, description=, run=}"):format(
      v == nil and "nothing" or "a " .. type(v))
  end
  if type(v.name) ~= "string" then return "field 'name' is missing or not a string" end
  -- lowercase words joined by single dashes, starting with a letter (the spec's bench names)
  if not v.name:match(NAME_PATTERN) or v.name:find("%-%-") or v.name:find("%-$") then
    return ("name '%s' must be lowercase letters and digits in words joined by '-', starting with a letter"):format(v.name)
  end
  if type(v.description) ~= "string" or not v.description:match("%S") then
    return "field 'description' is missing or empty"
  end
  if type(v.run) ~= "function" then return "field 'run' is missing or not a function" end
  return nil
end

--- Whether v is a bench table.
function M.is_bench(v) return M.problem(v) == nil end

local function lua_files(dir, out, skip)
  local p = io.popen(("find %q -name '*.lua' -type f 2>/dev/null | LC_ALL=C sort"):format(dir))
  for path in p:lines() do
    if not (skip and path:find(skip, 1, true)) then out[#out + 1] = path end
  end
  p:close()
  return out
end

--- The benches under dir (recursively), sorted by name: a list of
-- {index=, name=, description=, path=}, and a list of {path=, reason=} for
-- files that are not valid benches. Files under dir/perf/ (simulator
-- benchmarks and demos, run as plain scripts) are not considered.
function M.list(dir)
  local benches, problems, names = {}, {}, {}
  for _, path in ipairs(lua_files(dir, {}, "/perf/")) do
    local chunk, err = loadfile(path)
    local ok, v = false, err
    if chunk then ok, v = pcall(chunk) end
    local why = not ok and ("it fails to load: " .. tostring(v)) or M.problem(v)
    if not why and names[v.name] then
      why = ("name '%s' is also used by %s"):format(v.name, names[v.name])
    end
    if why then
      problems[#problems + 1] = { path = path, reason = why }
    else
      names[v.name] = path
      benches[#benches + 1] = { name = v.name, description = v.description, path = path }
    end
  end
  table.sort(benches, function(a, b) return a.name < b.name end)
  for i, b in ipairs(benches) do b.index = i end
  return benches, problems
end

--- `kernbench list [DIR]`: prints the benches and the problems; returns the
-- exit status (1 if any file is not a valid bench).
function M.list_main(args)
  local dir = args[1] or (kb.lua_dir and kb.lua_dir:gsub("/lua$", "/benches")) or "benches"
  if args[1] == "-h" or args[1] == "--help" then
    print("usage: kernbench list [DIR]\n\nLists the benches under DIR (default: the shipped benches/),\n" ..
          "sorted by name: index, name and description. Files that do not return a\n" ..
          "valid bench table are reported with the reason (exit status 1).")
    return 0
  end
  local benches, problems = M.list(dir)
  local w = 4
  for _, b in ipairs(benches) do w = math.max(w, #b.name) end
  for _, b in ipairs(benches) do
    print(("%3d  %-" .. w .. "s  %s"):format(b.index, b.name, b.description))
  end
  if #benches == 0 then print(("no benches under %s"):format(dir)) end
  for _, p in ipairs(problems) do
    io.stderr:write(("kernbench list: %s: not a bench: %s\n"):format(p.path, p.reason))
  end
  return #problems > 0 and 1 or 0
end

--- Parses --device: "all" (nil) or "sip:N" (N).
function M.parse_device(spec, nsips)
  if spec == nil or spec == "all" then return nil end
  local n = spec:match("^sip:(%d+)$")
  if not n then error(("--device '%s': expected all or sip:N"):format(spec), 0) end
  n = tonumber(n)
  if nsips and n >= nsips then
    error(("--device %s: the topology has %d SIP(s) (sip:0 .. sip:%d)"):format(spec, nsips, nsips - 1), 0)
  end
  return n
end

--- Runs bench table b on a new simulation of the default topology (the
-- command line's --topology/--set) with a torch runtime bound to it:
-- run(torch), then drain outstanding work, then a summary line. Returns the
-- exit status: 1 with NO_REQUESTS when the bench submitted nothing.
function M.run(b, opts)
  opts = opts or {}
  local topo = opts.topology or kb.topology.load()
  local device = M.parse_device(opts.device or kb.device, topo:params().sips)
  local mode = opts.data_mode or kb.data_mode
  for _, a in ipairs(_G.arg or {}) do -- `kernbench FILE --data` / `--verify-data`
    if a == "--verify-data" then mode = "verify" elseif a == "--data" and mode == nil then mode = "data" end
  end
  if b.needs_data and mode == nil then
    mode = "data" -- the bench reads values its kernels compute or load
  end
  local torch = require("kernbench.torch").new { topology = topo, device = device, data_mode = mode }
  local ok, err = xpcall(b.run, debug.traceback, torch)
  if not ok then
    torch.close()
    error(("bench %s: %s"):format(b.name, tostring(err)), 0)
  end
  torch.synchronize()
  local st = torch.stats()
  torch.close()
  if st.requests == 0 then
    io.stderr:write(("kernbench: bench %s: NO_REQUESTS: it submitted no request to the simulator " ..
                     "(create a tensor on the device or launch a kernel)\n"):format(b.name))
    return 1
  end
  print(("bench %s on %s: %d request(s), simulated time %s"):format(b.name, topo.name, st.requests,
    kb.format_ns(st.sim_ns)))
  if mode == "verify" then
    local v = torch.verified()
    if #v == 0 then
      io.stderr:write(("kernbench: bench %s: --verify-data, but the bench verified no output " ..
                       "(call torch.verify(name, got, expected))\n"):format(b.name))
      return 1
    end
    for _, r in ipairs(v) do
      print(("verified %s (%s): worst |error| %.3g within rtol = atol = %g"):format(r.name, r.dtype, r.worst, r.tol))
    end
  end
  return 0
end

--- Called by the command line with what a script returned: a bench table
-- is run (returns the exit status); anything else means a plain script
-- (nil), unless `strict` (`kernbench run FILE`) requires a bench.
function M.after_script(v, path, strict)
  local looks_like_bench = type(v) == "table" and v.run ~= nil
  if not looks_like_bench and not strict then return nil end
  local why = M.problem(v)
  if why then error(("%s: not a bench: %s"):format(path, why), 0) end
  return M.run(v, { path = path })
end

return M
