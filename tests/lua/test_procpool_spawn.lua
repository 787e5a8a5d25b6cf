--- kernbench.procpool's one-child calls (src/luasim/lprocpool_spawn.c), used by the
-- sweep backends to follow GNU parallel while they poll files: spawn
-- returns at once, wait polls or waits a bounded time and reaps, kill
-- signals a child or its process group, sleep sleeps. Behaviour only: the
-- children wait for files, never for a fixed time.
local lu = require "luaunit"
local testfs = require "testfs"
local pool = require "kernbench.procpool"

TestProcpoolSpawn = {}

local dir

function TestProcpoolSpawn:setUp() dir = testfs.tempdir("kb_spawn") end

function TestProcpoolSpawn:tearDown() testfs.remove(dir) end

local read = testfs.read

local exists = testfs.exists

-- Waits (bounded) until path exists.
local function wait_file(path)
  for _ = 1, 1000 do
    if exists(path) then return true end
    pool.sleep(0.01)
  end
  return false
end

function TestProcpoolSpawn:test_spawn_returns_at_once_and_wait_reaps()
  local go = dir .. "/go"
  local pid = pool.spawn({ "sh", "-c", ("while [ ! -e %q ]; do sleep 0.01; done; echo done; exit 7"):format(go) },
    { stdout = dir .. "/out", stderr = dir .. "/out", stdin = "/dev/null" })
  lu.assertTrue(pid > 0)
  lu.assertNil(pool.wait(pid))      -- a poll: still waiting for go
  lu.assertNil(pool.wait(pid, 0.05)) -- a bounded wait
  assert(io.open(go, "w")):close()
  local r
  for _ = 1, 500 do
    r = pool.wait(pid, 0.02)
    if r then break end
  end
  lu.assertEquals(r, { ok = false, status = 7 })
  lu.assertEquals(read(dir .. "/out"), "done\n")
  -- reaped: waiting again is an error naming the process
  local ok, err = pcall(pool.wait, pid)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "process " .. pid)
end

function TestProcpoolSpawn:test_group_killed_as_a_whole()
  -- the child leads a group; its own child (a grandchild) is in it too
  local pid = pool.spawn({ "sh", "-c", ("sleep 30 & echo $! > %q/grandchild; wait"):format(dir) }, { group = true })
  lu.assertTrue(wait_file(dir .. "/grandchild"))
  local gc = tonumber(read(dir .. "/grandchild"):match("%d+"))
  while not pool.kill(gc, 0) do pool.sleep(0.01) end
  lu.assertTrue(pool.kill(-pid, "TERM"))
  local r
  repeat r = pool.wait(pid, 0.05) until r
  lu.assertEquals(r, { ok = false, signal = 15 })
  -- the grandchild got the signal too (it is not our child: gone, or a zombie of init)
  for _ = 1, 500 do
    local f = io.open("/proc/" .. gc .. "/stat")
    local st = f and f:read("a")
    if f then f:close() end
    if not st or st:match("^%d+ %b() Z") then gc = nil break end
    pool.sleep(0.01)
  end
  lu.assertNil(gc)
end

function TestProcpoolSpawn:test_errors()
  local ok, err = pcall(pool.spawn, { "kb-no-such-program" })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "procpool.spawn: cannot run 'kb-no-such-program': no such program in PATH")
  ok, err = pcall(pool.spawn, {})
  lu.assertStrContains(err, "argv must list the program")
  ok, err = pcall(pool.spawn, { "true" }, { stdin = dir .. "/missing" })
  lu.assertStrContains(err, "cannot open the stdin file")
  ok, err = pcall(pool.spawn, { "true" }, { stdout = 3 })
  lu.assertStrContains(err, "stdout must be a file name")
  ok, err = pcall(pool.wait, 0)
  lu.assertStrContains(err, "not a process id")
  ok, err = pcall(pool.wait, 1, -1)
  lu.assertStrContains(err, "seconds must be from 0 to 86400")
  ok, err = pcall(pool.kill, 1, "NOPE")
  lu.assertFalse(ok)
  ok, err = pcall(pool.sleep, 61)
  lu.assertStrContains(err, "seconds must be from 0 to 60")
  local r, why = pool.kill(2 ^ 22 + 12345, 0)
  if not r then lu.assertIsString(why) end
end

function TestProcpoolSpawn:test_sleep_is_bounded()
  local t0 = os.clock()
  pool.sleep(0)
  pool.sleep(0.01)
  lu.assertTrue(os.clock() - t0 < 1)
end

-- The guard terminates a child that has not been reaped when its
-- to-be-closed variable goes out of scope by an error.
function TestProcpoolSpawn:test_guard_terminates_on_error()
  local pid
  local ok, err = pcall(function()
    local p, guard = pool.spawn({ "sh", "-c", ("touch %q/started; sleep 30"):format(dir) }, { group = true })
    pid = p
    local _ <close> = guard
    lu.assertTrue(wait_file(dir .. "/started"))
    error("boom")
  end)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "boom")
  -- reaped by the guard: not our child any more
  local wok, werr = pcall(pool.wait, pid)
  lu.assertFalse(wok)
  lu.assertStrContains(tostring(werr), "process " .. pid)
  -- a guard closed after wait reaped its child does nothing
  local p2, g2 = pool.spawn({ "true" })
  local r
  repeat r = pool.wait(p2, 0.05) until r
  lu.assertEquals(r, { ok = true, status = 0 })
  do local _ <close> = g2 end
end
