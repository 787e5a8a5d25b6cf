--- Events, timeouts and conditions from Lua.
local lu = require "luaunit"

TestEvent = {}

function TestEvent:test_succeed_wakes_every_waiter_with_the_value()
  local s = sim.new()
  local ev = s:event("ready")
  local got = {}
  for i = 1, 3 do
    s:spawn(function() table.insert(got, { i, ev:wait(), s:now() }) end)
  end
  s:spawn(function() s:sleep(4) ev:succeed("go") end)
  s:run()
  lu.assertEquals(got, { { 1, "go", 4 }, { 2, "go", 4 }, { 3, "go", 4 } })
  lu.assertTrue(ev:processed())
  lu.assertTrue(ev:ok())
end

function TestEvent:test_fail_raises_the_reason_in_waiters()
  local s = sim.new()
  local ev = s:event()
  local ok, err
  s:spawn(function() ok, err = pcall(ev.wait, ev) end)
  s:spawn(function() s:sleep(1) ev:fail({ code = 7 }) end)
  s:run()
  lu.assertFalse(ok)
  lu.assertEquals(err, { code = 7 })
  lu.assertFalse(ev:ok())
end

function TestEvent:test_fail_without_reason_names_the_event()
  local s = sim.new()
  local ev = s:event("link")
  ev:fail()
  local ran, failure = pcall(s.run, s) -- nothing waited on it: the run fails
  lu.assertFalse(ran)
  lu.assertStrContains(tostring(failure), "event 'link' #1 failed at t=0.000 ns and nothing waited on it: "
    .. "event 'link' #1 failed")
  local ok, err = pcall(ev.value, ev)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "event 'link' #1")
  lu.assertStrContains(err, "failed")
end

function TestEvent:test_processed_event_can_be_read_outside_a_process()
  local s = sim.new()
  local ev = s:event()
  ev:succeed(11)
  lu.assertTrue(ev:triggered())
  lu.assertFalse(ev:processed())
  lu.assertEquals(ev:value(), 11) -- triggered: SimPy's value is there already
  lu.assertErrorMsgContains("would block", ev.wait, ev)
  s:run()
  lu.assertEquals(ev:wait(), 11)
  lu.assertEquals(ev:value(), 11)
end

function TestEvent:test_triggering_twice_is_an_error()
  local s = sim.new()
  local ev = s:event("once")
  ev:succeed(1)
  lu.assertErrorMsgContains("event 'once' #1 (triggered) was already triggered", ev.succeed, ev, 2)
  lu.assertErrorMsgContains("already triggered", ev.fail, ev, "x")
end

function TestEvent:test_timeout_succeeds_with_its_value_after_the_delay()
  local s = sim.new()
  local t = s:timeout(2.5, "tick")
  local got
  s:spawn(function() got = { t:wait(), s:now() } end)
  s:run()
  lu.assertEquals(got, { "tick", 2.5 })
  lu.assertErrorMsgContains("only events made by s:event()", t.succeed, t, 1)
end

function TestEvent:test_all_of_returns_values_in_order()
  local s = sim.new()
  local a, b = s:timeout(3, "a"), s:timeout(1, "b")
  local p = s:spawn(function() s:sleep(2) return "p", "ignored" end)
  local got
  s:spawn(function() got = { s:all_of{ a, b, p }:wait(), s:now() } end)
  s:run()
  lu.assertEquals(got, { { "a", "b", "p" }, 3 })
end

function TestEvent:test_all_of_fails_with_the_first_failure()
  local s = sim.new()
  local slow, bad = s:timeout(10), s:event()
  local ok, err, at
  s:spawn(function()
    ok, err = pcall(function() return s:all_of{ slow, bad }:wait() end)
    at = s:now()
  end)
  s:spawn(function() s:sleep(1) bad:fail("broken") end)
  s:run()
  lu.assertFalse(ok)
  lu.assertEquals(err, "broken")
  lu.assertEquals(at, 1)
end

function TestEvent:test_any_of_returns_the_first_value_and_its_index()
  local s = sim.new()
  local never = s:event()
  local got
  s:spawn(function() got = { s:any_of{ never, s:timeout(7, "late"), s:timeout(2, "early") }:wait() } end)
  s:run()
  lu.assertEquals(got, { "early", 3 })
  lu.assertEquals(s:now(), 7) -- the other timeout still happens
end

function TestEvent:test_empty_conditions_succeed_at_once()
  local s = sim.new()
  local got
  s:spawn(function() got = { s:all_of{}:wait(), (s:any_of{}:wait()) } end)
  s:run()
  lu.assertEquals(got, { {} })
end

function TestEvent:test_conditions_reject_foreign_members()
  local s, other = sim.new(), sim.new()
  lu.assertErrorMsgContains("element 2 is a number, not an event, process or request", s.all_of, s, { s:event(), 5 })
  lu.assertErrorMsgContains("element 1 belongs to another simulation", s.any_of, s, { other:event() })
end

function TestEvent:test_tostring_describes_the_event()
  local s = sim.new()
  lu.assertEquals(tostring(s:event("x")), "event 'x' #1 (pending)")
  lu.assertEquals(tostring(s:all_of{ s:event() }), "all_of event #3 (pending, 0 of 1 children processed)")
end
