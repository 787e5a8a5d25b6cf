# A capacity-1 store fed by a producer that pauses after every second item and
# drained by two consumers that spend 2 and 3 time units per item: blocked
# putters and getters released at timed instants, with puts and gets tied.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=1)


def producer():
    for i in range(8):
        yield st.put(i)
        print('t=%d P put %d (items=%d)' % (env.now, i, len(st.items)))
        if i % 2 == 1:
            yield env.timeout(1)
    print('t=%d P finished' % env.now)


def consumer(n, d):
    while True:
        item = yield st.get()
        print('t=%d %s got %d (items=%d)' % (env.now, n, item, len(st.items)))
        yield env.timeout(d)


env.process(consumer('C1', 2))
env.process(consumer('C2', 3))
env.process(producer())
env.run()
print('done t=%d' % env.now)
