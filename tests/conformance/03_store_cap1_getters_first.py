# A store of capacity 1: two getters wait on the empty store before a producer
# puts six items with no time in between. Each put completes only when there
# is room, and every get and put resumes its process in a later event of t=0.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=1)


def getter(n):
    for _ in range(3):
        item = yield st.get()
        print('%s got %d (items=%d)' % (n, item, len(st.items)))


def producer():
    for i in range(6):
        print('P put %d (items=%d)' % (i, len(st.items)))
        yield st.put(i)
        print('P put %d done (items=%d)' % (i, len(st.items)))


env.process(getter('G1'))
env.process(getter('G2'))
env.process(producer())
env.run()
print('done t=%d' % env.now)
