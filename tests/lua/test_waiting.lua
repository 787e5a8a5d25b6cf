--- What deadlock reports and s:waiting() say a process waits on: the
-- objects named as tostring names them.
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
