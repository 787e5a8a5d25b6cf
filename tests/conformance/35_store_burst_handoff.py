# Bursts in one instant: three getters wait on an empty store while main puts
# m1, succeeds an event and puts m2 and two putters put at t=1; at t=5 two getters
# meet two putters blocked on the full store. A processed put wakes only the head
# getter and a processed get only the head putter (W's sleep 0 shows it).
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=3)
ev = env.event()


def getter(n, d, k):
    if d > 0:
        yield env.timeout(d)
    for _ in range(k):
        x = yield st.get()
        print('t=%d %s got %s (items=%d)' % (env.now, n, x, len(st.items)))


def putter(n, d, xs):
    yield env.timeout(d)
    for x in xs:
        yield st.put(x)
        print('t=%d %s put %s (items=%d)' % (env.now, n, x, len(st.items)))


def wake(n, e):
    yield e
    print('t=%d %s wakes (items=%d)' % (env.now, n, len(st.items)))
    yield env.timeout(0)
    print('t=%d %s after sleep 0 (items=%d)' % (env.now, n, len(st.items)))


env.process(getter('G1', 0, 2))
env.process(getter('G2', 0, 2))
env.process(getter('G3', 0, 2))
env.process(putter('P1', 1, ['a', 'b']))
env.process(putter('P2', 1, ['c', 'd']))
env.process(wake('W', ev))
env.run(until=1)
print('main at t=%d puts m1, succeeds ev, puts m2 (items=%d)' % (env.now, len(st.items)))
st.put('m1')
ev.succeed()
st.put('m2')
env.run(until=4)
print('main at t=%d (items=%d)' % (env.now, len(st.items)))
env.process(putter('P3', 0, ['e', 'f', 'g']))
env.process(putter('P4', 0, ['h', 'i']))
env.process(getter('G4', 1, 3))
env.process(wake('X', env.timeout(1)))
env.process(getter('G5', 1, 2))
env.run()
print('done t=%d items=%d' % (env.now, len(st.items)))
