--- Stores and resources from Lua.
local lu = require "luaunit"

TestStore = {}

function TestStore:test_items_leave_in_fifo_order_and_get_blocks_when_empty()
  local s = sim.new()
  local q = s:store()
  local got = {}
  s:spawn(function()
    for _ = 1, 3 do table.insert(got, { q:get(), s:now() }) end
  end)
  s:spawn(function()
    q:put("a")
    q:put({ 1, 2 })
    s:sleep(5)
    q:put(false)
  end)
  s:run()
  lu.assertEquals(got, { { "a", 0 }, { { 1, 2 }, 0 }, { false, 5 } })
end

function TestStore:test_put_blocks_while_the_store_is_full()
  local s = sim.new()
  local q = s:store(2, "fifo")
  local put_times = {}
  s:spawn(function()
    for i = 1, 4 do q:put(i) put_times[i] = s:now() end
  end)
  s:spawn(function()
    s:sleep(10)
    lu.assertEquals(#q, 2)
    lu.assertEquals(q:get(), 1)
    s:sleep(10)
    lu.assertEquals(q:get(), 2)
  end)
  s:run()
  lu.assertEquals(put_times, { 0, 0, 10, 20 })
  lu.assertEquals(q:count(), 2)
  lu.assertEquals(q:capacity(), 2)
  lu.assertEquals(q:name(), "fifo")
end

function TestStore:test_blocked_getters_are_served_in_arrival_order()
  local s = sim.new()
  local q = s:store{ name = "jobs" }
  local order = {}
  for i = 1, 3 do
    s:spawn(function() s:sleep(i) table.insert(order, { i, q:get() }) end)
  end
  s:spawn(function() s:sleep(10) for k = 1, 3 do q:put(k * 10) end end)
  s:run()
  lu.assertEquals(order, { { 1, 10 }, { 2, 20 }, { 3, 30 } })
end

function TestStore:test_outside_a_process_only_non_blocking_calls_work()
  local s = sim.new()
  local q = s:store(1)
  q:put("x")
  lu.assertErrorMsgContains("st:put() would block (the store is full)", q.put, q, "y")
  lu.assertEquals(q:get(), "x")
  lu.assertErrorMsgContains("st:get() would block (the store is empty)", q.get, q)
  lu.assertEquals(#q, 0)
end

function TestStore:test_capacity_must_be_positive()
  local s = sim.new()
  lu.assertErrorMsgContains("capacity must be >= 1", s.store, s, 0)
  lu.assertErrorMsgContains("capacity must be >= 1", s.store, s, { capacity = -2 })
  lu.assertErrorMsgContains("capacity must be >= 1", s.resource, s, 0)
  lu.assertNil(s:store():capacity())
end

TestResource = {}

function TestResource:test_holders_are_limited_to_capacity_and_served_fifo()
  local s = sim.new()
  local r = s:resource(2, "dma")
  local log = {}
  for i = 1, 4 do
    s:spawn(function()
      r:acquire()
      log[#log + 1] = { i, s:now() }
      s:sleep(10)
      r:release()
    end)
  end
  s:spawn(function() s:sleep(5) lu.assertEquals(r:in_use(), 2) lu.assertEquals(r:queued(), 2) end)
  s:run()
  lu.assertEquals(log, { { 1, 0 }, { 2, 0 }, { 3, 10 }, { 4, 10 } })
  lu.assertEquals(r:in_use(), 0)
  lu.assertEquals(r:capacity(), 2)
  lu.assertEquals(r:name(), "dma")
end

function TestResource:test_release_without_acquire_is_an_error()
  local s = sim.new()
  local r = s:resource(1, "bus")
  lu.assertErrorMsgContains("r:release(): resource 'bus' has no slot in use", r.release, r)
  r:acquire() -- a free slot can be taken outside a process
  lu.assertErrorMsgContains("r:acquire() would block", r.acquire, r)
  r:release()
  lu.assertStrContains(tostring(r), "resource 'bus' (0 of 1 in use, 0 waiting)")
end

-- Items keep their value and type whichever way the store keeps them
-- (small integers as themselves, one item in a slot, the rest in a table:
-- lsim_store.c): every kind goes through stores of several capacities, in
-- and out of processes, and comes out equal, in order, with its math.type.
function TestStore:test_every_kind_of_item_comes_back_as_it_went_in()
  local big = 1 << 62
  local t1, t2 = {}, {}
  local vals = { 0, -1, 1, big - 1, -(big - 1), big, -big, math.maxinteger, math.mininteger,
    1.0, -0.0, 0.5, 1e300, 2^53, "s", "", t1, true, false, t2, 42 }
  for _, cap in ipairs({ 1, 2, 3, false }) do
    local s = sim.new()
    local q = cap and s:store(cap) or s:store()
    local got = {}
    s:spawn(function()
      for _, v in ipairs(vals) do q:put(v) end
      q:put(5, "extra", "args") -- extra arguments are ignored
    end)
    s:spawn(function()
      for i = 1, #vals + 1 do
        if i % 3 == 0 then s:sleep(1) end
        got[i] = q:get()
      end
    end)
    s:run()
    lu.assertEquals(#got, #vals + 1)
    for i, v in ipairs(vals) do
      lu.assertIs(got[i], v)
      lu.assertEquals(math.type(got[i]), math.type(v))
    end
    lu.assertEquals(1 / got[11], -math.huge) -- -0.0 stays a float minus zero
    lu.assertEquals(got[#vals + 1], 5)
  end
  local s = sim.new() -- outside a process, with a full store
  local q = s:store(2)
  q:put(1)
  q:put(t1)
  lu.assertErrorMsgContains("would block", q.put, q, {})
  lu.assertEquals(q:get(), 1)
  lu.assertIs(q:get(), t1)
  lu.assertErrorMsgContains("value expected", q.put, q)
end

-- A taken item is no longer kept alive by the store, wherever it was kept.
function TestStore:test_a_taken_item_is_released()
  local s = sim.new()
  local q = s:store(4)
  local weak = setmetatable({}, { __mode = "v" })
  s:spawn(function()
    local a, b, c = {}, {}, {}
    weak[1], weak[2], weak[3] = a, b, c
    q:put(a) q:put(b) q:put(3) q:put(c)
  end)
  s:spawn(function()
    s:sleep(1)
    q:get() q:get() q:get() q:get()
  end)
  s:run()
  collectgarbage()
  collectgarbage()
  lu.assertNil(next(weak))
end

-- The fast type checks of st:put/st:get and s:sleep (a tag in the
-- userdata) still reject every other value with the usual message.
function TestStore:test_methods_reject_objects_of_other_types()
  local s = sim.new()
  local st = s:store(1, "box")
  local r = s:resource(1, "bus")
  local other = sim.new():store(1, "other")
  for _, v in ipairs({ r, s, 42, "box", {}, io.stdout, s:event() }) do
    local ok, err = pcall(st.put, v, 1)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "kernbench.store expected")
    ok, err = pcall(st.get, v)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "kernbench.store expected")
  end
  for _, v in ipairs({ st, r, 42, io.stdout }) do
    local ok, err = pcall(s.sleep, v, 1)
    lu.assertFalse(ok)
    lu.assertStrContains(err, "kernbench.sim expected")
  end
  other:put(7) -- a store of another simulation is still a store
  lu.assertEquals(other:get(), 7)
end
