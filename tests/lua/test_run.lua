--- Run control, statistics, and errors with context.
local lu = require "luaunit"

TestRun = {}

function TestRun:test_run_until_stops_before_the_limit_and_advances_the_clock()
  local s = sim.new()
  local ticks = {}
  s:spawn(function() for i = 1, 5 do s:sleep(10) ticks[#ticks + 1] = s:now() end end)
  lu.assertEquals(s:run(30), "until")
  lu.assertEquals(ticks, { 10, 20 }) -- the tick at exactly 30 is not processed yet
  lu.assertEquals(s:now(), 30)
  lu.assertEquals(s:run(), "empty")
  lu.assertEquals(ticks, { 10, 20, 30, 40, 50 })
  lu.assertEquals(s:run(100), "empty")
  lu.assertEquals(s:now(), 100)
end

function TestRun:test_step_processes_events_one_at_a_time()
  local s = sim.new()
  local n = 0
  s:spawn(function() for _ = 1, 3 do s:sleep(1) n = n + 1 end end)
  lu.assertEquals(s:step(), 1) -- the start
  lu.assertEquals(n, 0)
  lu.assertEquals(s:step(2), 2)
  lu.assertEquals(n, 2)
  lu.assertEquals(s:step(10), 2) -- the last wake-up and the completion event
  lu.assertEquals(n, 3)
  lu.assertEquals(s:step(), 0)
end

function TestRun:test_stop_from_a_process_ends_the_run_early()
  local s = sim.new()
  s:spawn(function() s:sleep(5) s:stop() s:sleep(5) end)
  lu.assertEquals(s:run(), "stopped")
  lu.assertEquals(s:now(), 5)
  lu.assertEquals(s:run(), "empty")
  lu.assertEquals(s:now(), 10)
end

function TestRun:test_stats_report_events_time_and_rates()
  local s = sim.new()
  s:spawn(function() for _ = 1, 100 do s:sleep(1) end end)
  s:run()
  local st = s:stats()
  lu.assertEquals(st.events, 102) -- start, 100 wake-ups, completion event
  lu.assertEquals(st.sim_ns, 100)
  lu.assertEquals(st.resumes, 101)
  lu.assertEquals(st.pending, 0)
  lu.assertEquals(st.processes, 0)
  lu.assertEquals(st.waiting, 0)
  lu.assertTrue(st.wall_s >= 0)
  lu.assertTrue(st.events_per_s >= 0)
end

function TestRun:test_simulations_are_independent()
  local a, b = sim.new(), sim.new()
  a:spawn(function() a:sleep(7) end)
  b:spawn(function() b:sleep(3) end)
  a:run()
  lu.assertEquals(a:now(), 7)
  lu.assertEquals(b:now(), 0)
  b:run()
  lu.assertEquals(b:now(), 3)
end

function TestRun:test_a_closed_simulation_refuses_use()
  local s = sim.new()
  s:close()
  lu.assertErrorMsgContains("is closed", s.run, s)
  lu.assertStrContains(tostring(s), "(closed)")
  s:close() -- closing twice is harmless
end

TestErrors = {}

function TestErrors:test_process_error_names_process_time_and_traceback()
  local s = sim.new()
  s:spawn{ name = "faulty", fn = function() s:sleep(2.5) error("disk on fire") end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertEquals(getmetatable(err).__name, "kernbench.error")
  lu.assertEquals(err.process, "faulty")
  lu.assertEquals(err.time_ns, 2.5)
  lu.assertStrContains(err.message, "disk on fire")
  lu.assertStrContains(err.traceback, "stack traceback:")
  lu.assertStrContains(err.traceback, "test_run.lua")
  lu.assertStrContains(tostring(err), "process 'faulty' failed at t=2.500 ns: ")
end

function TestErrors:test_a_failed_process_fails_its_waiters()
  local s = sim.new()
  local p = s:spawn(function() s:sleep(1) error("boom", 0) end)
  local seen
  s:spawn(function()
    local ok, e = pcall(p.wait, p)
    seen = { ok, e.message }
  end)
  s:run() -- the waiter takes the failure, so the run goes on
  lu.assertEquals(seen, { false, "boom" })
end

function TestErrors:test_deadlock_lists_who_waits_on_what()
  local s = sim.new()
  local q = s:store(nil, "inbox")
  local go = s:event("go")
  s:spawn{ name = "reader", fn = function() q:get() end }
  s:spawn{ name = "starter", fn = function() go:wait() end }
  s:spawn{ name = "service", daemon = true, fn = function() q:get() end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "deadlock: simulation quiescent at t=0.000 ns with 2 processes still waiting")
  lu.assertStrContains(err, "process 'reader' #1 (test_run.lua:")
  lu.assertStrContains(err, "waiting to get from store 'inbox'")
  lu.assertStrContains(err, "process 'starter' #2 (test_run.lua:")
  lu.assertStrContains(err, "waiting on event 'go'")
  lu.assertNotStrContains(err, "service")
  lu.assertStrContains(s:waiting(), "reader")
  lu.assertEquals(s:stats().waiting, 2)
end

function TestErrors:test_run_until_does_not_report_waiting_processes()
  local s = sim.new()
  s:spawn(function() s:event():wait() end)
  lu.assertEquals(s:run(10), "empty")
  lu.assertNotNil(s:waiting())
end

function TestErrors:test_blocking_outside_a_process_is_an_error()
  local s = sim.new()
  lu.assertErrorMsgContains("s:sleep() may only be called inside a process", s.sleep, s, 1)
end

function TestErrors:test_coroutine_yield_inside_a_process_is_reported()
  local s = sim.new()
  s:spawn{ name = "yielder", fn = function() coroutine.yield() end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "process 'yielder' failed")
  lu.assertStrContains(tostring(err), "yielded outside a simulation call")
end

function TestErrors:test_blocking_from_a_nested_coroutine_is_an_error()
  local s = sim.new()
  s:spawn{ name = "outer", fn = function()
    local co = coroutine.wrap(function() s:sleep(1) end)
    co()
  end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "called from a coroutine nested inside process 'outer'")
end

-- Resuming a process by hand ran it at the wrong simulated time and took
-- the wake-up its sleep expected; closing it left the simulation a dead
-- thread. Only the simulation resumes its processes.
function TestErrors:test_a_process_coroutine_cannot_be_resumed_or_closed_by_hand()
  local s = sim.new()
  local co, woke
  s:spawn{ name = "sleeper", fn = function() co = coroutine.running(); s:sleep(10); woke = s:now() end }
  local errs = {}
  s:spawn(function()
    s:sleep(1)
    for _, f in ipairs { coroutine.resume, coroutine.close } do
      local ok, err = pcall(f, co, "stolen")
      lu.assertFalse(ok)
      errs[#errs + 1] = tostring(err)
    end
  end)
  s:run()
  lu.assertEquals(woke, 10) -- woken by its own timeout, at its time
  lu.assertStrContains(errs[1], "coroutine.resume: the coroutine is process 'sleeper'")
  lu.assertStrContains(errs[1], "resumed by the simulation only")
  lu.assertStrContains(errs[2], "coroutine.close: the coroutine is process 'sleeper'")
  -- the user's own coroutines are untouched
  local c = coroutine.create(function(a) return a + coroutine.yield(a) end)
  lu.assertEquals({ coroutine.resume(c, 2) }, { true, 2 })
  lu.assertEquals({ coroutine.resume(c, 3) }, { true, 5 })
  lu.assertTrue(coroutine.close(c))
end

function TestErrors:test_blocking_where_yield_is_impossible_is_an_error()
  local s = sim.new()
  s:spawn(function()
    table.sort({ 3, 1, 2 }, function(a, b) s:sleep(1) return a < b end)
  end)
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "cannot block here")
end

function TestErrors:test_run_from_inside_a_process_is_an_error()
  local s = sim.new()
  s:spawn(function() s:run() end)
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(err), "s:run(): simulation #")
  lu.assertStrContains(tostring(err), "is already running")
end

function TestErrors:test_bad_times_are_rejected_with_the_call_named()
  local s = sim.new()
  lu.assertErrorMsgContains("s:timeout(ns): time must be >= 0 ns", s.timeout, s, -1)
  lu.assertErrorMsgContains("s:timeout(ns): time must be >= 0 ns", s.timeout, s, 0 / 0)
  lu.assertErrorMsgContains("time in ns must be a number (got string)", s.timeout, s, "5")
  lu.assertErrorMsgContains("beyond the simulated range", s.timeout, s, 1e300)
  lu.assertErrorMsgContains("s:run(until_ns): time must be >= 0", s.run, s, -5)
end

function TestErrors:test_spawn_checks_its_arguments()
  local s = sim.new()
  lu.assertErrorMsgContains("function expected", s.spawn, s, 42)
  lu.assertErrorMsgContains("table with a function field 'fn'", s.spawn, s, { name = "x" })
end
