# Zero-delay sleeps interleave processes round-robin within one instant; a
# process that sleeps 0 lets every event already due at that instant run
# first, including timeouts due then and processes woken by them.
import simpy

env = simpy.Environment()


def looper(n, k, start):
    if start > 0:
        yield env.timeout(start)
    for i in range(k):
        print('t=%d %s round %d' % (env.now, n, i))
        yield env.timeout(0)
    print('t=%d %s done' % (env.now, n))


def waker():
    yield env.timeout(1)
    print('t=%d W wakes at 1, sleeps 0 twice' % env.now)
    yield env.timeout(0)
    yield env.timeout(0)
    print('t=%d W after two sleeps' % env.now)


env.process(looper('A', 3, 0))
env.process(looper('B', 2, 0))
env.process(looper('C', 4, 0))
env.process(looper('D', 3, 1))
env.process(waker())
env.process(looper('E', 2, 1))
env.run()
print('done t=%d' % env.now)
