--- The kernbench Lua library, preloaded as the global `kb`.
-- Later layers (topology, the torch-like runtime, benches, sweeps) are
-- reached through this table; the event core is `kb.sim` (also the global
-- `sim`). Reference: docs/lua-api.md.
local sim = require "sim"

local kb = {
  version = sim.version,
  sim = sim,
  topology = require "kernbench.topology",
  addr = require "kernbench.addr",
  components = require "kernbench.components",
}

local units = {
  { 1e9, "s" },
  { 1e6, "ms" },
  { 1e3, "us" },
  { 1, "ns" },
}

--- Formats a duration given in ns with a readable unit:
-- kb.format_ns(0.25) == "250 ps", kb.format_ns(1500) == "1.5 us".
-- Up to four significant digits; exact values are available as numbers.
function kb.format_ns(ns)
  if type(ns) ~= "number" then
    error("kb.format_ns: expected a number of ns, got " .. type(ns), 2)
  end
  local mag = math.abs(ns)
  if mag ~= 0 and mag < 1 then
    return string.format("%.4g ps", ns * 1e3)
  end
  for _, u in ipairs(units) do
    if mag >= u[1] or u[1] == 1 then
      return string.format("%.4g %s", ns / u[1], u[2])
    end
  end
end

--- A torch-like runtime on a new simulation (docs/torch.md), for the REPL
-- and scripts: kb.torch{topology = t, device = n}.
function kb.torch(opts) return require("kernbench.torch").new(opts) end

return kb
