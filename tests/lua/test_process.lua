--- Lua processes: spawning, sleeping, time, results.
local lu = require "luaunit"

TestProcess = {}

function TestProcess:test_spawn_passes_arguments_and_keeps_results()
  local s = sim.new()
  local p = s:spawn(function(a, b) s:sleep(a) return a + b, "x" end, 3, 4)
  s:run()
  local r1, r2 = p:wait()
  lu.assertEquals(r1, 7)
  lu.assertEquals(r2, "x")
  lu.assertEquals(s:now(), 3)
  lu.assertFalse(p:alive())
end

function TestProcess:test_table_form_names_the_process()
  local s = sim.new()
  local p = s:spawn{ name = "worker", fn = function(x) return x * 2 end, args = { 21 } }
  lu.assertEquals(p:name(), "worker")
  lu.assertTrue(p:alive())
  s:run()
  lu.assertEquals(p:wait(), 42)
  lu.assertStrContains(tostring(p), "process 'worker'")
  lu.assertStrContains(tostring(p), "finished")
end

function TestProcess:test_default_names_are_numbered()
  local s = sim.new()
  local a = s:spawn(function() end)
  local b = s:spawn(function() end)
  lu.assertEquals(a:name(), "proc#1")
  lu.assertEquals(b:name(), "proc#2")
  lu.assertEquals(b:id(), 2)
end

function TestProcess:test_sleep_resolves_picoseconds()
  local s = sim.new()
  local times = {}
  s:spawn(function()
    s:sleep(1.5)
    times[#times + 1] = s:now()
    s:sleep(0.001)
    times[#times + 1] = s:now_ps()
    s:sleep(0)
    times[#times + 1] = s:now_ps()
  end)
  s:run()
  lu.assertEquals(times, { 1.5, 1501, 1501 })
end

function TestProcess:test_now_is_an_integer_when_whole()
  local s = sim.new()
  s:spawn(function() s:sleep(12) end)
  s:run()
  lu.assertEquals(math.type(s:now()), "integer")
  lu.assertEquals(s:now(), 12)
end

function TestProcess:test_processes_spawned_together_start_in_spawn_order()
  local s = sim.new()
  local order = {}
  for i = 1, 5 do
    s:spawn(function() order[#order + 1] = i end)
  end
  s:run()
  lu.assertEquals(order, { 1, 2, 3, 4, 5 })
end

function TestProcess:test_equal_wake_times_resume_in_sleep_order()
  local s = sim.new()
  local order = {}
  for i = 1, 4 do
    s:spawn(function()
      s:sleep(10 - i) -- different first sleeps, same wake time below
      s:sleep(i)
      order[#order + 1] = i
    end)
  end
  s:run()
  -- all wake at t=10; the one that called sleep first (i=4, at t=6) goes first
  lu.assertEquals(order, { 4, 3, 2, 1 })
end

function TestProcess:test_a_process_can_wait_for_another()
  local s = sim.new()
  local child = s:spawn(function() s:sleep(5) return "done" end)
  local got
  s:spawn(function() got = { child:wait(), s:now() } end)
  s:run()
  lu.assertEquals(got, { "done", 5 })
end

function TestProcess:test_current_is_the_running_process_or_nil()
  local s = sim.new()
  local seen
  local p = s:spawn(function() seen = s:current() end)
  lu.assertNil(s:current())
  s:run()
  lu.assertEquals(seen, p)
end

function TestProcess:test_pcall_inside_a_process_can_span_yields()
  local s = sim.new()
  local ok, msg
  s:spawn(function()
    ok, msg = pcall(function()
      s:sleep(2)
      error("late", 0)
    end)
  end)
  s:run()
  lu.assertFalse(ok)
  lu.assertEquals(msg, "late")
  lu.assertEquals(s:now(), 2)
end

function TestProcess:test_thousands_of_yields_do_not_grow_memory()
  local s = sim.new()
  local function loop(n) for _ = 1, n do s:sleep(1) end end
  s:spawn(loop, 1000)
  s:run()
  collectgarbage()
  local before = collectgarbage("count")
  s:spawn(loop, 100000)
  s:run()
  collectgarbage()
  lu.assertTrue(collectgarbage("count") - before < 64, "memory grew by "
    .. (collectgarbage("count") - before) .. " KiB")
  lu.assertEquals(s:stats().resumes, 101002)
end
