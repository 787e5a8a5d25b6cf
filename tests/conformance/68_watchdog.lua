-- A watchdog: a worker kicks it after each job; if no kick comes within the
-- timeout, the watchdog interrupts the worker, which abandons its job, resets
-- and goes on; the watchdog waits on any_of(kick, timeout) with a fresh kick
-- event each round.
local s = sim.new()
local jobs = s:store()
local state = {kick = s:event()}

local function worker()
  local done = 0
  while done < 5 do
    local ok, i = pcall(function()
      local job = jobs:get()
      s:sleep(job)
      done = done + 1
      print(string.format('t=%d worker finished a %d-long job', s:now(), job))
      state.kick:succeed(done)
    end)
    if not ok then
      print(string.format('t=%d worker reset by %s', s:now(), i.cause))
      s:sleep(1)
    end
  end
  return done
end

local function watchdog(w, limit)
  while w:alive() do
    local kick = state.kick
    local to = s:timeout(limit)
    s:any_of{kick, to}:wait()
    if kick:triggered() then
      state.kick = s:event()
      print(string.format('t=%d watchdog kicked (%s)', s:now(), kick:value()))
    elseif w:alive() then
      print(string.format('t=%d watchdog fires', s:now()))
      w:interrupt('watchdog')
    end
  end
end

local function feeder()
  for _, job in ipairs{2, 7, 1, 9, 3, 2, 2} do
    jobs:put(job)
    s:sleep(1)
  end
end

local w = s:spawn(worker)
s:spawn{fn = watchdog, args = {w, 5}, daemon = true}
s:spawn(feeder)
print(string.format('worker done %d at t=%d', s:run(w), s:now()))
