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

--- A result file that never looks complete unless it is (docs/benches.md):
-- written to ".NAME.partial.PID" beside `path` and renamed over it by
-- out:close(), which raises if anything could not be written (full disk,
-- I/O error); an object collected unclosed (an error, Ctrl-C) leaves no
-- file. Opening checks the path at once (missing or unwritable directory,
-- a directory given), so a bench opens its outputs before it simulates.
--   local out = kb.open_output(dir .. "/results.csv")
--   out:write("a,b\n", 1, ",", 2, "\n")   -- strings and numbers; returns out
--   out:close()                          -- or out:abort(); out:temp() is the
--                                        -- file being written (for gnuplot)
-- A `local out <close> = kb.open_output(p)` is committed when its scope
-- ends normally and dropped when an error leaves it.
function kb.open_output(path)
  if type(path) ~= "string" then
    error("kb.open_output: expected a file name, got " .. type(path), 2)
  end
  return require("kernbench.output_c").open(path)
end

--- Writes `text` to `path` atomically (kb.open_output, write, close);
-- raises with the path and the reason if it cannot.
function kb.write_file(path, text)
  if type(text) ~= "string" then
    error("kb.write_file: expected the text as a string, got " .. type(text), 2)
  end
  local out = kb.open_output(path)
  out:write(text)
  out:close()
end

--- kb.progress(k, n[, label]): the bench has started point k of n (k from
-- 1; 0: none yet), shown on the command line's progress line with an
-- estimate of the time left (docs/lua-api.md). Writes nothing itself.
kb.progress = require("kernbench.progress_c").progress

--- A torch-like runtime on a new simulation (docs/torch.md), for the REPL
-- and scripts: kb.torch{topology = t, device = n}.
function kb.torch(opts) return require("kernbench.torch").new(opts) end

--- Collectives (docs/ccl.md): kb.ccl.predict{algorithm =, topology =, nbytes =, buffer_kind =,
-- slot_size =, root =} estimates an all-reduce's time from the topology.
kb.ccl = { predict = function(o) return require("kernbench.ccl.predict").predict(o) end }

--- PE-to-PE queue plans (docs/ipcq.md): kb.ipcq.dump(plan) lists each
-- rank's directions, peers and receive rings.
kb.ipcq = { dump = function(plan) return require("kernbench.ccl.install").dump(plan) end }

--- The fabric probe as a library (kb.probe.run{case = name}; docs/repl.md).
kb.probe = require "kernbench.probe"

--- v as the REPL prints it: a nested Lua literal, tensors, topologies and
-- simulations summarised (kernbench.pretty; docs/repl.md).
function kb.pretty(v, opts) return require("kernbench.pretty").format(v, opts) end

--- Prints the help of x, or the list of everything (kernbench.help, the
-- global help of the REPL; docs/repl.md).
function kb.help(...) return require("kernbench.help").help(...) end

return kb
