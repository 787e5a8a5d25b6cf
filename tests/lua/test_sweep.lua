--- kernbench sweep (lua/kernbench/sweep/): sweep-file validation errors
-- naming the file and key, expansion (grid, zip, ranges, explicit points),
-- ids stable under reordering, the journal's torn-line handling and
-- last-line-wins, and the outputs' order and bytes.
local lu = require "luaunit"
local testfs = require "testfs"
local sfile = require "kernbench.sweep.file"
local journal = require "kernbench.sweep.journal"
local outputs = require "kernbench.sweep.outputs"

TestSweep = {}

local dir

function TestSweep:setUp() dir = testfs.tempdir("kb_sweep") end

function TestSweep:tearDown() testfs.remove(dir) end

local function write(name, text)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
  return path
end

local read = testfs.read

local function load(text, name)
  return sfile.load(write(name or "s.lua", text))
end

-- The error message of loading text, which must fail.
local function load_error(text)
  local ok, e = pcall(load, text)
  lu.assertFalse(ok, "expected an error")
  lu.assertTrue(sfile.is_error(e), "not a sweep-file error: " .. tostring(e))
  return tostring(e)
end

local PROBE = [[probe = true, topology = "small_1cube_1pe", case = "h2d-1hop", ]]

function TestSweep:test_validation_errors_name_file_and_key()
  local cases = {
    { "return 3", "a sweep file returns a table" },
    { "return { " .. PROBE .. " axes = { set = { ['cube.components.router.attrs.overhead_ns'] = {1} } }, colour = 1 }",
      "colour: unknown key" },
    { "return { axes = { param = { n_elem = {1} } } }", "bench: missing" },
    { "return { bench = 'no-such-bench-here', axes = { param = { n = {1} } } }", "bench: no bench 'no-such-bench-here'" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elm = {8} } } }", "axes.param[\"n_elm\"][1]: " },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {0} } } }", "expected at least 1" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {} } } }", "at least one value" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {8, 8} } } }", "value 8 is listed twice" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {from = 8, to = 1, step = 1} } } }",
      "from <= to" },
    { "return { bench = 'ccl-allreduce', mode = 'zip', axes = { param = { n_elem = {8, 16}, root = {'center'} } } }",
      "mode = \"zip\" needs axes of one length" },
    { "return { bench = 'ccl-allreduce', mode = 'cross', axes = { param = { n_elem = {8} } } }", "mode: must be" },
    { "return { bench = 'ccl-allreduce', param = { n_elem = 8 }, axes = { param = { n_elem = {8} } } }",
      "both a fixed option and an axis" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {8} } }, metrics = { 'result..x' } }",
      "metrics[1]: a metric is a path" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {8} } }, derived = { d = 3 } }",
      "derived.d: must be a function" },
    { "return { bench = 'ccl-allreduce', axes = { param = { n_elem = {8} } }, plots = { { x = 'n_elem', y = 'nope' } } }",
      "plots[1]: 'nope' is not a column" },
    { "return { " .. PROBE .. " axes = { set = { ['cube.nope'] = {1} } } }", "set cube.nope=1: " },
    { "return { probe = true, axes = { set = { ['cube.components.router.attrs.overhead_ns'] = {1} } } }",
      "a probe sweep needs a case" },
    { "return { " .. PROBE .. " points = {} }", "points: must be a non-empty list" },
    { "return { " .. PROBE .. " axes = { case = {'h2d-1hop'} } }", "both a fixed option and an axis" },
    { "return { bench = 'ccl-allreduce' }", "no points" },
  }
  for _, c in ipairs(cases) do
    local msg = load_error(c[1])
    lu.assertStrContains(msg, dir .. "/s.lua: ")
    lu.assertStrContains(msg, c[2])
  end
end

