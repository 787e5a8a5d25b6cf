--- Lua process throughput: coroutines resumed by the C event core.
--
-- P pairs of processes ping-pong a token through two stores, and S
-- processes sleep in a loop; each does R rounds. Prints one line with
-- resumes/s and events/s (wall time measured inside s:run only).
--
--   kernbench benches/perf/lua_processes.lua [pairs] [sleepers] [rounds]
--
-- Defaults: 100 pairs, 100 sleepers, 10000 rounds (4 million resumes).

local pairs_n = tonumber(arg[1]) or 100
local sleepers = tonumber(arg[2]) or 100
local rounds = tonumber(arg[3]) or 10000

local s = sim.new()
for p = 1, pairs_n do
  local ping, pong = s:store(1, "ping" .. p), s:store(1, "pong" .. p)
  s:spawn(function()
    for i = 1, rounds do
      ping:put(i)
      pong:get()
    end
  end)
  s:spawn(function()
    for _ = 1, rounds do
      pong:put(ping:get())
    end
  end)
end
for _ = 1, sleepers do
  s:spawn(function()
    for _ = 1, rounds do s:sleep(1) end
  end)
end

s:run()
local st = s:stats()
print(("lua_processes pairs=%d sleepers=%d rounds=%d resumes=%d events=%d sim_time=%s "
  .. "wall_s=%.3f resumes_per_s=%.0f events_per_s=%.0f")
  :format(pairs_n, sleepers, rounds, st.resumes, st.events, kb.format_ns(st.sim_ns),
    st.wall_s, st.resumes_per_s, st.events_per_s))
