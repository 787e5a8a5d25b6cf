# PriorityStore: a get takes the item of lowest priority; items of equal
# priority leave in heapq's order (not arrival order); waiting getters are
# served one per put, in arrival order; a bounded store blocks puts; plain
# numbers are their own priority.
import simpy

env = simpy.Environment()
ps = simpy.PriorityStore(env)
nums = simpy.PriorityStore(env, capacity=2)


def filler():
    for prio, name in [(3, 'c'), (1, 'a1'), (2, 'b1'), (1, 'a2'), (2, 'b2'), (1, 'a3'), (0, 'z'), (2, 'b3')]:
        yield ps.put(simpy.PriorityItem(prio, name))
    print('t=%d filled %d' % (env.now, len(ps.items)))
    yield env.timeout(1)
    out = []
    for i in range(5):
        x = yield ps.get()
        out.append('%s/%d' % (x.item, x.priority))
    print('t=%d took %s' % (env.now, ' '.join(out)))
    yield env.timeout(5)
    for prio, name in [(5, 'late5'), (4, 'late4')]:
        yield ps.put(simpy.PriorityItem(prio, name))
        print('t=%d put %s' % (env.now, name))


def taker(name, d):
    yield env.timeout(d)
    x = yield ps.get()
    print('t=%d %s took %s/%d' % (env.now, name, x.item, x.priority))


def num_producer():
    for v in [7, 3, 9, 3, 1]:
        yield nums.put(v)
        print('t=%d put %d (items=%d putters=%d)' % (env.now, v, len(nums.items), len(nums.put_queue)))


def num_consumer():
    yield env.timeout(2)
    for i in range(5):
        v = yield nums.get()
        print('t=%d got %d' % (env.now, v))
        yield env.timeout(1)


env.process(filler())
for i in range(6):
    env.process(taker('T%d' % i, 2 + i % 2))
env.process(num_producer())
env.process(num_consumer())
env.run()
print('done t=%d items=%d getters=%d' % (env.now, len(ps.items), len(ps.get_queue)))