function TestSweep:test_grid_last_axis_fastest_and_order()
  local S = load([[return { bench = "ccl-allreduce",
    axes = { param = { n_elem = { 8, 64 }, buffer_kind = { "tcm", "hbm" } }, topology = { "small_2x2" } } }]])
  lu.assertEquals(#S.points, 4)
  local names = {}
  for i, c in ipairs(S.columns) do names[i] = c.name end
  lu.assertEquals(names, { "buffer_kind", "n_elem", "topology" }) -- sorted by default
  lu.assertEquals(S.points[1].values, { buffer_kind = "tcm", n_elem = 8, topology = "small_2x2" })
  lu.assertEquals(S.points[2].values, { buffer_kind = "tcm", n_elem = 64, topology = "small_2x2" })
  lu.assertEquals(S.points[3].values.buffer_kind, "hbm")
  local T = load([[return { bench = "ccl-allreduce", order = { "n_elem", "buffer_kind" },
    axes = { param = { n_elem = { 8, 64 }, buffer_kind = { "tcm", "hbm" } } } }]])
  lu.assertEquals(T.points[2].values, { n_elem = 8, buffer_kind = "hbm" })
  -- the same points in another order keep their ids
  local ids = {}
  for _, p in ipairs(S.points) do ids[p.values.buffer_kind .. p.values.n_elem] = p.id end
end

function TestSweep:test_zip_ranges_and_points()
  local S = load([[return { bench = "ccl-allreduce", mode = "zip",
    axes = { param = { n_elem = { from = 8, to = 64, times = 2 }, n_slots = { from = 1, to = 4, step = 1 } } } }]])
  lu.assertEquals(#S.points, 4)
  lu.assertEquals(S.points[4].values, { n_elem = 64, n_slots = 4 })
  local P = load([[return { bench = "ccl-allreduce", points = {
    { param = { n_elem = 8 } }, { param = { n_elem = 16, root = "corner" }, topology = "small_2x2" } } }]])
  lu.assertEquals(#P.points, 2)
  lu.assertEquals(P.points[1].values, { n_elem = 8 })
  lu.assertEquals(#P.columns, 3)
  local dup = load_error([[return { bench = "ccl-allreduce", points = { { param = { n_elem = 8 } },
    { param = { n_elem = 8 } } } }]])
  lu.assertStrContains(dup, "points[2]: point 2 is the same as point 1")
end

function TestSweep:test_ids_stable_under_reordering()
  local a = load([[return { bench = "ccl-allreduce", set = { ["cube.components.router.attrs.overhead_ns"] = 1 },
    axes = { param = { n_elem = { 8, 64 }, buffer_kind = { "tcm", "hbm" } } },
    metrics = { "result.crit_ns" } }]], "a.lua")
  local b = load([[return { metrics = { "result.crit_ns" },
    axes = { param = { buffer_kind = { "hbm", "tcm" }, n_elem = { 64, 8 } } }, order = { "n_elem" },
    set = { ["cube.components.router.attrs.overhead_ns"] = 1 }, bench = "ccl-allreduce" }]], "b.lua")
  local function ids(S)
    local t = {}
    for _, p in ipairs(S.points) do t[p.values.buffer_kind .. "/" .. p.values.n_elem] = p.id end
    return t
  end
  lu.assertEquals(ids(a), ids(b))
  lu.assertNotEquals(a.points[1].id, a.points[2].id)
  lu.assertStrMatches(a.points[1].id, "^%x+$")
  lu.assertEquals(#a.points[1].id, 16)
  -- a fixed option is part of the id; 8 and 8.0 are the same command line
  local c = load([[return { bench = "ccl-allreduce", axes = { param = { n_elem = { 8.0, 64 }, buffer_kind = { "tcm", "hbm" } } } }]],
    "c.lua")
  lu.assertNotEquals(ids(a)["tcm/8"], ids(c)["tcm/8"])
  lu.assertEquals(sfile.text(8.0), "8")
  lu.assertEquals(sfile.text(0.1), "0.1")
  lu.assertEquals(sfile.fnv1a64(""), "cbf29ce484222325")
end

function TestSweep:test_argv_of_a_point()
  local S = load([[return { bench = "ccl-allreduce", topology = "small_2x2", data = true,
    axes = { param = { n_elem = { 8 } }, set = { ["cube.components.router.attrs.overhead_ns"] = { 3 } } } }]])
  local a = sfile.argv(S, S.points[1], "/bin/kb", "/o/p.json")
  lu.assertEquals(a[1], "/bin/kb")
  lu.assertEquals({ table.unpack(a, 2, 8) }, { "-q", "-t", "small_2x2", "--set",
    "cube.components.router.attrs.overhead_ns=3", "--param", "n_elem=8" })
  lu.assertEquals({ table.unpack(a, 9) }, { "--data", "--results-json", "/o/p.json", "run", S.bench_path })
  local P = load("return { " .. PROBE .. " axes = { set = { ['cube.components.router.attrs.overhead_ns'] = {1} } } }")
  local b = sfile.argv(P, P.points[1], "kb", "x.json")
  lu.assertEquals({ table.unpack(b, #b - 4) }, { "probe", "--case", "h2d-1hop", "--output", "x.json" })
end

function TestSweep:test_extract_metrics()
  local doc = { result = { crit_ns = 5, points = { { x = 1 }, { x = 2 } } } }
  lu.assertEquals(sfile.extract(doc, { "result", "crit_ns" }), 5)
  lu.assertEquals(sfile.extract(doc, { "result", "points", 2, "x" }), 2)
  lu.assertNil(sfile.extract(doc, { "result", "nope", "x" }))
  lu.assertNil(sfile.extract(doc, { "result", "crit_ns", "x" }))
end

local function line(id, status, extra)
  return journal.encode({ id = id, params = { n = 1 }, status = status, exit_code = status == "ok" and 0 or 1,
                          error = status == "failed" and "boom" or nil, metrics = { { "m", extra } }, wall_s = 0.5 })
end

function TestSweep:test_journal_torn_line_detected_ignored_and_cut()
  local path = write("journal.jsonl", line("a", "ok", 1) .. "\n" .. line("b", "ok", 2) .. "\n" ..
    line("c", "ok", 3):sub(1, 20))
  local r = journal.read(path)
  lu.assertEquals(#r.entries, 2)
  lu.assertTrue(r.torn)
  lu.assertStrContains(r.problems[1], "line 3 is torn")
  lu.assertNil(r.by_id.c)
  journal.repair(path, r)
  journal.append(path, { id = "c", params = {}, status = "ok", exit_code = 0, metrics = { { "m", 3 } } })
  local r2 = journal.read(path)
  lu.assertEquals(#r2.problems, 0)
  lu.assertEquals(#r2.entries, 3)
  lu.assertEquals(r2.by_id.c.metrics.m, 3)
  lu.assertEquals(read(path):sub(-1), "\n")
end

function TestSweep:test_journal_invalid_line_ignored_and_last_line_wins()
  local path = write("journal.jsonl", line("a", "failed") .. "\n" .. "{not json\n" .. line("b", "ok", 2) .. "\n" ..
    line("a", "ok", 7) .. "\n")
  local r = journal.read(path)
  lu.assertEquals(#r.entries, 3)
  lu.assertFalse(r.torn)
  lu.assertStrContains(r.problems[1], "line 2 is not a journal record")
  lu.assertEquals(r.by_id.a.status, "ok")
  lu.assertEquals(r.by_id.a.metrics.m, 7)
  -- a missing journal is empty
  local e, exists = journal.read(dir .. "/none.jsonl")
  lu.assertFalse(exists)
  lu.assertEquals(#e.entries, 0)
end

function TestSweep:test_journal_line_format()
  local t = journal.encode({ id = "ab", params = { n = 8, k = "x" }, status = "failed", exit_code = 3, error = "e\n",
                             metrics = { { "z", 1.5 }, { "a", nil } }, wall_s = 0.25 })
  lu.assertEquals(t, '{"id":"ab","params":{"k":"x","n":8},"status":"failed","exit_code":3,"error":"e\\n",' ..
    '"metrics":{"z":1.5,"a":null},"wall_s":0.25}')
  lu.assertNil(t:find("\n", 1, true))
end

function TestSweep:test_outputs_in_point_order_whatever_the_journal_order()
  local S = load([[return { bench = "ccl-allreduce", axes = { param = { n_elem = { 8, 64, 512 } } },
    metrics = { crit = "result.crit_ns" }, derived = { twice = function(r) return 2 * r.crit end } }]])
  local p = S.points
  local function e(i, status, v)
    return { id = p[i].id, status = status, exit_code = status == "ok" and 0 or 1, metrics = { crit = v } }
  end
  local one = { [p[1].id] = e(1, "ok", 10), [p[3].id] = e(3, "failed") }
  local rows = outputs.rows(S, one)
  lu.assertEquals(rows[2].status, "missing")
  lu.assertEquals(rows[1].values.twice, 20)
  lu.assertNil(rows[3].values.twice)
  local csv = outputs.csv(S, rows)
  lu.assertEquals(csv, "id,status,exit_code,n_elem,crit,twice\n" ..
    p[1].id .. ",ok,0,8,10,20\n" .. p[2].id .. ",missing,,64,,\n" .. p[3].id .. ",failed,1,512,,\n")
  local text, counts = outputs.json(S, rows)
  lu.assertEquals(counts, { ok = 1, failed = 1, missing = 1 })
  local doc = require("kernbench.json").decode(text)
  lu.assertEquals(doc.schema, "kernbench.sweep_results")
  lu.assertEquals(doc.schema_version, 1)
  lu.assertEquals(doc.rows[1].id, p[1].id)
  lu.assertEquals(#doc.rows, 3)
end

function TestSweep:test_command_line_parse()
  local sweep = require "kernbench.sweep"
  local o = sweep.parse { "f.lua", "--out", "d", "--retry-failed", "-j3", "--backend=slurm", "--slurm-opt", "-p x",
                          "--slurm-opt", "-t 5", "--points-per-task", "4", "--sshlogin", ":" }
  lu.assertEquals(o.file, "f.lua")
  lu.assertEquals(o.out, "d")
  lu.assertTrue(o.resume)
  lu.assertEquals(o.jobs, 3)
  lu.assertEquals(o.backend, "slurm")
  lu.assertEquals(o.backend_opts, { slurm_opt = { "-p x", "-t 5" }, points_per_task = "4", sshlogin = { ":" } })
  for _, bad in ipairs { { "--nope" }, { "a", "b" }, { "--out" }, { "-j", "0" }, { "--points-per-task", "x" } } do
    local ok, e = pcall(sweep.parse, bad)
    lu.assertFalse(ok)
    lu.assertNotNil(e.usage)
  end
end
