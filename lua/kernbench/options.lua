--- Options tables of the public Lua functions: a key that no code reads (a
-- typo such as {grdi = 2}) would quietly give the default, so it is an
-- error naming the function, the key and the keys it takes, worded as the
-- C bindings' lbind_check_keys (src/luasim/lbind.c) words it:
--
--   torch.install_ipcq: unknown option 'slots' (its options are {topology =, pes =, ...})
--
--   local options = require "kernbench.options"
--   options.check("kb.torch", opts, { "topology", "device", ... }, 2)
--
-- `level` is error()'s, seen from the function that calls check: 2 blames
-- that function's caller. docs/decisions.md, "Argument checks of bound
-- functions (issue 39)".
local M = {}

local function key_text(k)
  if type(k) == "string" then return ("'%s'"):format(k) end
  if type(k) == "number" or type(k) == "boolean" then return ("[%s]"):format(tostring(k)) end
  return ("(a %s key)"):format(type(k))
end

--- Raises for a key of table t that `known` (a list of names) does not
-- hold (the smallest such key as text, so that the message does not depend
-- on the order pairs visits them in). `what` says whose keys they are ("its options" by
-- default; "a target's fields" makes it "unknown field"). With `list`, the
-- keys 1 .. #t are allowed too (a table that is a list and options at once).
function M.check(call, t, known, level, what, list)
  if type(t) ~= "table" then return end
  local bad
  for k in pairs(t) do -- no table built: tl's calls check on every call
    local ok = list and math.type(k) == "integer" and k >= 1 and k <= #t
    for i = 1, #known do
      if ok then break end
      ok = known[i] == k
    end
    if not ok and (bad == nil or tostring(k) < tostring(bad)) then bad = k end
  end
  if bad == nil then return end
  local names = {}
  for i, k in ipairs(known) do names[i] = k .. " =" end
  what = what or "its options"
  error(("%s: unknown %s %s (%s are {%s})"):format(call, what:find("field", 1, true) and "field" or "option",
    key_text(bad), what, table.concat(names, ", ")), (level or 1) + 1)
end

--- The boolean option t[key]: `dflt` when nil, else it must be a boolean.
function M.bool(call, t, key, dflt, level)
  local v = t[key]
  if v == nil then return dflt end
  if type(v) ~= "boolean" then
    error(("%s: option '%s' must be a boolean, got %s"):format(call, key, type(v)), (level or 1) + 1)
  end
  return v
end

return M
