--- The REPL's help (lua/kernbench/help.lua), completion and pretty printer
-- (lua/kernbench/pretty.lua): every help entry is documented, every
-- function the live modules and metatables hold has an entry (so the help
-- cannot drift from the code), and the texts, completions and printed forms
-- the REPL shows (docs/repl.md).
local lu = require "luaunit"
local H = require "kernbench.help"
local pretty = require "kernbench.pretty"
local tc = require "kernbench.tensor_c"

TestHelp = {}

local function read(path)
  local f = assert(io.open(path, "r"))
  local s = f:read("a")
  f:close()
  return s
end

-- The identifiers inside code (fenced blocks and `spans`) of a doc file.
local words_cache = {}
local function code_words(doc)
  if not words_cache[doc] then
    local words = {}
    local text = read("../../docs/" .. doc):gsub("```.-```", function(block)
      for w in block:gmatch("[%a_][%w_]*") do words[w] = true end
      return ""
    end)
    for span in text:gmatch("`([^`]+)`") do
      for w in span:gmatch("[%a_][%w_]*") do words[w] = true end
    end
    words_cache[doc] = words
  end
  return words_cache[doc]
end

-- Public entries the docs other than docs/repl.md do not describe yet (they
-- belong to docs/lua-api.md and docs/torch.md). The test fails when one of
-- them becomes documented, so that this list only shrinks.
local KNOWN_UNDOCUMENTED = {}

local function documented(g, name)
  local last = name:match("([%w_]+)$")
  for _, doc in ipairs(H.docs_of(g)) do
    if code_words(doc)[last] then return true end
  end
  return false
end

local function has_entry(name)
  return H.lookup(name) ~= nil
end

