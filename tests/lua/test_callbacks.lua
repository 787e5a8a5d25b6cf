--- Callbacks, defused failures, s:run(ev), views and what objects print
--- (docs/lua-api.md).
local lu = require "luaunit"

TestCallbacks = {}

function TestCallbacks:test_a_callback_cannot_block_and_its_error_fails_the_run()
  local s = sim.new()
  local ev = s:event("go")
  ev:add_callback(function(e) s:timeout(1):wait() end)
  ev:succeed()
  local ok, e = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(e.text, "a callback of event 'go' #1 failed at t=0.000 ns")
  lu.assertStrContains(e.text, "would block")
end

function TestCallbacks:test_callbacks_run_once_whoever_references_them()
  local s = sim.new()
  local n = 0
  local t = s:timeout(1)
  for _ = 1, 3 do t:add_callback(function() n = n + 1 end) end
  collectgarbage() collectgarbage()
  s:run()
  lu.assertEquals(n, 3)
  local ok, err = pcall(t.add_callback, t, print)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "has been processed: its callbacks have run")
  lu.assertFalse(pcall(t.add_callback, t, 42))
end

function TestCallbacks:test_value_of_a_pending_event_is_an_error_naming_it()
  local s = sim.new()
  local ev = s:event("late")
  local ok, err = pcall(ev.value, ev)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "event 'late' #1 has not been triggered yet")
  ev:succeed(5)
  lu.assertEquals(ev:value(), 5) -- triggered, not processed: SimPy's value
  lu.assertFalse(ev:processed())
end

function TestCallbacks:test_run_until_an_event_of_another_simulation_is_an_error()
  local s, t = sim.new(), sim.new()
  local ok, err = pcall(s.run, s, t:event())
  lu.assertFalse(ok)
  lu.assertStrContains(err, "belongs to another simulation")
end

function TestCallbacks:test_run_until_an_event_from_a_process_is_an_error()
  local s = sim.new()
  local err
  s:spawn(function() err = select(2, pcall(s.run, s, s:timeout(1))) end)
  s:run()
  lu.assertStrContains(err, "already running")
end

function TestCallbacks:test_defuse_keeps_a_failure_from_failing_the_run()
  local s = sim.new()
  local ev = s:event()
  ev:defuse()
  ev:fail("ignored")
  lu.assertEquals(s:run(), "empty")
  lu.assertTrue(ev:defused())
end

function TestCallbacks:test_run_until_an_event_drops_what_waits_behind_its_stop()
  -- SimPy's run(until=ev) stops by raising from ev's callbacks: what was added to ev
  -- after the run began never runs; what was added before it runs first
  local s = sim.new()
  local ev = s:timeout(2, "v")
  local seen = {}
  ev:add_callback(function() seen[#seen + 1] = "before" end)
  local late = s:spawn{name = "late", fn = function()
    s:sleep(1)
    ev:add_callback(function() seen[#seen + 1] = "after" end)
    seen[#seen + 1] = ev:wait()
  end}
  lu.assertEquals(s:run(ev), "v")
  lu.assertEquals(s:now(), 2)
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok) -- 'late' is blocked on ev for good
  lu.assertStrContains(tostring(err), "process 'late' #1")
  lu.assertStrContains(tostring(err), "waiting on timeout #1 (2.000 ns, processed)")
  lu.assertEquals(seen, {"before"})
  lu.assertTrue(late:alive())
end

function TestCallbacks:test_views_list_requests_and_blocked_processes()
  local s = sim.new()
  local r = s:resource(1)
  r:acquire()
  local w = s:spawn(function() r:acquire() end)
  local q = r:request()
  s:run(1)
  local queue = r:queue()
  lu.assertEquals(#queue, 2)
  lu.assertEquals(queue[1], q) -- made before the process ran
  lu.assertEquals(queue[2], w)
  lu.assertEquals(#r:users(), 0) -- the slot was taken by r:acquire()
end

function TestCallbacks:test_processes_say_what_function_they_run()
  local s = sim.new()
  local p = s:spawn(function() end)
  lu.assertStrMatches(tostring(p), "process 'proc#1' #1 %(active, function at .*test_callbacks%.lua:%d+%)")
  local q = s:spawn(string.format, "%d", 1)
  lu.assertStrMatches(tostring(q), "process 'proc#2' #2 %(active, function string%.format %[C%]%)")
  s:run()
  lu.assertStrContains(tostring(p), "(finished, function at ")
end
