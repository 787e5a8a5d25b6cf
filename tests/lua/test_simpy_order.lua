--- SimPy's order within one instant: what the shortcut may and may not change,
-- failures nothing takes, and the calls made outside a process.
-- (Scenario-by-scenario comparisons with SimPy are in tests/conformance.)
local lu = require "luaunit"

TestSimpyOrder = {}

-- A model with zero-time store, resource and sleep operations, some alone
-- in their instant (where a process may continue at once) and some not.
local function model(s, log)
  local q, r = s:store(2, "q"), s:resource(1, "r")
  s:spawn(function()
    for i = 1, 6 do
      q:put(i)
      log[#log + 1] = ("t=%s put %d"):format(s:now(), i)
      if i % 2 == 0 then s:sleep(1) end
    end
  end)
  s:spawn(function()
    for _ = 1, 6 do
      local v = q:get()
      r:acquire()
      log[#log + 1] = ("t=%s got %d"):format(s:now(), v)
      s:sleep(0)
      r:release()
    end
  end)
  s:spawn(function()
    s:sleep(5)
    for _ = 1, 3 do
      r:acquire()
      log[#log + 1] = ("t=%s holder"):format(s:now())
      s:sleep(0)
      r:release()
      s:sleep(2)
    end
  end)
end

function TestSimpyOrder:test_running_and_stepping_give_the_same_log_and_event_count()
  local ran, stepped = {}, {}
  local a = sim.new()
  model(a, ran)
  a:run()
  local b = sim.new()
  model(b, stepped)
  while b:step() == 1 do end -- one event at a time: never a shortcut
  lu.assertEquals(ran, stepped)
  local sa, sb = a:stats(), b:stats()
  lu.assertEquals(sa.events, sb.events)
  lu.assertEquals(sa.sim_ns, sb.sim_ns)
  -- the run took the shortcut where nothing else was due: fewer resumes
  lu.assertTrue(sa.resumes < sb.resumes, ("resumes %d vs %d"):format(sa.resumes, sb.resumes))
end

function TestSimpyOrder:test_an_event_limit_never_takes_the_shortcut()
  -- lone zero-time operations: a run continues at once, a stepped one cannot
  local function lone(s)
    local q = s:store()
    s:spawn(function() for i = 1, 50 do q:put(i) q:get() s:sleep(0) end end)
  end
  local a, b = sim.new(), sim.new()
  lone(a)
  lone(b)
  a:run()
  lu.assertEquals(b:step(1000), 152) -- start, 3 completions per round, the end
  lu.assertEquals(a:stats().events, 152)
  lu.assertEquals(a:stats().resumes, 1)
  lu.assertEquals(b:stats().resumes, 151)
end

function TestSimpyOrder:test_a_getter_resumes_after_the_putters_completion_is_processed()
  local s = sim.new()
  local q = s:store()
  local log = {}
  s:spawn(function()
    local v = q:get()
    log[#log + 1] = "got " .. v
  end)
  s:spawn(function()
    q:put("x")
    log[#log + 1] = "putter goes on" -- its put is processed first, then the get
  end)
  s:run()
  lu.assertEquals(log, { "putter goes on", "got x" })
end

function TestSimpyOrder:test_a_release_is_processed_before_the_next_waiter_gets_the_slot()
  local s = sim.new()
  local r = s:resource(1)
  local log = {}
  s:spawn(function()
    r:acquire()
    r:release()
    log[#log + 1] = ("releaser: in use %d"):format(r:in_use())
  end)
  s:spawn(function()
    r:acquire()
    log[#log + 1] = "waiter acquired"
    r:release()
  end)
  s:run()
  lu.assertEquals(log, { "releaser: in use 0", "waiter acquired" })
end

-- ---- failures ----

function TestSimpyOrder:test_a_failure_nothing_takes_fails_the_run_when_it_is_processed()
  local s = sim.new()
  local order = {}
  s:spawn(function() s:sleep(1) error("boom", 0) end)
  s:spawn(function() s:sleep(1) order[#order + 1] = "same instant, later" end)
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertEquals(err.message, "boom")
  lu.assertEquals(order, { "same instant, later" })
end

function TestSimpyOrder:test_a_process_that_does_not_catch_a_joined_failure_fails_in_turn()
  local s = sim.new()
  local a = s:spawn{ name = "A", fn = function() s:sleep(1) error("boom", 0) end }
  s:spawn{ name = "B", fn = function() a:wait() end }
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertEquals(err.process, "B")
  lu.assertEquals(err.message.process, "A") -- B raised A's error object
  lu.assertStrContains(err.text, "process 'B' failed at t=1.000 ns: process 'A' failed at t=1.000 ns: boom")
end

function TestSimpyOrder:test_a_condition_takes_its_members_failure()
  local s = sim.new()
  local bad = s:event("bad")
  local caught
  s:spawn(function() s:sleep(2) bad:fail("link down") end)
  s:spawn(function() caught = select(2, pcall(function() return s:all_of{ s:timeout(5), bad }:wait() end)) end)
  s:run()
  lu.assertEquals(caught, "link down")
end

function TestSimpyOrder:test_an_unhandled_condition_fails_with_its_members_reason()
  local s = sim.new()
  local bad = s:event("bad")
  local cond = s:any_of{ bad, s:timeout(9) }
  bad:fail("link down")
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertEquals(err.message, "link down")
  lu.assertStrContains(err.text, "any_of event #")
  lu.assertStrContains(err.text, "nothing waited on it: link down")
  lu.assertFalse(cond:ok())
end

-- ---- outside a process ----

function TestSimpyOrder:test_calls_outside_a_process_complete_at_once_or_say_why_not()
  local s = sim.new()
  local q = s:store(1)
  q:put(1) -- room: goes in at once
  lu.assertEquals(q:count(), 1)
  lu.assertErrorMsgContains("st:put() would block (the store is full)", q.put, q, 2)
  s:spawn(function() q:get() end)
  s:spawn(function() q:get() end)
  s:step() -- the first getter takes the item; its completion is queued
  s:step() -- the second waits
  lu.assertEquals(q:count(), 0)
  lu.assertErrorMsgContains("st:get() would block (the store is empty)", q.get, q)
  q:put(2) -- the waiting getter is served when this put is processed
  lu.assertErrorMsgContains("st:get() would block (gets made earlier are waiting for its items)", q.get, q)
  s:run()
  lu.assertEquals(q:count(), 0)
  local r = s:resource(1)
  r:acquire()
  lu.assertErrorMsgContains("r:acquire() would block (every slot is in use)", r.acquire, r)
  r:release()
end

-- ---- run control ----

function TestSimpyOrder:test_peek_gives_the_next_event_time()
  local s = sim.new()
  lu.assertEquals(s:peek(), math.huge)
  s:timeout(7)
  s:timeout(2.5)
  lu.assertEquals(s:peek(), 2.5)
  s:step()
  lu.assertEquals(s:peek(), 7)
  s:run()
  lu.assertEquals(s:peek(), math.huge)
end

function TestSimpyOrder:test_run_until_before_now_is_an_error()
  local s = sim.new()
  s:run(10)
  lu.assertErrorMsgContains("s:run(until_ns): until 5.000 ns is before the current time t=10.000 ns", s.run, s, 5)
  lu.assertEquals(s:run(10), "empty") -- until == now: nothing to do
end

function TestSimpyOrder:test_a_store_collected_with_its_completion_queued_stays_valid()
  -- a put from the main script queues its completion; the store then loses
  -- its last reference and is collected before the completion runs (a use
  -- after free here shows under the sanitizer build)
  local s = sim.new()
  do
    local q = s:store(1)
    q:put(1)
  end
  collectgarbage()
  collectgarbage()
  lu.assertEquals(s:peek(), 0) -- the completion is still queued
  s:run()
  lu.assertEquals(s:stats().events, 1)
  local r = s:resource(1)
  r:acquire()
  r:release() -- the release's processing is queued
  r = nil
  collectgarbage()
  collectgarbage()
  s:run()
  lu.assertEquals(s:stats().events, 2)
end
