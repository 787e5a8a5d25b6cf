# A pseudo-random model (an integer LCG written identically in both languages):
# three producers put into a capacity-2 store after random sleeps (often 0);
# three consumers take items and hold a 2-slot resource for random times.
# A few hundred events; any ordering difference changes the random stream.
import simpy

env = simpy.Environment()
seed = 12345


def rnd(n):
    global seed
    seed = (seed * 1103515245 + 12345) % 2147483648
    return (seed // 65536) % n


st = simpy.Store(env, capacity=2)
r = simpy.Resource(env, capacity=2)


def producer(n):
    for i in range(12):
        yield env.timeout(rnd(3))
        item = n * 100 + i
        yield st.put(item)
        print('t=%d P%d put %d (items=%d)' % (env.now, n, item, len(st.items)))
    print('t=%d P%d finished' % (env.now, n))


def consumer(n):
    while True:
        item = yield st.get()
        print('t=%d C%d got %d (items=%d)' % (env.now, n, item, len(st.items)))
        req = r.request()
        yield req
        h = rnd(4)
        print('t=%d C%d holds r for %d (in_use=%d queued=%d)' % (env.now, n, h, r.count, len(r.queue)))
        yield env.timeout(h)
        r.release(req)


for n in range(1, 4):
    env.process(consumer(n))
for n in range(1, 4):
    env.process(producer(n))
env.run()
print('done t=%d items=%d seed=%d' % (env.now, len(st.items), seed))