-- string keys of a table, raw
local function keys(t)
  local out = {}
  for k in next, t do if type(k) == "string" then out[#out + 1] = k end end
  table.sort(out)
  return out
end

function TestHelp:test_every_entry_is_documented_in_its_groups_doc_file()
  local missing, now_documented = {}, {}
  for _, g in ipairs(H.groups) do
    for _, e in ipairs(g.entries) do
      local ok = e[4] == "internal" or documented(g, e[1])
      if KNOWN_UNDOCUMENTED[e[1]] then
        if ok then now_documented[#now_documented + 1] = e[1] end
      elseif not ok then
        missing[#missing + 1] = e[1] .. " (docs/" .. H.docs_of(g)[1] .. ")"
      end
    end
  end
  lu.assertEquals(missing, {})
  lu.assertEquals(now_documented, {}, "documented now: remove from KNOWN_UNDOCUMENTED")
end

-- module tables: every key (functions and fields) has an entry
local function check_module(prefix, t, missing)
  for _, k in ipairs(keys(t)) do
    local name = prefix .. "." .. k
    if not has_entry(name) then missing[#missing + 1] = name end
  end
end

-- method tables of a metatable: every function has an entry recv:name
local function check_methods(recv, mt, missing, where)
  lu.assertNotNil(mt, "no metatable for " .. where)
  local tables = H.method_tables(mt)
  lu.assertTrue(#tables > 0, "no method table found for " .. where)
  for _, t in ipairs(tables) do
    for _, k in ipairs(keys(t)) do
      if type(rawget(t, k)) == "function" and not k:match("^__") then
        local ok = false
        for _, e in ipairs(H.lookup(recv .. ":" .. k) or {}) do
          if e.group.recv == recv then ok = true end
        end
        if not ok then missing[#missing + 1] = recv .. ":" .. k .. " (" .. where .. ")" end
      end
    end
  end
end

function TestHelp:test_every_live_function_has_an_entry()
  local missing = {}
  check_module("sim", sim, missing)
  check_module("kb", kb, missing)
  for _, m in ipairs { "topology", "addr", "components", "probe" } do check_module("kb." .. m, kb[m], missing) end
  local reg = debug.getregistry()
  for _, g in ipairs(H.groups) do
    if g.mt and g.mt:match("^kernbench%.") then check_methods(g.recv, reg[g.mt], missing, g.mt) end
  end
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe") }
  check_module("torch", torch, missing)
  check_module("torch.ahbm", torch.ahbm, missing)
  check_module("torch.accelerator", torch.accelerator, missing)
  local d = torch.empty({ 2, 2 }, { dtype = "f16", dp = torch.DPPolicy {} })
  check_methods("d", getmetatable(d), missing, "DeviceTensor")
  check_methods("h", getmetatable(d.mapped), missing, "Handle")
  lu.assertEquals(H.group_of_value(d).name, "DeviceTensor")
  lu.assertEquals(H.group_of_value(d.mapped).name, "Handle")
  lu.assertEquals(H.group_of_value(torch.DPPolicy {}).name, "DPPolicy")
  local seen_tl
  torch.launch(function(tl) seen_tl = tl end, 1)
  check_module("tl", seen_tl, missing)
  lu.assertEquals(H.group_of_value(seen_tl).name, "tl")
  torch.close()
  lu.assertEquals(missing, {})
end

function TestHelp:test_every_entry_names_something_live()
  local gone = {}
  local torch = kb.torch { topology = kb.topology.load("small_1cube_1pe") }
  local tl_live
  torch.launch(function(tl) tl_live = tl end, 1)
  local roots = { sim = sim, kb = kb, torch = torch, tl = tl_live }
  for _, g in ipairs(H.groups) do
    if not g.recv and g.name ~= "globals" then
      for _, e in ipairs(g.entries) do
        local v = roots[e[1]:match("^([%w_]+)")]
        for k in e[1]:gmatch("%.([%w_]+)") do
          if type(v) == "table" then v = rawget(v, k) else v = nil end
        end
        if v == nil and e[4] ~= "internal" then gone[#gone + 1] = e[1] end
      end
    end
  end
  torch.close()
  lu.assertEquals(gone, {})
end

function TestHelp:test_a_function_value_gives_its_signature_and_summary()
  local text = H.text(kb.topology.load)
  lu.assertStrContains(text, "kb.topology.load([path[, overrides]]) -> t")
  lu.assertStrContains(text, "load and compile a topology")
  local t = kb.topology.load("small_2x2")
  lu.assertStrContains(H.text(t.summary), "t:summary() -> string")
  lu.assertStrContains(H.text(sim.new), "sim.new(")
end

function TestHelp:test_names_of_kernel_functions_and_methods_are_found()
  lu.assertStrContains(H.text("tl.load"), "tl.load(ptr, shape[, dtype])")
  lu.assertStrContains(H.text("tl.dot"), "PE_GEMM")
  lu.assertStrContains(H.text("t:summary"), "t:summary() -> string")
  lu.assertStrContains(H.text("Simulation:run"), "s:run([until_ns | ev])")
  lu.assertStrContains(H.text("Tensor.sum"), "t:sum(")
end

function TestHelp:test_modules_and_values_list_their_entries()
  local text = H.text(kb.topology)
  lu.assertStrContains(text, "kb.topology: loading topologies")
  lu.assertStrContains(text, "kb.topology.implementations")
  lu.assertStrContains(H.text("tl"), "tl.composite")
  lu.assertStrContains(H.text(sim.new()), "s:pe_state")
  lu.assertStrContains(H.text(tc.zeros({ 2 })), "t:matmul")
end

function TestHelp:test_the_overview_lists_globals_modules_and_types()
  local text = H.text()
  for _, s in ipairs { "sim ", "kb ", "help ", "tl ", "kb.topology ", "kb.probe ", "kb.components ", "kb.addr ",
                       "torch ", "Simulation s ", "Topology t ", "Tensor t " } do
    lu.assertStrContains(text, "  " .. s)
  end
end

function TestHelp:test_unknown_things_say_there_is_no_help_and_their_type()
  lu.assertStrContains(H.text(42), "no help for this value: a number")
  lu.assertStrContains(H.text("nope.nothing"), 'no help for "nope.nothing"')
  lu.assertStrContains(H.text(function() end), "no help for this function (a Lua function defined at")
  lu.assertStrContains(H.text(setmetatable({}, { __name = "Thing" })), "a table (Thing)")
end

function TestHelp:test_completion_of_fields_methods_and_globals()
  lu.assertEquals(H.complete("kb.topology.lo"), { "kb.topology.load" })
  local all = H.complete("kb.topology.")
  lu.assertTrue(#all >= 5)
  for _, c in ipairs(all) do lu.assertStrContains(c, "kb.topology.") end
  _G.help_topo = kb.topology.load("small_2x2")
  lu.assertEquals(H.complete("help_topo:su"), { "help_topo:summary" })
  lu.assertEquals(H.complete("help_topo:path_l"), { "help_topo:path_latency_ns" })
  _G.help_tensor = tc.zeros({ 2 })
  lu.assertEquals(H.complete("help_tensor:matm"), { "help_tensor:matmul" })
  _G.help_sim = sim.new()
  lu.assertEquals(H.complete("help_sim:pe_s"), { "help_sim:pe_state" })
  lu.assertEquals(H.complete("help_"), { "help_sim", "help_tensor", "help_topo" })
  lu.assertEquals(H.complete("whil"), { "while" })
  help_topo, help_tensor, help_sim = nil, nil, nil
end

function TestHelp:test_completion_calls_nothing()
  local calls = 0
  local mt = { __index = function() calls = calls + 1 end, __pairs = function() calls = calls + 1 end,
               helpers = { method = function() end } }
  _G.help_proxy = setmetatable({ field = 1 }, mt)
  lu.assertEquals(H.complete("help_proxy."), { "help_proxy.field", "help_proxy.method" })
  lu.assertEquals(H.complete("help_proxy:"), { "help_proxy:method" })
  lu.assertEquals(H.complete("help_proxy.nothing.x"), {})
  lu.assertEquals(calls, 0)
  help_proxy = nil
end

TestPretty = {}

function TestPretty:test_nested_tables_print_as_sorted_literals_with_a_depth_limit()
  lu.assertEquals(kb.pretty({ 3, 1, b = 2, a = { x = "s\n" }, [true] = 1, [1.5] = 0 }),
                  '{3, 1, [1.5] = 0, a = {x = "s\\n"}, b = 2, [true] = 1}')
  lu.assertEquals(kb.pretty({ a = { b = { c = { d = 1 } } } }), "{a = {b = {c = {...} (1 entry)}}}")
  lu.assertEquals(kb.pretty({ a = { b = { c = { d = 1 } } } }, { depth = 5 }), "{a = {b = {c = {d = 1}}}}")
end

function TestPretty:test_long_tables_are_truncated()
  local t = {}
  for i = 1, 25 do t[i] = i end
  local s = kb.pretty(t)
  lu.assertStrContains(s, "18, 19, 20,\n  ... (5 more)\n}")
  lu.assertNotStrContains(s, "21")
end

function TestPretty:test_cycles_and_functions_never_print_addresses()
  local t = { f = print }
  t.self = t
  local s = kb.pretty(t)
  lu.assertEquals(s, "{f = <function (C)>, self = <cycle>}")
  lu.assertNotStrContains(kb.pretty({ setmetatable({}, {}), {} }), "0x")
end

function TestPretty:test_a_tensor_shows_shape_dtype_device_and_its_first_values()
  lu.assertEquals(kb.pretty(tc.arange(12):reshape({ 3, 4 })),
                  "tensor{shape = {3, 4}, dtype = i32, device = cpu, values = {0, 1, 2, 3, 4, 5, 6, 7, ... (4 more)}}")
  lu.assertEquals(kb.pretty(tc.full({ 2 }, 0.5, "f16")),
                  "tensor{shape = {2}, dtype = f16, device = cpu, values = {0.5, 0.5}}")
end

function TestPretty:test_topologies_and_simulations_show_their_summaries()
  local t = kb.topology.load("small_2x2")
  lu.assertEquals(kb.pretty(t), (t:summary():gsub("\n+$", "")))
  lu.assertStrContains(kb.pretty(sim.new { topology = t }), "0 events processed, 0 pending) on topology small_2x2")
end

function TestPretty:test_repl_results_keep_print_for_strings_and_numbers()
  lu.assertEquals(pretty.show(42, "two", nil, 2.5, true), "42\ttwo\tnil\t2.5\ttrue")
  lu.assertEquals(pretty.show({ 1 }, "x"), "{1}\tx")
end
