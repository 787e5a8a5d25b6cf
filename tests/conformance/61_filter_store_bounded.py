# A bounded FilterStore: putters wait for room, and a get taking an item from
# the middle makes room for the first waiting putter; a get request with a
# filter nothing matches waits while others are served past it; get requests
# made by the main script between runs.
import simpy

env = simpy.Environment()
fs = simpy.FilterStore(env, capacity=2)


def putter(name, items):
    for x in items:
        yield fs.put(x)
        print('t=%d %s put %d (n=%d)' % (env.now, name, x, len(fs.items)))


def getter(name, m, d):
    yield env.timeout(d)
    x = yield fs.get(lambda v: v % m == 0)
    print('t=%d %s took %d (n=%d)' % (env.now, name, x, len(fs.items)))


env.process(putter('P', [3, 5, 4, 9, 10, 7]))
env.process(getter('G7', 7, 1))
env.process(getter('G2', 2, 1))
env.process(getter('G5', 5, 2))
env.run(until=3)
print('main t=%d n=%d getters=%d putters=%d' % (env.now, len(fs.items), len(fs.get_queue), len(fs.put_queue)))
g = fs.get(lambda v: v % 3 == 0)
h = fs.get()
print('main g=%s h=%s' % ('true' if g.triggered else 'false', 'true' if h.triggered else 'false'))
env.run()
print('done t=%d g=%d h=%d n=%d' % (env.now, g.value, h.value, len(fs.items)))
