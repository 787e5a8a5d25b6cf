--- Argument checks shared by the Lua subcommands (probe, draw, web): a
-- `--set KEY.PATH=VALUE` override, `--profile NAME` and the refusal of anything unknown.
-- Errors are `{usage = MESSAGE}` tables, which each subcommand's main turns
-- into a usage error (exit status 2).
local M = {}

--- Appends the `--set` value s to sets, or raises its usage error.
function M.add_set(sets, s)
  if not s:find("=", 1, true) then
    error({ usage = ("option '--set' needs KEY.PATH=VALUE, got '%s'"):format(s) })
  end
  sets[#sets + 1] = s
end

--- Appends `--profile NAME` (a `profile=NAME` override: docs/fidelity.md)
-- to sets, or raises its usage error.
function M.add_profile(sets, name)
  if name == "" or name:find("=", 1, true) then
    error({ usage = ("option '--profile' needs a profile name (default, original) or file, got '%s'"):format(name) })
  end
  sets[#sets + 1] = "profile=" .. name
end

--- Raises the usage error for argument a (raw: as typed, with any =VALUE).
function M.reject(a, raw)
  if a:sub(1, 1) == "-" then error({ usage = ("unknown option '%s'"):format(raw) }) end
  error({ usage = ("unexpected argument '%s'"):format(a) })
end

return M
