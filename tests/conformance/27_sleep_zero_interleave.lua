-- Zero-delay sleeps interleave processes round-robin within one instant; a
-- process that sleeps 0 lets every event already due at that instant run
-- first, including timeouts due then and processes woken by them.
local s = sim.new()

local function looper(n, k, start)
  if start > 0 then
    s:sleep(start)
  end
  for i = 0, k - 1 do
    print(string.format('t=%d %s round %d', s:now(), n, i))
    s:sleep(0)
  end
  print(string.format('t=%d %s done', s:now(), n))
end

local function waker()
  s:sleep(1)
  print(string.format('t=%d W wakes at 1, sleeps 0 twice', s:now()))
  s:sleep(0)
  s:sleep(0)
  print(string.format('t=%d W after two sleeps', s:now()))
end

s:spawn(looper, 'A', 3, 0)
s:spawn(looper, 'B', 2, 0)
s:spawn(looper, 'C', 4, 0)
s:spawn(looper, 'D', 3, 1)
s:spawn(waker)
s:spawn(looper, 'E', 2, 1)
s:run()
print('done t=' .. s:now())
