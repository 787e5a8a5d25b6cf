# Several processes join one running worker (one of them spawned before the
# worker, one arriving later): they wake in the order they started waiting,
# when the worker's completion is processed, and all get its return value.
import simpy

env = simpy.Environment()


def b(x):
    return 'true' if x else 'false'


def worker():
    print('t=%d W starts' % env.now)
    yield env.timeout(3)
    print('t=%d W returns' % env.now)
    return 'w-result'


def joiner(n, delay):
    if delay > 0:
        yield env.timeout(delay)
    print('t=%d %s joins (alive=%s)' % (env.now, n, b(w.is_alive)))
    v = yield w
    print('t=%d %s got %s (alive=%s)' % (env.now, n, v, b(w.is_alive)))


def observer():
    yield env.timeout(3)
    print('t=%d O sees W alive=%s triggered=%s processed=%s' % (env.now, b(w.is_alive), b(w.triggered), b(w.processed)))
    yield env.timeout(0)
    print('t=%d O sees W processed=%s' % (env.now, b(w.processed)))


env.process(joiner('J1', 0))
w = env.process(worker())
env.process(joiner('J2', 0))
env.process(joiner('J3', 1))
env.process(observer())
env.process(joiner('J4', 3))
env.run()
print('done t=%d' % env.now)
