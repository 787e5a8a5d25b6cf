# Store hand-off order within one instant: a put into a store with room
# completes (the putter resumes) before the waiting getter it feeds; a getter
# arriving while an item sits in the store behind an earlier waiting getter
# does not jump the queue.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=2)


def getter(n, d):
    if d > 0:
        yield env.timeout(d)
    print('t=%d %s get (items=%d)' % (env.now, n, len(st.items)))
    x = yield st.get()
    print('t=%d %s got %s (items=%d)' % (env.now, n, x, len(st.items)))


def putter():
    yield env.timeout(1)
    for x in ['a', 'b', 'c', 'd']:
        print('t=%d P put %s (items=%d)' % (env.now, x, len(st.items)))
        yield st.put(x)
        print('t=%d P put %s done (items=%d)' % (env.now, x, len(st.items)))


env.process(getter('G1', 0))
env.process(putter())
env.process(getter('G2', 1))
env.process(getter('G3', 1))
env.process(getter('G4', 2))
env.run()
print('done t=%d items=%d' % (env.now, len(st.items)))
