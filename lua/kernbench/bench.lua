--- Benches: Lua files that return {name=, description=, run=function(torch,
-- params)[, params=]}. This module checks the contract and runs a bench on
-- a simulation (the command line's `kernbench FILE.lua`, `kernbench run
-- NAME`); kernbench.bench_find lists and finds them, kernbench.bench_params
-- handles their parameters. Reference: docs/benches.md.
local bench_params = require "kernbench.bench_params"
local usage = require "kernbench.usage"

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
  return bench_params.problem(v.params)
end

--- Whether v is a bench table.
function M.is_bench(v) return M.problem(v) == nil end

--- Parses --device: "all" (nil) or "sip:N" (N); a bad one is a usage error.
function M.parse_device(spec, nsips)
  if spec == nil or spec == "all" then return nil end
  local n = spec:match("^sip:(%d+)$")
  if not n then bench_params.usage_error("--device '%s': expected all or sip:N", spec) end
  n = tonumber(n)
  if nsips and n >= nsips then
    bench_params.usage_error("--device %s: the topology has %d SIP(s) (sip:0 .. sip:%d)", spec, nsips, nsips - 1)
  end
  return n
end

-- The data mode: the command line's, or `--data` / `--verify-data` after
-- the bench file; any other argument after the bench is a usage error.
local function mode_from(args, mode, b)
  for _, a in ipairs(args) do
    if a == "--verify-data" then mode = "verify"
    elseif a == "--data" then mode = mode or "data"
    else
      local key = a:match("^%-%-([%w_]+)$")
      local hint = key and b.params and b.params[key] and (" (did you mean --param %s=...?)"):format(key) or ""
      bench_params.usage_error("bench %s: unexpected argument '%s' after the bench: only --data and --verify-data " ..
        "may follow it; parameters are set with --param KEY=VALUE before the bench%s", b.name, a, hint)
    end
  end
  return mode
end

-- "(k=v, ...)" for the run's header; a value the declaration labels (a
-- special value such as 0 for "all") prints as its label.
local function params_text(values, decl)
  local parts = {}
  for _, k in ipairs(bench_params.keys(values)) do
    local labels = decl and decl[k] and decl[k].labels
    local label = labels and labels[values[k]]
    parts[#parts + 1] = k .. "=" .. (label ~= nil and tostring(label) or tostring(values[k]))
  end
  return #parts > 0 and (" (" .. table.concat(parts, ", ") .. ")") or ""
end

-- What a failed bench run reports: the error with its one traceback.
local function report_failure(b, err)
  io.stderr:write(("kernbench: bench %s: %s\n"):format(b.name, tostring(err)))
end

--- Runs bench table b on a new simulation of the default topology (the
-- command line's --topology/--set) with a torch runtime bound to it:
-- run(torch, params), then drain outstanding work, then a summary line.
-- opts: topology, device, data_mode, params (list of "key=value"; default
-- the command line's --param), args (what followed the bench file: the
-- command line passes arg), path. Returns the exit status: 1 when the bench fails (reported
-- once, with its traceback), submits nothing (NO_REQUESTS) or verifies
-- nothing under --verify-data. A usage error (--param, --device, an
-- argument after the bench) raises a kernbench.bench_params.Usage error.
-- With --results-json, kb.results_document is set to the results document.
function M.run(b, opts)
  opts = opts or {}
  local values, sources = bench_params.resolve(b, opts.params or kb.params)
  local mode = mode_from(opts.args or {}, opts.data_mode or kb.data_mode, b)
  if b.needs_data and mode == nil then
    mode = "data" -- the bench reads values its kernels compute or load
  end
  local topo = opts.topology or kb.topology.load()
  local device = M.parse_device(opts.device or kb.device, topo:params().sips)
  -- needs_op_log: the bench reads its launches' op-log records (s:op_log())
  local torch = require("kernbench.torch").new { topology = topo, device = device, data_mode = mode,
                                                 op_log = b.needs_op_log or nil }
  local ok, result = xpcall(b.run, debug.traceback, torch, values)
  local status, err = "ok", nil
  if not ok and usage.is(result) then -- a parameter the bench checks itself
    torch.close()
    error(result, 0)
  end
  if not ok then
    local v = torch.verified()
    status = (#v > 0 and not v[#v].ok) and "verification_failed" or "failed"
    err = tostring(result)
    result = nil
  else
    torch.synchronize()
  end
  local st = torch.stats()
  torch.close()
  local function document()
    if not kb.results_requested or status == "failed" then return end
    local text_ok, text = pcall(require("kernbench.results").document, {
      bench = b, path = opts.path, topology = topo, overrides = kb.topology.default_overrides or {},
      device = opts.device or kb.device or "all", params = values, sources = sources,
      mode = mode or "timing", stats = st, verified = torch.verified(), status = status, error = err,
      result = result })
    if not text_ok then
      error(("bench %s: its result cannot be written to --results-json: %s"):format(b.name, tostring(text)), 0)
    end
    kb.results_document = text
  end
  if not ok then
    report_failure(b, err)
    document()
    return 1
  end
  -- the topology's name, and the profile laid over it when that is not its name
  local profile = topo:params().profile
  local on = (profile == "default" or profile == topo.name) and topo.name
    or ("%s (profile %s)"):format(topo.name, profile)
  local rendered = st.requests == 0 and b.renders_only and b.renders_only(values)
  if rendered then
    kb.summary_note = rendered -- the run summary says where the events were counted
    print(("bench %s%s on %s: nothing simulated (%s)"):format(b.name, params_text(values, b.params), on, rendered))
    return 0
  end
  if st.requests == 0 then
    io.stderr:write(("kernbench: bench %s: NO_REQUESTS: it submitted no request to the simulator " ..
                     "(create a tensor on the device or launch a kernel)\n"):format(b.name))
    return 1
  end
  print(("bench %s%s on %s: %d host request(s), simulated time %s"):format(b.name, params_text(values, b.params), on,
    st.requests, kb.format_ns(st.sim_ns)))
  if mode == "verify" then
    local v = torch.verified()
    if #v == 0 then
      io.stderr:write(("kernbench: bench %s: --verify-data, but the bench verified no output " ..
                       "(call torch.verify(name, got, expected))\n"):format(b.name))
      return 1
    end
    for _, r in ipairs(v) do
      print(("verified %s (%s) within rtol = atol = %g: %s"):format(r.name, r.dtype, r.tol,
        require("kernbench.torch").describe_worst(r)))
    end
  end
  document()
  return 0
end

--- Called by the command line with what a script returned: a bench table
-- is run (returns the exit status); anything else means a plain script
-- (nil), unless `strict` (`kernbench run NAME`) requires a bench. A usage
-- error raises a kernbench.usage error with the bench's usage line, which
-- the command line reports (exit status 2).
function M.after_script(v, path, strict)
  local looks_like_bench = type(v) == "table" and v.run ~= nil
  if not looks_like_bench and not strict then
    local given = (kb.params and #kb.params > 0) and "--param" or kb.results_requested and "--results-json"
    if given then
      M.usage(("%s: %s needs a bench, and %s is a plain script (it returns no bench table)"):format(
        path, given, path))
    end
    return nil
  end
  local why = M.problem(v)
  if why then error(("%s: not a bench: %s"):format(path, why), 0) end
  return usage.guard(nil, usage.BENCH_HINT, M.run, v, { path = path, args = _G.arg })
end

--- Raises the usage error `message` with the bench's usage line.
function M.usage(message)
  usage.raise(message, nil, usage.BENCH_HINT)
end

return M
