--- The values of a sweep file (docs/sweeps.md): its errors, scalars, axis
-- lists and ranges, --set keys and --param values checked, and the
-- canonical text and digest of a value (kernbench.sweep.file uses them).
local M = {}

M.MAX_POINTS = 10000000
local MAX_POINTS = M.MAX_POINTS

--- A sweep-file error: the command line prints it and exits 2.
local Err = {}
Err.__tostring = function(e) return e.message end
M.Error = Err
function M.is_error(e) return getmetatable(e) == Err end

function M.fail(file, key, fmt, ...)
  error(setmetatable({ message = ("%s: %s%s"):format(file, key and (key .. ": ") or "", fmt:format(...)) }, Err), 0)
end

local fail = M.fail

--- FNV-1a 64 of text, as 16 hex digits (the topology digest's hash).
function M.fnv1a64(text)
  local h = -3750763034362895579 -- 14695981039346656037, the offset basis
  for i = 1, #text do h = (h ~ text:byte(i)) * 1099511628211 end
  return ("%016x"):format(h)
end

--- A value as it is written on the command line: integers (and integral
-- floats) in decimal, other floats in the shortest form that reads back
-- exactly, booleans as true/false, strings as they are.
function M.text(v)
  if type(v) == "number" and v == v and v ~= math.huge and v ~= -math.huge then
    return require("kernbench.json").number(v)
  end
  return tostring(v)
end

function M.sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  return ks
end

function M.check_scalar(file, key, v)
  local ty = type(v)
  if ty == "number" then
    if v ~= v or v == math.huge or v == -math.huge then fail(file, key, "%s is not a finite number", tostring(v)) end
  elseif ty ~= "string" and ty ~= "boolean" then
    fail(file, key, "a value must be a string, a number or a boolean, got a %s", ty)
  end
  return v
end

-- The values of an axis: a list, or a range {from =, to =, step =} /
-- {from =, to =, times =} (a geometric range), to included when reached.
function M.axis_values(file, key, spec)
  if type(spec) ~= "table" then
    fail(file, key, "expected a list of values or a range {from =, to =, step = | times =}, got a %s", type(spec))
  end
  if spec.from ~= nil or spec.to ~= nil or spec.step ~= nil or spec.times ~= nil then
    for k in pairs(spec) do
      if k ~= "from" and k ~= "to" and k ~= "step" and k ~= "times" then
        fail(file, key, "a range takes from, to and step or times; unknown key '%s'", tostring(k))
      end
    end
    local a, b, step, times = spec.from, spec.to, spec.step, spec.times
    if type(a) ~= "number" or type(b) ~= "number" then fail(file, key, "a range needs numbers from = and to =") end
    if (step == nil) == (times == nil) then fail(file, key, "a range needs exactly one of step = and times =") end
    if step ~= nil and (type(step) ~= "number" or step <= 0) then fail(file, key, "step must be a number > 0") end
    if times ~= nil and (type(times) ~= "number" or times <= 1 or a <= 0) then
      fail(file, key, "times must be a number > 1, with from > 0")
    end
    if b < a then fail(file, key, "a range needs from <= to (from = %s, to = %s)", M.text(a), M.text(b)) end
    local out, v = {}, a
    while v <= b * (1 + 1e-12) do
      out[#out + 1] = v
      if #out > MAX_POINTS then fail(file, key, "the range has more than %d values", MAX_POINTS) end
      if step then v = a + #out * step else v = v * times end
    end
    return out
  end
  local n = #spec
  if n == 0 then fail(file, key, "an axis needs at least one value (a list or a range)") end
  for k in pairs(spec) do
    if math.type(k) ~= "integer" or k < 1 or k > n then
      fail(file, key, "expected a list of values (keys 1..%d), found key %s", n, tostring(k))
    end
  end
  local seen, out = {}, {}
  for i = 1, n do
    local v = M.check_scalar(file, ("%s[%d]"):format(key, i), spec[i])
    local t = type(v) .. ":" .. M.text(v)
    if seen[t] then fail(file, key, "value %s is listed twice", M.text(v)) end
    seen[t] = true
    out[i] = v
  end
  return out
end

-- Checks that bench b takes --param key=value.
function M.check_param(file, where, b, key, v)
  if type(key) ~= "string" or not key:match("^[%a_][%w_]*$") then
    fail(file, where, "a parameter name must be an identifier, got %s", tostring(key))
  end
  local ok, err = pcall(require("kernbench.bench_params").resolve, b, { key .. "=" .. M.text(v) }, function() end)
  if not ok then fail(file, where, "%s", tostring(err)) end
end

function M.check_set_key(file, where, key)
  if type(key) ~= "string" or not key:match("^[%a_][%w_]*[%w_.%[%]]*$") then
    fail(file, where, "a --set key must be a topology field path such as cube.links.router_link_bw_gbs, got %s",
      tostring(key))
  end
end

return M
