--- What a filter store costs: out-of-order completions matched by tag.
--
-- W waiters each take their own tag from one filter store (fs:get with a
-- filter), R rounds; a producer puts one item per tag per round in an order
-- shuffled by an LCG. Each put tries every waiting get (SimPy's
-- FilterStore), so a round costs about W^2 / 2 filter calls. The same
-- traffic through one plain store per waiter (the producer dispatches by
-- tag) is the baseline, and the same filter store with gets that take any
-- item (no filter: the cost of requests as events alone). Prints one line:
-- gets/s of each variant and filter calls/s.
--
--   kernbench benches/perf/filter_store.lua [waiters] [rounds]
local W = tonumber(arg and arg[1]) or 32
local R = tonumber(arg and arg[2]) or 2000

local function order(seed)
  local t, x = {}, seed
  for i = 1, W do t[i] = i end
  for i = W, 2, -1 do
    x = (x * 6364136223846793005 + 1442695040888963407) & 0x7fffffffffffffff
    local j = x % i + 1
    t[i], t[j] = t[j], t[i]
  end
  return t
end

local function run(filtered, any)
  local s = sim.new()
  local calls = 0
  local fs = s:filter_store()
  local stores = {}
  for w = 1, W do
    stores[w] = s:store()
    s:spawn(function()
      for _ = 1, R do
        if any then
          fs:get()
        elseif filtered then
          fs:get(function(v) calls = calls + 1 return v == w end)
        else
          stores[w]:get()
        end
      end
    end)
  end
  s:spawn(function()
    for r = 1, R do
      for _, w in ipairs(order(r)) do
        if filtered then fs:put(w) else stores[w]:put(w) end
      end
      s:sleep(1)
    end
  end)
  s:run()
  local st = s:stats()
  return st.wall_s, calls
end

local plain_s = run(false)
local any_s = run(true, true)
local filter_s, calls = run(true)
local gets = W * R
print(string.format("filter_store waiters=%d rounds=%d plain_wall_s=%.3f plain_gets_per_s=%.0f "
  .. "any_wall_s=%.3f any_gets_per_s=%.0f filter_wall_s=%.3f filter_gets_per_s=%.0f "
  .. "filter_calls=%d filter_calls_per_s=%.0f ns_per_filter_call=%.0f",
  W, R, plain_s, gets / plain_s, any_s, gets / any_s, filter_s, gets / filter_s, calls,
  calls / filter_s, (filter_s - any_s) / calls * 1e9))
