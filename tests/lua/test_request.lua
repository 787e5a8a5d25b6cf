--- Requests as events: st:put_event, st:get_event, r:request (docs/lua-api.md).
local lu = require "luaunit"

TestRequest = {}

function TestRequest:test_a_get_request_can_wait_in_any_of_with_a_timeout_and_be_cancelled()
  local s = sim.new()
  local q = s:store(nil, "in")
  local log = {}
  s:spawn(function()
    local g = q:get_event()
    local v, i = s:any_of{g, s:timeout(5, "late")}:wait()
    log[#log + 1] = {v, i, s:now()}
    lu.assertFalse(g:triggered())
    lu.assertEquals(q:getters(), 1)
    lu.assertTrue(g:cancel())
    lu.assertFalse(g:cancel()) -- no longer queued
    lu.assertEquals(q:getters(), 0)
  end)
  s:spawn(function() s:sleep(7) q:put("x") end)
  s:run()
  lu.assertEquals(log, {{"late", 2, 5}})
  lu.assertEquals(q:count(), 1) -- nobody took it
end

function TestRequest:test_item_kinds_survive_a_get_request()
  local s = sim.new()
  local q = s:store()
  local items = {1, 2^62, "s", {k = 1}, false, 3.5, math.mininteger}
  for _, v in ipairs(items) do q:put(v) end
  local got = {}
  s:spawn(function()
    for i = 1, #items do got[i] = q:get_event():wait() end
  end)
  s:run()
  lu.assertEquals(got, items)
end

function TestRequest:test_a_put_request_value_is_nil_and_a_cancelled_put_drops_its_item()
  local s = sim.new()
  local q = s:store(1)
  local p1 = q:put_event({1})
  local p2 = q:put_event({2})
  lu.assertTrue(p1:triggered())
  lu.assertFalse(p2:triggered())
  lu.assertTrue(p2:cancel())
  s:run()
  lu.assertNil(p1:value())
  lu.assertEquals(q:get(), {1})
  s:run()
  lu.assertEquals(q:count(), 0)
  lu.assertFalse(p2:triggered())
end

function TestRequest:test_a_resource_request_is_released_by_close()
  local s = sim.new()
  local r = s:resource(1, "bus")
  local seen = {}
  s:spawn(function()
    local req <close> = r:request()
    req:wait()
    seen[#seen + 1] = "a " .. s:now()
    s:sleep(2)
  end)
  s:spawn(function()
    local req <close> = r:request()
    req:wait()
    seen[#seen + 1] = "b " .. s:now()
  end)
  s:run()
  lu.assertEquals(seen, {"a 0", "b 2"})
  lu.assertEquals(r:in_use(), 0)
end

function TestRequest:test_a_process_that_fails_gives_back_its_close_requests()
  local s = sim.new()
  local r = s:resource(1)
  local p = s:spawn(function()
    local req <close> = r:request()
    req:wait()
    error("fault", 0)
  end)
  s:spawn(function()
    lu.assertFalse(pcall(p.wait, p))
    r:acquire()
    r:release()
  end)
  s:run()
  lu.assertEquals(r:in_use(), 0)
end

function TestRequest:test_release_errors_say_what_is_wrong()
  local s = sim.new()
  local r = s:resource(1, "bus")
  local q = s:store()
  local held = r:request()
  local waiting = r:request()
  local ok, err = pcall(r.release, r)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "no slot taken by r:acquire() in use (1 held by requests")
  ok, err = pcall(waiting.release, waiting)
  lu.assertStrContains(err, "still waiting for a slot")
  local g = q:get_event()
  ok, err = pcall(g.release, g)
  lu.assertStrContains(err, "a get request holds nothing to release")
  local other = s:resource(1, "other")
  ok, err = pcall(other.release, other, held)
  lu.assertStrContains(err, "not one of resource 'other'")
  ok, err = pcall(r.release, r, 42)
  lu.assertStrContains(err, "must be a request")
  lu.assertTrue(waiting:cancel())
  r:release(held)
  s:run()
  lu.assertEquals(r:in_use(), 0)
end

function TestRequest:test_a_request_says_what_it_is()
  local s = sim.new()
  local q = s:store(nil, "inbox")
  local r = s:resource(1, "bus")
  local g = q:get_event()
  lu.assertStrMatches(tostring(g), "get request #%d+ from store 'inbox' %(pending%)")
  lu.assertStrMatches(tostring(q:put_event(1)), "put request #%d+ to store 'inbox' %(triggered%)")
  lu.assertStrMatches(tostring(r:request()), "request #%d+ for resource 'bus' %(triggered%)")
end

function TestRequest:test_a_process_blocked_on_a_request_is_reported()
  local s = sim.new()
  local q = s:store(nil, "inbox")
  s:spawn{name = "rx", fn = function() q:get_event():wait() end}
  local ok, err = pcall(s.run, s)
  lu.assertFalse(ok)
  lu.assertStrContains(err, "process 'rx' #1")
  lu.assertStrMatches(err, ".*waiting on get request #%d+ from store 'inbox' %(pending%).*")
end

function TestRequest:test_requests_do_not_depend_on_the_collector()
  -- Requests nobody references stay queued (SimPy's queues hold them), so a
  -- collection between runs changes nothing.
  local function model(collect)
    local s = sim.new()
    local q = s:store()
    local r = s:resource(1)
    for i = 1, 5 do q:get_event() r:request() end
    if collect then collectgarbage() collectgarbage() end
    for i = 1, 7 do q:put(i) end
    s:run()
    return q:count(), r:in_use(), r:queued()
  end
  lu.assertEquals({model(false)}, {model(true)})
  lu.assertEquals({model(true)}, {2, 1, 4})
end

function TestRequest:test_a_request_of_another_simulation_cannot_join_a_condition()
  local s, t = sim.new(), sim.new()
  local g = t:store():get_event()
  local ok, err = pcall(s.any_of, s, {g})
  lu.assertFalse(ok)
  lu.assertStrContains(err, "belongs to another simulation")
end

function TestRequest:test_requests_outlive_a_closed_simulation_safely()
  local s = sim.new()
  local q = s:store()
  local g = q:get_event()
  local r = s:resource(1):request()
  s:close()
  lu.assertStrContains(tostring(g), "simulation closed")
  lu.assertFalse(pcall(g.cancel, g))
  r:close() -- nothing to give back
  collectgarbage()
end
