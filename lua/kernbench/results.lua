--- The results document of a bench run (`--results-json FILE`; schema in
-- docs/cli.md, "Results file"): what the bench returned, with what is
-- needed to reproduce and compare it.
local json = require "kernbench.json"

local M = {}

M.SCHEMA = "kernbench.results"
M.SCHEMA_VERSION = 1

--- "fnv1a64:<16 hex digits>" of the topology's resolved configuration
-- values: t:config() without its comments (the sources of the values), so
-- the same hardware has the same digest wherever its file lives.
function M.topology_digest(topo)
  local h = -3750763034362895579 -- 14695981039346656037, the FNV-1a 64 offset basis
  for line in topo:config():gmatch("[^\n]+") do
    if not line:match("^%s*#") then
      local text = line:gsub("  # .*$", "") .. "\n"
      for i = 1, #text do
        h = (h ~ text:byte(i)) * 1099511628211 -- wraps modulo 2^64
      end
    end
  end
  return ("fnv1a64:%016x"):format(h)
end

local function checks(verified)
  local out = {}
  for i, r in ipairs(verified) do
    out[i] = json.obj({ "name", r.name }, { "dtype", r.dtype }, { "ok", r.ok }, { "rtol", r.tol }, { "atol", r.tol },
      { "worst_abs_error", r.worst }, { "worst_index", r.index }, { "got", r.got }, { "expected", r.expected })
  end
  return out
end

--- The document, as JSON text. `run` holds: bench (the table), path,
-- topology, overrides (list of "key=value"), device, params, sources,
-- mode ("timing", "data" or "verify"), stats (torch.stats()), verified
-- (torch.verified()), status ("ok" or "verification_failed"), error
-- (the failure's message or nil), result (what run returned).
function M.document(run)
  local t = run.topology
  local doc = json.obj(
    { "schema", M.SCHEMA }, { "schema_version", M.SCHEMA_VERSION },
    { "kernbench_version", kb.version },
    { "bench", json.obj({ "name", run.bench.name }, { "path", run.path }) },
    { "status", run.status },
    { "error", run.error },
    { "topology", json.obj({ "name", t.name }, { "path", t:params().path }, { "digest", M.topology_digest(t) },
      { "overrides", run.overrides }) },
    { "device", run.device },
    { "params", next(run.params) and run.params or json.obj() }, -- {} is an object, not []
    { "param_sources", next(run.sources) and run.sources or json.obj() },
    { "mode", run.mode },
    { "simulation", json.obj({ "sim_ns", run.stats.sim_ns }, { "events", run.stats.events },
      { "host_requests", run.stats.requests }) },
    { "verification", run.mode == "verify" and checks(run.verified) or nil },
    { "result", run.result })
  return json.encode(doc, "results") .. "\n"
end

return M
