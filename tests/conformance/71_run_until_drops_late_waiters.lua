-- run(until=ev) stops by raising from ev's callbacks: a callback or a process
-- that begins to wait on ev while the run goes is behind the stop and is
-- skipped; the process stays blocked on ev for good, while one that waited on
-- ev before the run began resumes. The rest of the instant is left to the next
-- run.
local s = sim.new()
local ev = s:timeout(3, 'v')

local function early()
  local v = ev:wait()
  print(string.format('t=%d early got %s', s:now(), v))
end

local function late()
  s:sleep(1)
  ev:add_callback(function() print(string.format('t=%d late callback', s:now())) end)
  print(string.format('t=%d late waits', s:now()))
  local v = ev:wait()
  print(string.format('t=%d late got %s', s:now(), v))
end

local function ticker()
  for i = 0, 4 do
    s:sleep(1)
    print(string.format('t=%d tick %d', s:now(), i))
  end
end

s:spawn(early)
s:spawn{fn = late, daemon = true} -- blocked for good: SimPy's run() just returns
s:spawn(ticker)
s:run(1) -- early starts waiting on ev before the run below
print(string.format('run -> %s at t=%d', s:run(ev), s:now()))
s:run()
print(string.format('end at t=%d', s:now()))
