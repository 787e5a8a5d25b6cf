--- What deadlock reports and s:waiting() say a process waits on: the
-- objects named as tostring names them, and the simulation's state as it is.
local lu = require "luaunit"

TestWaiting = {}

function TestWaiting:test_a_timeout_is_reported_as_a_timeout()
  local s = sim.new()
  local t = s:timeout(5)
  s:spawn{ name = "sleeper", fn = function() t:wait() end }
  lu.assertEquals(s:run(1), "until")
  lu.assertEquals(tostring(t), "timeout #1 (5.000 ns, triggered)")
  local report = s:waiting()
  lu.assertStrContains(report, "process 'sleeper' #1 (test_waiting.lua:")
  lu.assertStrContains(report, ") waiting on timeout #1 (5.000 ns, triggered)")
  lu.assertNotStrContains(report, "event #1")
  -- one with a value: tostring says it, and it is named the same way
  local tv = s:timeout(2, "v")
  lu.assertEquals(tostring(tv), "timeout #3 (2.000 ns, value 'v', triggered)")
  lu.assertEquals(s:run(), "empty")
  lu.assertEquals(tostring(t), "timeout #1 (5.000 ns, processed)")
end

function TestWaiting:test_joining_a_process_names_the_process_as_tostring_does()
  local s = sim.new()
  local never = s:event("never")
  local q = s:spawn{ name = "q", fn = function() never:wait() end }
  s:spawn{ name = "joiner", fn = function() q:wait() end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  err = tostring(err)
  lu.assertStrContains(tostring(q), "process 'q' #1 (waiting, ")
  lu.assertStrContains(err, "process 'joiner' #2 (test_waiting.lua:")
  lu.assertStrContains(err, ") waiting on process 'q' #1 (alive)")
  lu.assertNotStrContains(err, "event 'q'")
  -- messages about the process as an event name it so too
  local ok2, err2 = pcall(q.value, q)
  lu.assertFalse(ok2)
  lu.assertStrContains(err2, "process 'q' #1 has not been triggered yet")
end

function TestWaiting:test_a_joiner_left_blocked_hears_the_process_finished_or_failed()
  local s = sim.new()
  local w = s:spawn{ name = "w", fn = function() s:sleep(2) return 1 end }
  -- s:run(w) drops the waits added to w after it began: 'late' stays blocked
  s:spawn{ name = "late", fn = function() s:sleep(1) w:wait() end }
  lu.assertEquals(s:run(w), 1)
  lu.assertStrContains(s:waiting(), ") waiting on process 'w' #1 (finished)")
  local f = s:spawn{ name = "f", fn = function() s:sleep(2) error("boom") end }
  s:spawn{ name = "late2", fn = function() s:sleep(1) f:wait() end }
  lu.assertFalse(pcall(s.run, s, f))
  lu.assertStrContains(s:waiting(), ") waiting on process 'f' #3 (failed)")
end

function TestWaiting:test_waiting_from_a_process_does_not_claim_quiescence()
  local s = sim.new()
  local go = s:event("go")
  s:spawn{ name = "holder", fn = function() go:wait() end }
  local seen
  s:spawn{ name = "asker", fn = function()
    s:sleep(1)
    seen = s:waiting() -- the asker runs: nothing is queued, yet the run goes on
    s:sleep(10)
  end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(seen, "simulation running at t=1.000 ns with 0 events queued and 1 process waiting:\n"
    .. "  process 'holder' #1 (test_waiting.lua:")
  lu.assertNotStrContains(seen, "quiescent")
  -- the deadlock at the end of the run, when the queue is empty, is quiescent
  lu.assertStrContains(tostring(err), "deadlock: simulation quiescent at t=11.000 ns with 1 process still "
    .. "waiting:\n  process 'holder' #1 (test_waiting.lua:")
  lu.assertStrContains(tostring(err), ") waiting on event 'go' #1 (pending)")
  lu.assertStrContains(s:waiting(), "simulation quiescent at t=11.000 ns with 1 process still waiting:")
end

function TestWaiting:test_waiting_between_runs_counts_the_queued_events()
  local s = sim.new()
  s:spawn{ name = "holder", fn = function() s:event():wait() end }
  s:spawn{ name = "sleeper", fn = function() s:sleep(10) end }
  s:timeout(3)
  lu.assertEquals(s:run(1), "until")
  local report = s:waiting()
  lu.assertStrContains(report, "simulation at t=1.000 ns with 2 events queued and 1 process waiting:\n")
  lu.assertNotStrContains(report, "quiescent")
  lu.assertEquals(s:run(5), "until")
  lu.assertStrContains(s:waiting(), "simulation at t=5.000 ns with 1 event queued and 1 process waiting:")
  lu.assertFalse(pcall(s.run, s)) -- the deadlock
  lu.assertStrContains(s:waiting(), "simulation quiescent at t=10.000 ns with 1 process still waiting:")
end

function TestWaiting:test_a_cancelled_request_says_it_was_cancelled()
  local s = sim.new()
  local st = s:store(nil, "q")
  local req = st:get_event()
  lu.assertEquals(tostring(req), "get request #1 from store 'q' (pending)")
  s:spawn{ name = "getter", fn = function() req:wait() end }
  s:spawn{ name = "canceller", fn = function() s:sleep(1) lu.assertTrue(req:cancel()) end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertEquals(tostring(req), "get request #1 from store 'q' (cancelled)")
  lu.assertStrContains(tostring(err), ") waiting on get request #1 from store 'q' (cancelled)")
  lu.assertNotStrContains(tostring(err), "(pending)")
  -- a cancelled resource request too; an uncancelled one still says pending
  local r = s:resource(1, "bus")
  local held = r:request()
  local waiting_req = r:request()
  local cancelled = r:request()
  lu.assertTrue(cancelled:cancel())
  lu.assertFalse(cancelled:cancel())
  lu.assertStrContains(tostring(cancelled), "for resource 'bus' (cancelled)")
  lu.assertStrContains(tostring(waiting_req), "for resource 'bus' (pending)")
  s:run(2)
  lu.assertStrContains(tostring(held), "for resource 'bus' (processed)")
end
