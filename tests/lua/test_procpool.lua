--- kernbench.procpool (src/luasim/lprocpool.c): commands run at most `jobs` at
-- once, their exit statuses and signals, output captured to files, on_done
-- called once per command, failures reported, a missing program refused
-- before anything starts, a failing callback terminating the other
-- children. Behaviour only: the children wait for each other through
-- files, never for a fixed time.
local lu = require "luaunit"
local testfs = require "testfs"
local pool = require "kernbench.procpool"

TestProcpool = {}

local dir

function TestProcpool:setUp() dir = testfs.tempdir("kb_procpool") end

function TestProcpool:tearDown() testfs.remove(dir) end

local read = testfs.read

local function sh(script) return { "sh", "-c", script } end

function TestProcpool:test_statuses_in_command_order()
  local rs = pool.run({ sh("exit 0"), sh("exit 3"), sh("kill -TERM $$"), { argv = { "true" } } }, { jobs = 2 })
  lu.assertEquals(#rs, 4)
  lu.assertEquals(rs[1], { ok = true, status = 0 })
  lu.assertEquals(rs[2], { ok = false, status = 3 })
  lu.assertEquals(rs[3], { ok = false, signal = 15 })
  lu.assertEquals(rs[4], { ok = true, status = 0 })
end

function TestProcpool:test_output_captured()
  local rs = pool.run({
    { argv = sh("echo out1; echo err1 >&2"), stdout = dir .. "/1.out", stderr = dir .. "/1.err" },
    { argv = sh("echo out2; echo err2 >&2"), stdout = dir .. "/2.log", stderr = dir .. "/2.log" },
  })
  lu.assertTrue(rs[1].ok and rs[2].ok)
  lu.assertEquals(read(dir .. "/1.out"), "out1\n")
  lu.assertEquals(read(dir .. "/1.err"), "err1\n")
  lu.assertEquals(read(dir .. "/2.log"), "out2\nerr2\n")
end

-- Each child leaves a marker while it runs and records how many markers
-- it sees: never more than `jobs`.
function TestProcpool:test_concurrency_bound()
  local cmds = {}
  for i = 1, 8 do
    cmds[i] = { argv = sh(([[
      touch %s/run.%d
      ls %s | grep -c '^run\.' > %s/seen.%d
      i=0; while [ $i -lt 200 ]; do i=$((i + 1)); done
      rm %s/run.%d]]):format(dir, i, dir, dir, i, dir, i)) }
  end
  for _, jobs in ipairs { 1, 2, 3 } do
    local rs = pool.run(cmds, { jobs = jobs })
    for i = 1, 8 do
      lu.assertTrue(rs[i].ok)
      local seen = tonumber(read(("%s/seen.%d"):format(dir, i)))
      lu.assertTrue(seen >= 1 and seen <= jobs, ("jobs %d, command %d saw %d running"):format(jobs, i, seen))
    end
  end
end

-- With jobs = 2, two children run together: each waits for the other's
-- marker (a guard ends the wait, failing, if the pool never ran them side by side).
function TestProcpool:test_runs_jobs_at_once()
  local function waiter(me, other)
    return sh(([[touch %s/%s; n=0
      while [ ! -e %s/%s ]; do n=$((n + 1)); [ $n -gt 20000 ] && exit 1; sleep 0.01; done]]):format(dir, me, dir, other))
  end
  local rs = pool.run({ waiter("a", "b"), waiter("b", "a") }, { jobs = 2 })
  lu.assertEquals(rs, { { ok = true, status = 0 }, { ok = true, status = 0 } })
end

function TestProcpool:test_on_done_once_per_command()
  local seen, counts = {}, {}
  local cmds = {}
  for i = 1, 5 do cmds[i] = sh("exit " .. (i - 1)) end
  pool.run(cmds, { jobs = 2, on_done = function(i, r, done, total)
    lu.assertEquals(total, 5)
    seen[#seen + 1] = i
    counts[#counts + 1] = done
    lu.assertEquals(r.status, i - 1)
  end })
  table.sort(seen)
  lu.assertEquals(seen, { 1, 2, 3, 4, 5 })
  lu.assertEquals(counts, { 1, 2, 3, 4, 5 })
end

function TestProcpool:test_failures_reported_not_raised()
  local rs = pool.run({ sh("exit 1"), sh("exit 0"), sh("exit 255") }, { jobs = 1 })
  lu.assertEquals({ rs[1].ok, rs[2].ok, rs[3].ok }, { false, true, false })
  lu.assertEquals({ rs[1].status, rs[3].status }, { 1, 255 })
end

function TestProcpool:test_missing_program_is_an_error_before_anything_runs()
  local marker = dir .. "/ran"
  lu.assertErrorMsgContains("command 2: cannot run 'kb_no_such_program': no such program in PATH", pool.run,
    { sh("touch " .. marker), { "kb_no_such_program", "x" } })
  lu.assertNil(io.open(marker))
  lu.assertErrorMsgContains("cannot run '/nonexistent/prog': No such file or directory", pool.run,
    { { "/nonexistent/prog" } })
  lu.assertErrorMsgContains("not an executable file", pool.run, { { dir } })
end

function TestProcpool:test_output_file_that_cannot_be_opened()
  lu.assertErrorMsgContains("cannot open the stdout file '/nonexistent/dir/o'", pool.run,
    { { argv = { "true" }, stdout = "/nonexistent/dir/o" } })
end

-- A callback that raises: its error comes out of run, after the other
-- running child (which waits forever) has been terminated and reaped.
function TestProcpool:test_callback_error_terminates_the_others()
  local pidfile = dir .. "/pid"
  local cmds = {
    sh(("n=0; while [ ! -s %s ]; do n=$((n + 1)); [ $n -gt 20000 ] && exit 1; sleep 0.01; done"):format(pidfile)),
    sh(("echo $$ > %s.tmp; mv %s.tmp %s; while :; do sleep 1; done"):format(pidfile, pidfile, pidfile)),
  }
  local ok, err = pcall(pool.run, cmds, { jobs = 2, on_done = function(i) error("stop at " .. i) end })
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "stop at 1")
  local pid = read(pidfile):match("%d+")
  lu.assertNotNil(pid)
  lu.assertFalse(os.execute("kill -0 " .. pid .. " 2>/dev/null") == true, "the sibling still runs")
end

function TestProcpool:test_bad_arguments()
  lu.assertErrorMsgContains("jobs must be an integer from 1 to 1024", pool.run, { sh("true") }, { jobs = 0 })
  lu.assertErrorMsgContains("jobs must be an integer from 1 to 1024", pool.run, { sh("true") }, { jobs = 1.5 })
  lu.assertErrorMsgContains("command 1 must be a table", pool.run, { "true" })
  lu.assertErrorMsgContains("argv[2] must be a string", pool.run, { { "true", 3 } })
  lu.assertErrorMsgContains("on_done must be a function", pool.run, { sh("true") }, { on_done = 1 })
  lu.assertEquals(pool.run({}), {})
end

function TestProcpool:test_helpers()
  lu.assertTrue(pool.cpus() >= 1)
  lu.assertEquals(math.type(pool.pid()), "integer")
  local exe = pool.exe()
  lu.assertStrContains(exe, "kernbench")
  lu.assertNotNil(io.open(exe))
end
