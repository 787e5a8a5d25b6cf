--- Every function and metamethod the C bindings register (src/lua/*.c,
-- src/luasim/*.c), called with hostile argument lists: no arguments, nil,
-- another kind of userdata, tables, numbers at the edges, NaN, strings with
-- NUL bytes, extra arguments, and, for methods, the right self followed by
-- those. The functions are found by walking the loaded modules, the objects
-- they make and the metatables in the registry, so a function added later
-- is covered without editing this file. Each call runs in pcall: the
-- process must survive, and an error must be a message naming the function
-- (never one of Lua's internal ones such as "attempt to index a nil value"
-- or "bad argument #1 to '?'"). A kernel does the same sweep for its `tl`
-- table, the tl.tensor handle's methods and metamethods.
--
-- KB_HOSTILE_ONLY=N runs the sweep of the Nth function only (to count
-- crashes function by function); KB_HOSTILE_VERBOSE=1 prints each finding.
local lu = require "luaunit"
local torchmod = require "kernbench.torch"

TestApiHostile = {}

local VERBOSE = os.getenv("KB_HOSTILE_VERBOSE")
local ONLY = tonumber(os.getenv("KB_HOSTILE_ONLY") or "")

-- Modules not swept: the standard library, the test framework, and
-- kernbench.procpool (it starts child processes; test_procpool covers it).
local SKIP_MODULES = {
  _G = true, string = true, table = true, math = true, io = true, os = true, coroutine = true,
  utf8 = true, debug = true, package = true, luaunit = true, ["kernbench.procpool"] = true,
  ["kernbench.procpool.guard"] = true,
}

-- Functions that are legitimately not argument-checked in a way this sweep
-- can judge: none may crash, but these are not called (each with why).
local NOT_CALLED = {
  -- writes files named after its argument (numbers become names such as "1")
  ["kernbench.output_c.open"] = true,
}

local SKIP_METATABLES = { ["kernbench.procpool.guard"] = true }

local std = {}
do
  for name in pairs(SKIP_MODULES) do
    local m = package.loaded[name]
    if type(m) == "table" then
      for _, v in pairs(m) do if type(v) == "function" then std[v] = true end end
    end
  end
  for _, mt in ipairs { getmetatable(""), getmetatable(io.stdout) } do
    for _, v in pairs(mt) do if type(v) == "function" then std[v] = true end end
    if type(mt.__index) == "table" then
      for _, v in pairs(mt.__index) do if type(v) == "function" then std[v] = true end end
    end
  end
end

local function is_c(f) return debug.getinfo(f, "S").what == "C" end

-- The bound C functions: { f, name, key, owner } sorted by name; owner is
-- the metatable whose objects are the function's self (nil for module
-- functions).
local function enumerate(extra_roots)
  local found, visited = {}, {}
  local function add(f, name, key, owner)
    local e = found[f]
    if e then e.keys[#e.keys + 1] = key end
    if not e then
      found[f] = { f = f, name = name, key = key, owner = owner, keys = { key } }
    elseif #name < #e.name or (#name == #e.name and name < e.name) then
      e.name, e.key = name, key
      e.owner = e.owner or owner
    else
      e.owner = e.owner or owner
    end
  end
  local walk
  local function walk_ud(u, name, depth)
    local mt = debug.getmetatable(u) -- the real one (getmetatable gives a public view without finalizers)
    if type(mt) == "table" then walk(mt, "<" .. tostring(rawget(mt, "__name") or name) .. ">", depth + 1, mt) end
  end
  walk = function(t, name, depth, owner)
    if visited[t] or depth > 4 or t == _G or t == package.loaded then return end
    visited[t] = true
    if rawget(t, "__name") ~= nil then owner = t end -- a metatable (luaL_newmetatable names it)
    for k, v in pairs(t) do
      local key = tostring(k)
      local path = type(k) == "string" and (name .. "." .. key) or (name .. "[" .. key .. "]")
      if type(v) == "function" then
        -- finalizers are reachable through the debug library only (see
        -- test_finalizers_cannot_be_called_by_hand)
        if is_c(v) and not std[v] and k ~= "__gc" and k ~= "__close" then add(v, path, key, owner) end
        -- an __index closure's methods table (host tensors)
        local _, up = debug.getupvalue(v, 1)
        if k == "__index" and type(up) == "table" then walk(up, path, depth + 1, owner) end
      elseif type(v) == "table" then
        walk(v, path, depth + 1, (k == "__index" or k == "methods" or k == "__methods") and owner or nil)
      elseif type(v) == "userdata" then
        walk_ud(v, path, depth)
      end
    end
  end
  local names = {}
  for name in pairs(package.loaded) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    if not SKIP_MODULES[name] then
      local m = package.loaded[name]
      if type(m) == "table" then walk(m, name, 0)
      elseif type(m) == "function" and is_c(m) and not std[m] then add(m, name, name) end
    end
  end
  for _, r in ipairs(extra_roots or {}) do
    if type(r[2]) == "table" then walk(r[2], r[1], 0) else walk_ud(r[2], r[1], 0) end
  end
  local reg = debug.getregistry()
  local keys = {}
  for k, v in pairs(reg) do
    -- skipped: Lua's own (_LOADED, _PRELOAD, _CLIBS, _UBOX*, FILE*, _IO_*) and procpool's
    if type(v) == "table" and v ~= _G and not (type(k) == "string" and (k:sub(1, 1) == "_" or k == "FILE*"
        or SKIP_METATABLES[k])) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    local v = reg[k]
    local name = type(k) == "string" and ("<" .. k .. ">") or ("<" .. tostring(rawget(v, "__name") or "registry") .. ">")
    walk(v, name, 0)
  end
  local list = {}
  for _, e in pairs(found) do
    if not NOT_CALLED[e.name] then list[#list + 1] = e end
  end
  table.sort(list, function(a, b) return a.name < b.name end)
  return list
end

-- Userdata reachable from the roots, by metatable: the "right self" of
-- each method.
local function instances(roots)
  local by_mt, seen = {}, {}
  local function visit(v, depth)
    if depth > 5 or seen[v] then return end
    if type(v) == "userdata" then
      seen[v] = true
      local mt = debug.getmetatable(v)
      if type(mt) == "table" and not by_mt[mt] then by_mt[mt] = v end
    elseif type(v) == "table" then
      seen[v] = true
      for _, x in pairs(v) do visit(x, depth + 1) end
      local mt = getmetatable(v)
      if type(mt) == "table" then visit(mt, depth + 1) end
    end
  end
  for _, r in ipairs(roots) do visit(r, 0) end
  return by_mt
end

local NUL = "f32\0"
local function hostile_lists()
  return {
    {}, { nil }, { io.stdout }, { {} }, { 0 }, { 1 }, { -1 }, { math.maxinteger }, { math.mininteger },
    { 0 / 0 }, { 1e308 }, { -math.huge }, { "x\0y" }, { NUL, NUL, NUL }, { true }, { function() end },
    { {}, {}, {}, {} }, { 1, 2, 3, 4, 5, 6, 7, 8 }, { "", "", "" }, { nil, nil, 1 }, { 2 ^ 53, -(2 ^ 62), 0 / 0 },
    { { 1, 2 }, "f32\0", "E\0" }, { { 0 / 0, -1 }, 4, "f32" },
  }
end

-- What an error message must not be.
local INTERNAL = { "attempt to ", "to '?'", "(null)", "on bad self", "C stack overflow", "?:-1" }

-- The names a message may give a function: each key it is registered
-- under (a function may have two: a store's count and __len), and for a
-- metamethod the operation (index for __newindex too, "[" of t[k]) or the
-- type ("tensor" for kernbench.tensor and kernbench.tl_tensor).
local function key_names(e)
  local t = {}
  local tname = e.owner and rawget(e.owner, "__name")
  for _, k in ipairs(e.keys or { e.key }) do
    t[#t + 1] = k
    if k:sub(1, 2) == "__" then
      t[#t + 1] = k:sub(3)
      if k == "__index" or k == "__newindex" then
        t[#t + 1] = "index"
        t[#t + 1] = "["
      end
      if type(tname) == "string" then t[#t + 1] = tname:match("([%a]+)$") end
    end
  end
  return t
end

-- Messages that do not name the function but are what a user should see:
-- { function name, message start, why }.
local LEGITIMATE = {
  { "kernbench.tensor_c.", "tensor: shape [",
    "the tensor library's size limit, naming the tensor's shape; torch.* check sizes first with their own name" },
  { "kernbench.event.value", "event #",
    "the failure of an event the sweep failed by hand (ev:fail() gives it the reason 'event #N failed'): " ..
    "ev:value() of a triggered event raises its reason, as ev:wait() does (issue 41)" },
}

local function classify(e, ok, err)
  if ok then return "result" end
  if type(err) ~= "string" then return "internal", "error value of type " .. type(err) end
  for _, p in ipairs(INTERNAL) do
    if err:find(p, 1, true) then return "internal", err end
  end
  for _, l in ipairs(LEGITIMATE) do
    if e.name:sub(1, #l[1]) == l[1] and err:find(l[2], 1, true) == 1 then return "named" end
  end
  for _, n in ipairs(key_names(e)) do
    if err:find(n, 1, true) then return "named" end
  end
  return "unnamed", err
end

local function sweep(list, selves, stats, only)
  stats.functions = (stats.functions or 0) + #list
  for i, e in ipairs(list) do
    if not only or only == i then
      if VERBOSE then io.stderr:write(("%s #%d %s\n"):format(stats.label, i, e.name)) io.stderr:flush() end
      local calls = {}
      for _, a in ipairs(hostile_lists()) do calls[#calls + 1] = a end
      local self = e.owner and selves[e.owner]
      -- a finalizer is not called by hand on a live object here (docs/decisions.md)
      if self ~= nil and e.key ~= "__gc" and e.key ~= "__close" then
        for _, a in ipairs(hostile_lists()) do
          calls[#calls + 1] = table.pack(self, table.unpack(a, 1, a.n or #a))
        end
      end
      for _, a in ipairs(calls) do
        local ok, err = pcall(e.f, table.unpack(a, 1, a.n or 8))
        local kind, msg = classify(e, ok, err)
        stats.calls = (stats.calls or 0) + 1
        stats[kind] = (stats[kind] or 0) + 1
        if kind == "internal" or kind == "unnamed" then
          stats.bad = stats.bad or {}
          local line = ("%s [%s]: %s"):format(e.name, kind, tostring(msg))
          if not stats.bad[line] then
            stats.bad[line] = true
            stats.bad[#stats.bad + 1] = line
          end
        end
      end
    end
  end
end

local function report(label, stats)
  io.stderr:write(("%s: %d functions, %d calls: %d results, %d named errors, %d unnamed, %d internal\n"):format(
    label, stats.functions or 0, stats.calls or 0, stats.result or 0, stats.named or 0, stats.unnamed or 0,
    stats.internal or 0))
  if VERBOSE then
    for _, l in ipairs(stats.bad or {}) do io.stderr:write("  ", l, "\n") end
  end
end

local function assert_clean(stats)
  local bad = stats.bad or {}
  lu.assertEquals(#bad, 0, "hostile calls answered badly:\n" .. table.concat(bad, "\n", 1, math.min(#bad, 40)))
end

local function objects()
  local sim = require "sim"
  local s = sim.new()
  local topo = kb.topology.load("small_1cube_8pe")
  local torch = torchmod.new { topology = topo, data_mode = "data" }
  local d = torch.zeros({ 2, 2 }, { dp = torch.DPPolicy {}, name = "w" })
  local h = torch.ones({ 2, 2 })
  local roots = { s, s:store(), s:resource(1), s:event(), s:timeout(1), s:spawn(function() end),
                  s:all_of {}, topo, torch, d, h,
                  -- issue 41's kinds: a request of each family, the shared objects
                  s:store():get_event(), s:resource(1):request(), s:container(5, 1),
                  s:priority_store(2), s:filter_store(), s:preemptive_resource(1),
                  s:priority_resource(1):request(2) }
  return roots, torch, s
end

-- Files a path argument given as a number would create ("1", "0", ...):
-- paths must be strings, so none may appear.
local function stray_files()
  local found = {}
  for _, a in ipairs(hostile_lists()) do
    for i = 1, 8 do
      local v = a[i]
      if type(v) == "number" then
        local f = io.open(tostring(v), "r")
        if f then f:close() found[#found + 1] = tostring(v) end
      end
    end
  end
  return found
end

function TestApiHostile:test_every_bound_function_refuses_hostile_arguments_with_a_message()
  local before = #stray_files()
  local roots, torch, s = objects()
  local extra = {}
  for i, r in ipairs(roots) do extra[#extra + 1] = { "object" .. i, r } end
  local list = enumerate(extra)
  local stats = { label = "bench" }
  sweep(list, instances(roots), stats, ONLY)
  report("bench", stats)
  lu.assertTrue(#list >= 100, "too few functions found: " .. #list)
  pcall(torch.close)
  pcall(s.close, s)
  local stray = stray_files()
  for _, f in ipairs(stray) do os.remove(f) end
  if before == 0 then lu.assertEquals(stray, {}, "files made from number arguments") end
  assert_clean(stats)
end

function TestApiHostile:test_a_kernel_sweeps_tl_and_its_handles()
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe"), data_mode = "data" }
  local d = torch.zeros({ 4, 4 }, { dp = torch.DPPolicy {}, name = "x" })
  local stats = { label = "kernel" }
  torch.launch(function(tl, p)
    local h = tl.load(p, { 4, 4 }, "f32")
    local mt = getmetatable(h)
    local list = {}
    local seen = {}
    local function add(f, name, key, owner)
      if type(f) == "function" and not seen[f] and not std[f] then
        seen[f] = true
        list[#list + 1] = { f = f, name = name, key = key, owner = owner }
      end
    end
    for k, f in pairs(tl) do add(f, "tl." .. k, k) end
    for k, f in pairs(mt) do add(f, "tl.tensor." .. k, k, mt) end
    for k, f in pairs(rawget(mt, "methods") or {}) do add(f, "tl.tensor:" .. k, k, mt) end
    table.sort(list, function(a, b) return a.name < b.name end)
    sweep(list, { [mt] = h }, stats, ONLY)
  end, 1, d)
  report("kernel", stats)
  lu.assertTrue((stats.functions or 0) >= 30, "too few tl functions found")
  torch.close()
  assert_clean(stats)
end

-- The cases the hostile trial reported, each with its message.
function TestApiHostile:test_the_reported_cases_name_the_function_and_argument()
  local function err(f, ...)
    local ok, e = pcall(f, ...)
    lu.assertFalse(ok)
    return tostring(e)
  end
  lu.assertStrContains(err(kb.torch, 1), "kb.torch: argument 1 (opts) must be a table")
  lu.assertStrContains(err(kb.topology.load, 5), "kb.topology.load: argument 1 (path) must be a topology name")
  lu.assertStrContains(err(kb.topology.load, "small_1cube_1pe\0x"), "without NUL bytes")
  lu.assertStrContains(err(kb.open_output, "out\0.json"), "kb.open_output: argument 1 (path) must be a string without NUL bytes")
  lu.assertStrContains(err(kb.open_output, 1), "kb.open_output: expected a file name, got number")
  local torch = torchmod.new { topology = kb.topology.load("small_1cube_1pe"), data_mode = "data" }
  local d = torch.zeros({ 2, 2 }, { dp = torch.DPPolicy {}, name = "w" })
  lu.assertStrContains(err(d.numel), "torch: DeviceTensor:numel() called on nil: call it as d:numel()")
  local got = {}
  torch.launch(function(tl, p)
    local h = tl.load(p, { 2, 2 }, "f32")
    local mt = getmetatable(h)
    got.tolist = err(h.tolist)
    got.item = err(h.item, 3)
    got.add = err(mt.__add, 1, 2)
    got.unm = err(mt.__unm, "x")
    got.dtype = err(tl.load, p, { 2, 2 }, "f32\0")
    got.key = err(function() return h["shape\0"] end)
  end, 1, d)
  torch.close()
  lu.assertStrContains(got.tolist, "h:tolist: call it with ':' (argument 1 must be a tl.tensor handle, got no value)")
  lu.assertStrContains(got.item, "h:item: call it with ':' (argument 1 must be a tl.tensor handle, got number)")
  lu.assertStrContains(got.add, "h + x (__add): one operand must be a tl.tensor handle (got number and number)")
  lu.assertStrContains(got.unm, "-h (__unm): one operand must be a tl.tensor handle (got string and nothing)")
  lu.assertStrContains(got.dtype, "tl.load: argument 3 (dtype) must be a string without NUL bytes")
  lu.assertStrContains(got.key, "tl.tensor h[key]: the key must be a string without NUL bytes")
  -- Lua's own argument errors name methods called from C
  local s = require("sim").new()
  lu.assertStrContains(err(s:store().put, nil, 1), "bad argument #1 to 'kernbench.store.put'")
  lu.assertStrContains(err(s.run, io.stdout), "kernbench.sim expected, got FILE*")
  s:close()
  lu.assertStrContains(err(s.run, s), "kernbench.sim.run: simulation #")
end

-- Calling an object's finalizer by hand freed it while the simulation
-- still used it (a crash): getmetatable gives a view without __gc and
-- __close, and the listed methods leave them out (lbind_hide_finalizers).
function TestApiHostile:test_finalizers_cannot_be_called_by_hand()
  local roots, torch, s = objects()
  local checked = 0
  for _, o in ipairs(roots) do
    if type(o) == "userdata" then
      local real, public = debug.getmetatable(o), getmetatable(o)
      if rawget(real, "__gc") or rawget(real, "__close") then
        checked = checked + 1
        lu.assertNil(rawget(public, "__gc"), tostring(rawget(real, "__name")))
        lu.assertNil(rawget(public, "__close"), tostring(rawget(real, "__name")))
        lu.assertEquals(rawget(public, "__name"), rawget(real, "__name"))
        lu.assertIs(rawget(public, "__index"), rawget(real, "__index"))
        local listed = package.loaded[rawget(real, "__name")]
        if type(listed) == "table" then
          lu.assertNil(rawget(listed, "__gc"))
          lu.assertNil(rawget(listed, "__close"))
        end
      end
    end
  end
  lu.assertTrue(checked >= 6, "objects with finalizers checked: " .. checked)
  -- <close> and the collector still use the real finalizers
  do local s2 <close> = require("sim").new() end
  collectgarbage()
  pcall(torch.close)
  s:close()
end
