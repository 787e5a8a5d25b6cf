--- Containers, priority and filter stores, priority and preemptive resources
--- (docs/lua-api.md).
local lu = require "luaunit"

TestShared = {}

function TestShared:test_constructors_refuse_bad_arguments()
  local s = sim.new()
  local function err(f, ...) local ok, e = pcall(f, ...) lu.assertFalse(ok) return e end
  lu.assertStrContains(err(s.container, s, 0), "capacity must be > 0")
  lu.assertStrContains(err(s.container, s, 5, -1), "init must be >= 0")
  lu.assertStrContains(err(s.container, s, 5, 6), "init (6.0) must be <= capacity (5.0)")
  lu.assertStrContains(err(s.container, s, {capacity = "x"}), "capacity must be a number")
  lu.assertStrContains(err(s.priority_store, s, 0), "capacity must be >= 1")
  lu.assertStrContains(err(s.filter_store, s, {capacity = 1.5}), "capacity must be an integer")
  lu.assertStrContains(err(s.priority_resource, s, 0), "capacity must be >= 1")
  -- the smallest integer is printed as it is (it was converted to an int: undefined)
  lu.assertStrContains(err(s.preemptive_resource, s, math.mininteger), "(got -9223372036854775808)")
  lu.assertStrContains(err(s.filter_store, s, math.mininteger), "(got -9223372036854775808;")
  local c = s:container()
  lu.assertStrContains(err(c.put, c, 0), "amount must be > 0")
  lu.assertStrContains(err(c.get_event, c, 0 / 0), "amount must be > 0")
  local ps = s:priority_store()
  lu.assertStrContains(err(ps.put, ps, "x"), "orders its items by number")
  lu.assertStrContains(err(ps.put, ps, "x", 0 / 0), "priority must not be NaN")
  local pr = s:preemptive_resource()
  lu.assertStrContains(err(pr.request, pr, "high"), "priority must be a number")
  lu.assertStrContains(err(c.level, ps), "c:level()")
end

function TestShared:test_blocking_calls_from_the_main_script_complete_or_raise()
  local s = sim.new()
  local c = s:container(10, 5, "tank")
  c:get(2)
  lu.assertEquals(c:level(), 3)
  local ok, e = pcall(c.get, c, 4)
  lu.assertFalse(ok)
  lu.assertStrContains(e, "c:get() would block (the container does not hold that much)")
  lu.assertEquals(c:getters(), 0) -- nothing left queued
  local ps = s:priority_store(1)
  ps:put("a", 2)
  lu.assertFalse(pcall(ps.put, ps, "b", 1))
  lu.assertEquals(ps:putters(), 0)
  lu.assertEquals(ps:get(), "a")
  s:run()
end

function TestShared:test_levels_are_integers_when_whole()
  local s = sim.new()
  local c = s:container()
  lu.assertNil(c:capacity())
  c:put(1.5)
  lu.assertEquals(c:level(), 1.5)
  c:put(0.5)
  lu.assertEquals(math.type(c:level()), "integer")
  s:run()
end

function TestShared:test_a_filter_that_raises_fails_the_run_naming_the_request()
  local s = sim.new()
  local fs = s:filter_store(nil, "tags")
  s:spawn(function() fs:get(function(v) error("bad filter") end) end)
  s:spawn(function() s:sleep(1) fs:put(1) end)
  local ok, e = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrMatches(tostring(e), ".*the filter of get request #%d+ from filter store 'tags' raised an error: .*bad filter.*")
end

function TestShared:test_a_filter_cannot_block()
  local s = sim.new()
  local fs = s:filter_store()
  s:spawn(function() fs:get(function(v) s:sleep(1) return true end) end)
  s:spawn(function() fs:put(1) end)
  local ok, e = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(tostring(e), "raised an error")
end

function TestShared:test_objects_say_what_they_are()
  local s = sim.new()
  lu.assertEquals(tostring(s:container(10, 4, "credits")),
    "container 'credits' (level 4 of 10, 0 getters and 0 putters waiting)")
  lu.assertEquals(tostring(s:priority_store(2, "q")), "priority store 'q' (0 items, capacity 2, 0 getters and 0 putters waiting)")
  lu.assertEquals(tostring(s:preemptive_resource(1, "arb")),
    "preemptive resource 'arb' (0 of 1 in use, 0 getters and 0 putters waiting)")
  local fs = s:filter_store(nil, "tags")
  lu.assertStrMatches(tostring(fs:get_event()), "get request #%d+ from filter store 'tags' %(pending%)")
  local pr = s:priority_resource(1, "bus")
  lu.assertStrMatches(tostring(pr:request(2)), "request #%d+ for priority resource 'bus' %(triggered%)")
end

function TestShared:test_a_process_blocked_on_a_container_is_reported()
  local s = sim.new()
  local c = s:container(5, 0, "credits")
  s:spawn{name = "tx", fn = function() c:get(1) end}
  local ok, e = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrMatches(e, ".*process 'tx' #1 .*waiting on get request #%d+ from container 'credits' %(pending%).*")
end

function TestShared:test_preemption_without_a_process_takes_the_slot_silently_documented()
  -- a user whose request was made by the main script has no process to
  -- interrupt: it just loses its slot (docs/decisions.md, issue 41)
  local s = sim.new()
  local pr = s:preemptive_resource(1)
  local low = pr:request(5)
  local got
  s:spawn(function() local req = pr:request(1) req:wait() got = s:now() pr:release(req) end)
  s:run()
  lu.assertEquals(got, 0)
  lu.assertTrue(low:processed())
  lu.assertEquals(pr:in_use(), 0)
end

function TestShared:test_shared_objects_do_not_depend_on_the_collector()
  local function model(collect)
    local s = sim.new()
    local fs = s:filter_store()
    local c = s:container(3)
    for i = 1, 6 do fs:get_event(function(v) return v % 2 == i % 2 end) c:put_event(1) end
    if collect then collectgarbage() collectgarbage() end
    for i = 1, 4 do fs:put(i) end
    s:run()
    return fs:count(), fs:getters(), c:level(), c:putters()
  end
  lu.assertEquals({model(true)}, {model(false)})
  lu.assertEquals({model(true)}, {0, 2, 3, 3})
end
