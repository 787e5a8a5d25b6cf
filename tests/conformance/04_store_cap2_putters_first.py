# A store of capacity 2 with two putters arriving before any getter: puts
# beyond the capacity wait. G1 arrives in the same instant and takes items
# without spending time; G2 arrives at t=2 and takes one item per time unit.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=2)


def putter(n, base):
    for i in range(3):
        yield st.put(base + i)
        print('t=%d %s put %d (items=%d)' % (env.now, n, base + i, len(st.items)))


def g1():
    for _ in range(2):
        item = yield st.get()
        print('t=%d G1 got %d (items=%d)' % (env.now, item, len(st.items)))


def g2():
    yield env.timeout(2)
    for _ in range(3):
        item = yield st.get()
        print('t=%d G2 got %d (items=%d)' % (env.now, item, len(st.items)))
        yield env.timeout(1)


env.process(putter('P1', 10))
env.process(putter('P2', 20))
env.process(g1())
env.process(g2())
env.run()
print('done t=%d items=%d' % (env.now, len(st.items)))
