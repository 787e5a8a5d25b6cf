--- ccl.yaml (docs/ccl.md; spec §4.2, §3.1 steps 1-3): the YAML reader
-- kernbench.yaml_c, the search order, the schema's checks with their
-- file:line:col and key path, the merge rule, world_size's priority, and
-- the shipped file.
local lu = require "luaunit"
local yaml = require "kernbench.yaml_c"
local config = require "kernbench.ccl.config"

TestCclConfig = {}

local MODULE = "kernbench.ccl.algorithms.lrab_hierarchical_allreduce"

-- Files and directories made by a test, removed after it.
local made = {}

local function write(text, path)
  path = path or os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  made[#made + 1] = path
  return path
end

local function tmpdir()
  local d = os.tmpname()
  os.remove(d)
  assert(os.execute(("mkdir -p %q"):format(d)))
  made[#made + 1] = d
  return d
end

function TestCclConfig:tearDown()
  for _, p in ipairs(made) do os.execute(("rm -rf %q"):format(p)) end
  made = {}
end

-- A minimal valid file with a line `extra` under defaults and lines `entry`
-- under the algorithm (a comment stands for either when absent):
--   1 defaults:
--   2   algorithm: a
--   3   buffer_kind: tcm
--   4   n_slots: 4
--   5   <extra>
--   6 algorithms:
--   7   a:
--   8     module: <MODULE>
--   9     <entry>
local function file(extra, entry)
  return write(table.concat({
    "defaults:", "  algorithm: a", "  buffer_kind: tcm", "  n_slots: 4", extra or "  # -",
    "algorithms:", "  a:", "    module: " .. MODULE, entry or "    # -", "",
  }, "\n"))
end

local function load_error(path)
  local ok, err = pcall(config.load, path)
  lu.assertFalse(ok, "the load should fail")
  return tostring(err)
end

-- ---- kernbench.yaml_c ----

function TestCclConfig:test_yaml_scalars_are_typed_only_when_plain()
  local p = write('i: 42\nneg: -7\nhex: 0x1f\nf: 1.5\ne: 1e3\nt: true\nF: False\ns: tcm\nq: "4"\nsq: \'true\'\n')
  local d = assert(yaml.load(p))
  local v = d.value
  lu.assertEquals(math.type(v.i), "integer"); lu.assertEquals(v.i, 42)
  lu.assertEquals(v.neg, -7)
  lu.assertEquals(v.hex, 31)
  lu.assertEquals(math.type(v.f), "float"); lu.assertEquals(v.f, 1.5)
  lu.assertEquals(math.type(v.e), "float"); lu.assertEquals(v.e, 1000.0)
  lu.assertIsTrue(v.t); lu.assertIsFalse(v.F)
  lu.assertEquals(v.s, "tcm")
  lu.assertEquals(v.q, "4")      -- quoted: a string
  lu.assertEquals(v.sq, "true")
end

function TestCclConfig:test_yaml_nulls_are_absent_but_marked()
  local p = write("a:\nb: ~\nc: null\nlist:\n  - 1\n  - ~\n  - 3\n")
  local d = assert(yaml.load(p))
  lu.assertNil(d.value.a); lu.assertNil(d.value.b); lu.assertNil(d.value.c)
  lu.assertEquals(d.key_marks.a, p .. ":1:1")
  lu.assertEquals(d.key_marks.c, p .. ":3:1")
  lu.assertNotNil(d.marks.b)
  -- in a list a null keeps its place: the list stays a sequence
  lu.assertEquals(#d.value.list, 3)
  lu.assertEquals(d.value.list[2], yaml.null)
  lu.assertEquals(d.value.list[3], 3)
end

function TestCclConfig:test_yaml_marks_name_every_value_by_its_key_path()
  local p = write("top:\n  inner:\n    - x: 1\n      y: [2, 3]\n")
  local d = assert(yaml.load(p))
  lu.assertEquals(d.marks[""], p .. ":1:1")
  lu.assertEquals(d.key_marks["top.inner"], p .. ":2:3")
  lu.assertEquals(d.marks["top.inner[0].x"], p .. ":3:10")
  lu.assertEquals(d.marks["top.inner[0].y[1]"], p .. ":4:14")
  lu.assertEquals(d.value.top.inner[1].y[2], 3)
end

function TestCclConfig:test_yaml_errors_come_back_with_their_position()
  local d, err = yaml.load(write("a: [1, 2\nb: 3\n"))
  lu.assertNil(d)
  lu.assertStrMatches(err, ".*:2:2: YAML syntax error: .*")
  d, err = yaml.load("/nonexistent/ccl.yaml")
  lu.assertNil(d)
  lu.assertStrContains(err, "/nonexistent/ccl.yaml: cannot open YAML file")
  d, err = yaml.load(tmpdir())
  lu.assertNil(d)
  lu.assertStrContains(err, "it is a directory")
end

function TestCclConfig:test_yaml_hostile_nesting_is_an_error_not_a_crash()
  local d, err = yaml.load(write(string.rep("[", 200) .. string.rep("]", 200) .. "\n"))
  lu.assertNil(d)
  lu.assertStrContains(err, "nested more than 64 deep")
  d, err = yaml.load(write("a: *x\n"))
  lu.assertNil(d)
  lu.assertStrContains(err, "aliases")
end

-- ---- the search order ----

function TestCclConfig:test_an_explicit_path_comes_first()
  local bench, cwd = tmpdir(), tmpdir()
  write("{}", bench .. "/ccl.yaml"); write("{}", cwd .. "/ccl.yaml")
  local mine = write("{}")
  lu.assertEquals({ config.find { path = mine, bench_dir = bench, cwd = cwd } }, { mine, "explicit" })
end

function TestCclConfig:test_the_command_lines_ccl_is_the_explicit_path()
  local mine, cwd = write("{}"), tmpdir()
  write("{}", cwd .. "/ccl.yaml")
  local saved = kb.ccl_path
  kb.ccl_path = mine
  local got = { config.find { cwd = cwd, bench_dir = false } }
  kb.ccl_path = saved
  lu.assertEquals(got, { mine, "explicit" })
end

function TestCclConfig:test_a_missing_explicit_path_is_an_error()
  lu.assertErrorMsgContains("ccl: no ccl.yaml file '/nonexistent/x.yaml'", config.find, { path = "/nonexistent/x.yaml" })
end

function TestCclConfig:test_beside_the_bench_comes_before_the_working_directory()
  local bench, cwd = tmpdir(), tmpdir()
  write("{}", bench .. "/ccl.yaml"); write("{}", cwd .. "/ccl.yaml")
  lu.assertEquals({ config.find { bench_dir = bench, cwd = cwd } }, { bench .. "/ccl.yaml", "bench" })
end

function TestCclConfig:test_the_working_directory_comes_before_the_shipped_file()
  local bench, cwd = tmpdir(), tmpdir() -- no ccl.yaml beside the bench
  write("{}", cwd .. "/ccl.yaml")
  lu.assertEquals({ config.find { bench_dir = bench, cwd = cwd } }, { cwd .. "/ccl.yaml", "cwd" })
end

function TestCclConfig:test_the_shipped_file_comes_last()
  lu.assertEquals({ config.find { bench_dir = false, cwd = tmpdir() } }, { config.shipped, "shipped" })
  local found, why = config.find { bench_dir = false, cwd = "/nonexistent", shipped = "/nonexistent/shipped.yaml" }
  lu.assertNil(found)
  lu.assertStrContains(why, "no ccl.yaml (looked for /nonexistent/ccl.yaml, /nonexistent/shipped.yaml)")
end

-- ---- the shipped file ----

function TestCclConfig:test_the_shipped_file_loads_and_resolves()
  local cfg = config.load(config.shipped)
  lu.assertEquals(cfg.warnings, {})
  local c = config.resolve(cfg)
  lu.assertEquals(c, {
    name = "lrab_hierarchical_allreduce", source = config.shipped, module = MODULE, topology = "none",
    root = "center", buffer_kind = "tcm", backpressure = "sleep", n_slots = 4, slot_size = 4096,
  })
  lu.assertNil(c.world_size) -- the caller takes the topology's SIP count
  require(c.module)           -- and the module is the algorithm
end

-- ---- the merge rule and world_size ----

function TestCclConfig:test_the_entry_overrides_defaults_key_by_key()
  local cfg = config.load(file("  backpressure: poll", "    buffer_kind: hbm\n    n_elem: 8\n    params: {chunk: 64}"))
  local c = config.resolve(cfg)
  lu.assertEquals(c.buffer_kind, "hbm")      -- the entry's
  lu.assertEquals(c.backpressure, "poll")    -- defaults', not overridden
  lu.assertEquals(c.n_slots, 4)
  lu.assertEquals(c.n_elem, 8)
  lu.assertEquals(c.params, { chunk = 64 })
  lu.assertEquals(c.name, "a")
  lu.assertNil(c.algorithm)                   -- defaults.algorithm chose the entry; `name` says which
  lu.assertNil(c.slot_size)                   -- set by neither: the install's default applies
  c.params.chunk = 1                          -- a copy: the configuration is unchanged
  lu.assertEquals(config.resolve(cfg).params, { chunk = 64 })
end

function TestCclConfig:test_world_size_is_the_entrys_else_defaults_else_nil()
  lu.assertEquals(config.resolve(config.load(file("  world_size: 2", "    world_size: 8"))).world_size, 8)
  lu.assertEquals(config.resolve(config.load(file("  world_size: 2"))).world_size, 2)
  lu.assertNil(config.resolve(config.load(file())).world_size)
end

function TestCclConfig:test_resolve_by_name_and_an_unknown_name_lists_the_known()
  local p = write("algorithms:\n  b:\n    module: " .. MODULE .. "\n    n_slots: 2\n  a:\n    module: " .. MODULE .. "\n")
  local cfg = config.load(p)
  lu.assertEquals(cfg.names, { "b", "a" }) -- file order
  lu.assertEquals(config.resolve(cfg, "b").n_slots, 2)
  lu.assertErrorMsgContains(p .. ": no algorithm 'ring' (known: b, a)", config.resolve, cfg, "ring")
  lu.assertErrorMsgContains("defaults.algorithm is not set and no name was given (known: b, a)", config.resolve, cfg)
end

-- ---- errors: file:line:col: key.path: message ----

function TestCclConfig:test_an_unknown_top_level_key()
  local p = write("defaults: {}\nalgorithm:\n  a: {module: " .. MODULE .. "}\nalgorithms:\n  a: {module: " .. MODULE .. "}\n")
  lu.assertStrContains(load_error(p), p .. ":2:1: algorithm: unknown key in ccl.yaml (known: defaults, algorithms)")
end

function TestCclConfig:test_an_unknown_algorithm_key()
  local p = file(nil, "    mapper: leader_only")
  lu.assertStrContains(load_error(p), p .. ":9:5: algorithms.a.mapper: unknown key in an algorithm entry (known: module, ")
end

function TestCclConfig:test_a_bad_buffer_kind()
  local p = file("  buffer_kind: dram")
  -- line 3 is the file's buffer_kind: tcm, line 5 the duplicate is refused by the reader first
  lu.assertStrContains(load_error(p), p .. ":5:3: duplicate key 'buffer_kind' (first at line 3)")
  p = file(nil, "    buffer_kind: dram")
  lu.assertStrContains(load_error(p), p .. ":9:18: algorithms.a.buffer_kind: expected one of tcm, hbm, sram, got 'dram'")
end

function TestCclConfig:test_n_slots_zero()
  local p = file(nil, "    n_slots: 0")
  lu.assertStrContains(load_error(p), p .. ":9:14: algorithms.a.n_slots: expected an integer from 1 to 1024, got 0")
end

function TestCclConfig:test_a_slot_size_not_a_multiple_of_16()
  local p = file("  slot_size: 20")
  lu.assertStrContains(load_error(p), p .. ":5:14: defaults.slot_size: expected a number of bytes >= 16 and a " ..
    "multiple of 16")
end

function TestCclConfig:test_a_quoted_number_is_a_string()
  local p = file('  slot_size: "4096"')
  lu.assertStrContains(load_error(p), "defaults.slot_size: expected a number of bytes >= 16 and a multiple of 16 " ..
    "(as torch.install_ipcq requires), got '4096' (a quoted string; write numbers without quotes)")
end

function TestCclConfig:test_defaults_algorithm_must_name_an_entry()
  local p = write("defaults:\n  algorithm: ring\nalgorithms:\n  a: {module: " .. MODULE .. "}\n")
  lu.assertStrContains(load_error(p), p .. ":2:14: defaults.algorithm: 'ring' is not an entry of algorithms (known: a)")
end

function TestCclConfig:test_a_module_that_cannot_be_found()
  local p = write("algorithms:\n  a:\n    module: kernbench.ccl.algorithms.nope\n")
  lu.assertStrContains(load_error(p), p .. ":3:13: algorithms.a.module: module 'kernbench.ccl.algorithms.nope' " ..
    "not found: no kernbench/ccl/algorithms/nope.lua on the Lua path")
end

function TestCclConfig:test_a_module_that_fails_to_load_or_is_no_algorithm()
  local dir = tmpdir()
  write("error('broken at load')\n", dir .. "/ccl_cfg_broken.lua")
  write("return {}\n", dir .. "/ccl_cfg_empty.lua")
  local saved = package.path
  package.path = dir .. "/?.lua;" .. package.path
  local p1 = write("algorithms:\n  a:\n    module: ccl_cfg_broken\n")
  local p2 = write("algorithms:\n  a:\n    module: ccl_cfg_empty\n")
  local e1, e2 = load_error(p1), load_error(p2)
  package.path = saved
  lu.assertStrContains(e1, p1 .. ":3:13: algorithms.a.module: module 'ccl_cfg_broken' fails to load: ")
  lu.assertStrContains(e1, "broken at load")
  lu.assertStrContains(e2, p2 .. ":3:13: algorithms.a.module: module 'ccl_cfg_empty' is not a collective algorithm")
end

function TestCclConfig:test_a_missing_module_key()
  local p = write("algorithms:\n  a:\n    topology: none\n")
  lu.assertStrContains(load_error(p), p .. ":2:3: algorithms.a: missing key 'module'")
end

function TestCclConfig:test_hardware_keys_are_refused_naming_the_topology_key()
  local p = file("  vc_chunk_size: 256")
  lu.assertStrContains(load_error(p), p .. ":5:3: defaults.vc_chunk_size: vc_chunk_size is a hardware parameter " ..
    "in kernbench, not a ccl.yaml key: set it in the topology with --set " ..
    "cube.pe_template.components.pe_dma.attrs.vc_chunk_size=VALUE")
  p = file("  ipcq_credit_size_bytes: 16")
  lu.assertStrContains(load_error(p), p .. ":5:3: defaults.ipcq_credit_size_bytes: ipcq_credit_size_bytes is a " ..
    "hardware parameter in kernbench, not a ccl.yaml key: set it in the topology with --set " ..
    "cube.pe_template.components.pe_ipcq.attrs.credit_bytes=VALUE")
end

function TestCclConfig:test_malformed_yaml()
  local p = write("defaults:\n  algorithm: a\n   buffer_kind: tcm\nalgorithms: [\n")
  lu.assertStrMatches(load_error(p), p:gsub("%p", "%%%0") .. ":%d+:%d+: YAML syntax error: .*")
end

function TestCclConfig:test_other_values_checked()
  local cases = {
    { "    topology: hierarchical_3level", "algorithms.a.topology: expected one of none, ring_1d, ring_1d_unidir, " ..
      "mesh_2d, torus_2d, mesh_2d_no_wrap, tree_binary, got 'hierarchical_3level'" },
    { "    backpressure: spin", "algorithms.a.backpressure: expected one of poll, sleep, got 'spin'" },
    { "    world_size: 0", "algorithms.a.world_size: expected an integer >= 1, got 0" },
    { "    n_elem: 1.5", "algorithms.a.n_elem: expected an integer >= 1, got 1.5" },
    { "    root: middle", "algorithms.a.root: expected center, corner or a cube index (an integer >= 0), got 'middle'" },
    { "    root: -1", "algorithms.a.root: expected center, corner or a cube index" },
    { "    params: [1, 2]", "algorithms.a.params: expected a map of parameters (name: value), got a list" },
    { "    n_slots:", "algorithms.a.n_slots: no value (write one, or remove the key)" },
    { "    n_slots: 2000", "algorithms.a.n_slots: expected an integer from 1 to 1024, got 2000" },
  }
  for _, c in ipairs(cases) do
    lu.assertStrContains(load_error(file(nil, c[1])), c[2])
  end
  lu.assertStrContains(load_error(write("- 1\n")), ":1:1: expected a map with the keys defaults and algorithms, got a list")
  lu.assertStrContains(load_error(write("defaults: {}\n")), ":1:1: algorithms: missing")
  lu.assertStrContains(load_error(write("algorithms:\n")), "algorithms: empty")
end

function TestCclConfig:test_every_problem_is_reported_in_file_order()
  local p = file("  n_slots_x: 1", "    n_slots: 0\n    root: far")
  local err = load_error(p)
  local lines = {}
  for l in err:gmatch("[^\n]+") do lines[#lines + 1] = l end
  lu.assertEquals(#lines, 3)
  lu.assertStrContains(lines[1], ":5:3: defaults.n_slots_x: unknown key")
  lu.assertStrContains(lines[2], ":9:14: algorithms.a.n_slots:")
  lu.assertStrContains(lines[3], ":10:11: algorithms.a.root:")
end

-- ---- root_cube ----

function TestCclConfig:test_root_cube_is_accepted_with_a_warning_and_ignored()
  local p = file(nil, "    root_cube: 15")
  local cfg = config.load(p)
  lu.assertEquals(#cfg.warnings, 1)
  lu.assertStrContains(cfg.warnings[1], p .. ":9:5: algorithms.a.root_cube: ignored (the original's unread placeholder)")
  lu.assertNil(config.resolve(cfg).root_cube)
  lu.assertStrContains(load_error(file(nil, "    root_cube: corner")),
    "algorithms.a.root_cube: expected an integer >= 0, got 'corner'")
end

os.exit(lu.LuaUnit.run())
