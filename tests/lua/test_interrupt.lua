--- p:interrupt(cause): SimPy's interrupts (docs/lua-api.md, "Interrupts").
local lu = require "luaunit"

TestInterrupt = {}

function TestInterrupt:test_a_sleeping_process_catches_the_interrupt_and_goes_on()
  local s = sim.new()
  local seen
  local p = s:spawn{name = "worker", fn = function()
    local ok, e = pcall(s.sleep, s, 100)
    seen = {ok, sim.is_interrupt(e), e.cause, e.process, e.by:name(), e.time_ns, s:now()}
    s:sleep(1)
    return "done"
  end}
  s:spawn{name = "boss", fn = function() s:sleep(3) p:interrupt("stop") end}
  s:run()
  lu.assertEquals(seen, {false, true, "stop", "worker", "boss", 3, 3})
  lu.assertEquals(p:value(), "done")
  lu.assertEquals(s:now(), 100) -- the old timeout is still processed
end

function TestInterrupt:test_the_error_says_who_interrupted_whom()
  local s = sim.new()
  local text
  local p = s:spawn{name = "rx", fn = function()
    local _, e = pcall(s.sleep, s, 10)
    text = tostring(e)
  end}
  s:spawn(function() s:sleep(2) p:interrupt({1}) end)
  s:run()
  lu.assertStrMatches(text, "interrupt of process 'rx' at t=2%.000 ns by process 'proc#2': table: .*")
  lu.assertFalse(sim.is_interrupt({cause = 1}))
  lu.assertFalse(sim.is_interrupt(nil))
end

function TestInterrupt:test_an_uncaught_interrupt_fails_the_process_and_the_run()
  local s = sim.new()
  local p = s:spawn{name = "victim", fn = function() s:sleep(10) end}
  s:spawn(function() s:sleep(1) p:interrupt("bye") end)
  local ok, e = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertTrue(sim.is_interrupt(e.message))
  lu.assertEquals(e.message.cause, "bye")
  lu.assertStrContains(e.text, "process 'victim' failed at t=1.000 ns: interrupt of process 'victim'")
end

function TestInterrupt:test_misuse_is_an_error_naming_the_process()
  local s = sim.new()
  local p = s:spawn{name = "short", fn = function() end}
  local selfmsg
  s:spawn{name = "me", fn = function()
    local me = s:current()
    selfmsg = select(2, pcall(me.interrupt, me))
  end}
  s:run()
  lu.assertStrContains(selfmsg, "process 'me' cannot interrupt itself")
  local ok, err = pcall(p.interrupt, p, 1)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "process 'short' has ended and cannot be interrupted")
  ok, err = pcall(p.interrupt, 42)
  lu.assertStrContains(err, "p:interrupt()")
end

function TestInterrupt:test_from_the_main_script_between_runs()
  local s = sim.new()
  local st = s:store()
  local got
  local p = s:spawn(function()
    local ok, e = pcall(st.get, st)
    got = {ok, e.cause, e.by}
  end)
  s:run(5)
  p:interrupt("main")
  s:run()
  lu.assertEquals(got, {false, "main", nil})
  lu.assertEquals(st:getters(), 1) -- the get goes on without it (SimPy)
  st:put("x")
  s:run()
  lu.assertEquals(st:count(), 0) -- taken by the orphaned get
  lu.assertEquals(st:getters(), 0)
end

function TestInterrupt:test_an_orphaned_acquire_keeps_its_slot()
  local s = sim.new()
  local r = s:resource(1, "bus")
  s:spawn(function() r:acquire() s:sleep(5) r:release() end)
  local p = s:spawn(function() pcall(r.acquire, r) end)
  s:spawn(function() s:sleep(1) p:interrupt() end)
  s:run()
  lu.assertEquals(r:in_use(), 1)
  lu.assertEquals(r:queued(), 0)
  local ok, err = pcall(r.release, r) -- held by a request nobody has
  lu.assertStrContains(err, "held by requests")
end

function TestInterrupt:test_interrupts_do_not_depend_on_the_collector()
  local function model(collect)
    local s = sim.new()
    local st = s:store(1)
    local ps = {}
    for i = 1, 4 do ps[i] = s:spawn(function() pcall(st.put, st, i) end) end
    s:run(1)
    for i = 2, 4 do ps[i]:interrupt(i) end
    if collect then collectgarbage() collectgarbage() end
    s:run()
    local out = {}
    while st:count() > 0 do out[#out + 1] = st:get() s:run() end
    return out
  end
  lu.assertEquals(model(true), model(false))
  lu.assertEquals(model(true), {1, 2, 3, 4})
end
