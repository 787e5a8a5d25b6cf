# FilterStore: a get takes the oldest item its filter accepts; every waiting
# get is tried on each put, so a later get can be served first (out-of-order
# completions matched by tag); a get without a filter takes the oldest item;
# a bounded store blocks puts until a get makes room.
import simpy

env = simpy.Environment()
fs = simpy.FilterStore(env, capacity=3)


def waiter(tag, d):
    yield env.timeout(d)
    x = yield fs.get(lambda m: m[0] == tag)
    print('t=%d W%d got %s:%s (items=%d getters=%d)' % (env.now, tag, x[0], x[1], len(fs.items), len(fs.get_queue)))


def anyone(d):
    yield env.timeout(d)
    x = yield fs.get()
    print('t=%d A got %s:%s' % (env.now, x[0], x[1]))


def completer():
    for tag, data in [(3, 'c'), (1, 'a'), (9, 'x'), (2, 'b'), (9, 'y'), (4, 'd'), (9, 'z'), (5, 'e')]:
        yield env.timeout(1)
        print('t=%d put %d:%s (items=%d putters=%d)' % (env.now, tag, data, len(fs.items), len(fs.put_queue)))
        yield fs.put((tag, data))


def patient():
    g = fs.get(lambda m: m[0] == 7)
    yield g | env.timeout(4)
    print('t=%d P7 triggered=%s' % (env.now, 'true' if g.triggered else 'false'))
    g.cancel()
    print('t=%d P7 cancelled (getters=%d)' % (env.now, len(fs.get_queue)))


for t in [1, 2, 3, 4, 5]:
    env.process(waiter(t, 0))
env.process(patient())
env.process(completer())
env.process(anyone(12))
env.process(anyone(13))
env.run()
print('done t=%d items=%d getters=%d' % (env.now, len(fs.items), len(fs.get_queue)))
