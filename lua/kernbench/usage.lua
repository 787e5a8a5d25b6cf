--- Usage errors: a user's mistake on the command line (an unknown option, a
-- bad value, `--set`, `--param`, a parameter a bench checks itself, a missing
-- file, an unknown subcommand) raised as a typed error and reported in one
-- place, the command line's error report (src/cli/exec.c): one line
-- `kernbench[ COMMAND]: MESSAGE`, the usage hint line(s) and exit status 2,
-- never a traceback. Any other error is an internal one and keeps its
-- traceback. Reference: docs/cli.md ("Exit status"), docs/reliability.md.
local M = {}

-- The hints printed under the message: how to get the usage of what was run.
M.HINT = "usage: kernbench [options] [script.lua [args...]]\nrun 'kernbench --help' for the options"
M.BENCH_HINT = "usage: kernbench [options] [--param KEY=VALUE ...] run BENCH | BENCH.lua\n" ..
  "run 'kernbench --help' for the options, 'kernbench help BENCH' for a bench's parameters"

-- The metatable of every usage error; the command line recognises it by
-- its __name (src/cli/exec.c reads message, command and hint).
local Usage = { __name = "kernbench.usage" }
Usage.__index = Usage
Usage.__tostring = function(e) return e.message end
M.Usage = Usage

--- A usage error object: message (one line), command (the subcommand that
-- reports it: "probe", "draw", ...; nil for kernbench itself) and hint (the
-- lines printed under the message; default: the bench hint for benches,
-- else kernbench's usage line).
function M.new(message, command, hint)
  message = tostring(message):gsub("%s+$", "")
  return setmetatable({ message = message, command = command, hint = hint }, Usage)
end

--- Raises a usage error with message fmt:format(...).
function M.error(fmt, ...)
  error(M.new(select("#", ...) > 0 and fmt:format(...) or fmt), 0)
end

--- Raises the usage error `message` of subcommand `command` with `hint`.
function M.raise(message, command, hint)
  error(M.new(message, command, hint), 0)
end

--- Whether e is a usage error: a typed one, or a plain {usage = MESSAGE}
-- table (the form argument parsers raise).
function M.is(e)
  if getmetatable(e) == Usage then return true end
  return type(e) == "table" and getmetatable(e) == nil and type(e.usage) == "string"
end

--- e as a typed usage error (nil when it is not one), with command and
-- hint filled in where it has none.
function M.of(e, command, hint)
  if not M.is(e) then return nil end
  if getmetatable(e) ~= Usage then e = M.new(e.usage) end
  if e.command == nil then e.command = command end
  if e.hint == nil then e.hint = hint end
  return e
end

--- Calls fn(...); a usage error it raises gets command and hint (unless
-- it has its own) and is raised again, any other error as it is. For the
-- subcommands' mains: `return usage.guard("probe", HINT, main_body, args)`.
function M.guard(command, hint, fn, ...)
  local r = table.pack(pcall(fn, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  local u = M.of(r[2], command, hint)
  if u then error(u, 0) end
  error(r[2], 0)
end

--- The text the command line prints for usage error e (also used where a
-- usage error must be printed without ending the process: the REPL).
function M.text(e)
  e = M.of(e) or M.new(tostring(e))
  return ("kernbench%s: %s\n%s\n"):format(e.command and (" " .. e.command) or "", e.message, e.hint or M.HINT)
end

local distance = require "kernbench.edit_distance"

--- The names of `names` closest to `word` (at most 3, the closest first),
-- for "did you mean" hints; none when nothing is close.
function M.nearest(word, names)
  local scored = {}
  for _, n in ipairs(names) do
    local d = distance(word:lower(), n:lower())
    if d <= math.max(2, #word // 3) then scored[#scored + 1] = { d = d, name = n } end
  end
  table.sort(scored, function(x, y) return x.d < y.d or (x.d == y.d and x.name < y.name) end)
  local out = {}
  for i = 1, math.min(#scored, 3) do out[i] = scored[i].name end
  return out
end

--- The subcommands (src/cli/main.c), for the hint after a mistyped one.
M.SUBCOMMANDS = { "draw", "help", "list", "probe", "run", "sweep", "web" }

--- Raises the usage error of a script `name` that does not exist: a
-- mistyped file, subcommand or bench name, with the nearest subcommand
-- or bench as a hint.
function M.no_script(name)
  local hint = ""
  local word = name:gsub("%.lua$", "")
  if not name:find("/", 1, true) then
    local near = M.nearest(word, M.SUBCOMMANDS)
    if #near > 0 then
      hint = ("; did you mean 'kernbench %s'?"):format(near[1])
    else
      local ok, benches = pcall(function()
        local find = require "kernbench.bench_find"
        return find.close_matches(word, (find.list(find.default_dir())))
      end)
      if ok and #benches > 0 then hint = ("; did you mean 'kernbench run %s'?"):format(benches[1]) end
    end
  end
  if hint == "" and not name:find("%.lua$") and not name:find("/", 1, true) then
    hint = "; subcommands: " .. table.concat(M.SUBCOMMANDS, ", ")
  end
  local what = (name:find("%.lua$") or name:find("/", 1, true)) and "no such file"
    or "no such script file, subcommand or bench"
  M.error("cannot open %s: %s%s", name, what, hint)
end

return M
