# A pipeline through bounded stores: a producer puts 1..8 into q1 (capacity 1,
# pausing after every third item), stage A moves q1 -> q2 (capacity 2), stage
# workers B1 and B2 move q2 -> q3 (B2 spends 1 per item) and two consumers take
# from q3.
import simpy

env = simpy.Environment()
q1 = simpy.Store(env, capacity=1)
q2 = simpy.Store(env, capacity=2)
q3 = simpy.Store(env)


def counts():
    return '(q1=%d q2=%d q3=%d)' % (len(q1.items), len(q2.items), len(q3.items))


def producer():
    for i in range(1, 9):
        yield q1.put(i)
        print('t=%d P put %d %s' % (env.now, i, counts()))
        if i % 3 == 0:
            yield env.timeout(1)


def stage_a():
    while True:
        x = yield q1.get()
        print('t=%d A took %d %s' % (env.now, x, counts()))
        yield q2.put(x)
        print('t=%d A passed %d %s' % (env.now, x, counts()))


def stage_b(n, d):
    while True:
        x = yield q2.get()
        print('t=%d %s took %d %s' % (env.now, n, x, counts()))
        if d > 0:
            yield env.timeout(d)
        yield q3.put(x * 10)
        print('t=%d %s passed %d %s' % (env.now, n, x * 10, counts()))


def consumer(n):
    while True:
        x = yield q3.get()
        print('t=%d %s got %d %s' % (env.now, n, x, counts()))


env.process(consumer('C1'))
env.process(stage_b('B1', 0))
env.process(stage_b('B2', 1))
env.process(stage_a())
env.process(producer())
env.process(consumer('C2'))
env.run()
print('done t=%d %s' % (env.now, counts()))
