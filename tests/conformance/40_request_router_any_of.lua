-- Get requests as events: a router waits on any of two input stores or a
-- timeout, withdraws the requests that lost (cancel) and reads a request that
-- was also served in the same instant; producers race it in one instant.
local s = sim.new()
local a = s:store()
local b = s:store(1)
local out = s:store()

local function router()
  for i = 0, 5 do
    local ga = a:get_event()
    local gb = b:get_event()
    local to = s:timeout(3, 'tmo')
    s:any_of{ga, gb, to}:wait()
    print(string.format('t=%d R round %d a=%s b=%s to=%s', s:now(), i, tostring(ga:processed()), tostring(gb:processed()), tostring(to:processed())))
    for _, ng in ipairs{{'a', ga}, {'b', gb}} do
      local name, g = ng[1], ng[2]
      if g:triggered() then
        print(string.format('t=%d R %s gives %s', s:now(), name, g:value()))
        out:put(g:value())
      else
        g:cancel()
        print(string.format('t=%d R cancels %s', s:now(), name))
      end
    end
  end
end

local function producer(name, st, items, d)
  for _, x in ipairs(items) do
    s:sleep(d)
    print(string.format('t=%d %s puts %s', s:now(), name, x))
    st:put(x)
    print(string.format('t=%d %s put %s done', s:now(), name, x))
  end
end

local function sink()
  while true do
    local x = out:get()
    print(string.format('t=%d S got %s', s:now(), x))
  end
end

s:spawn(router)
s:spawn(producer, 'PA', a, {'a1', 'a2', 'a3'}, 2)
s:spawn(producer, 'PB', b, {'b1', 'b2', 'b3'}, 5)
s:spawn{fn = sink, daemon = true}
s:run(40)
print(string.format('done t=%d a=%d b=%d getters a=%d b=%d', s:now(), a:count(), b:count(), a:getters(), b:getters()))
