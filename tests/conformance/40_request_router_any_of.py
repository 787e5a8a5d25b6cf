# Get requests as events: a router waits on any of two input stores or a
# timeout, withdraws the requests that lost (cancel) and reads a request that
# was also served in the same instant; producers race it in one instant.
import simpy

env = simpy.Environment()
a = simpy.Store(env)
b = simpy.Store(env, capacity=1)
out = simpy.Store(env)


def b_(x):
    return 'true' if x else 'false'


def router():
    for i in range(6):
        ga = a.get()
        gb = b.get()
        to = env.timeout(3, 'tmo')
        yield env.any_of([ga, gb, to])
        print('t=%d R round %d a=%s b=%s to=%s' % (env.now, i, b_(ga.processed), b_(gb.processed), b_(to.processed)))
        for name, g in (('a', ga), ('b', gb)):
            if g.triggered:
                print('t=%d R %s gives %s' % (env.now, name, g.value))
                yield out.put(g.value)
            else:
                g.cancel()
                print('t=%d R cancels %s' % (env.now, name))


def producer(name, st, items, d):
    for x in items:
        yield env.timeout(d)
        print('t=%d %s puts %s' % (env.now, name, x))
        yield st.put(x)
        print('t=%d %s put %s done' % (env.now, name, x))


def sink():
    while True:
        x = yield out.get()
        print('t=%d S got %s' % (env.now, x))


env.process(router())
env.process(producer('PA', a, ['a1', 'a2', 'a3'], 2))
env.process(producer('PB', b, ['b1', 'b2', 'b3'], 5))
env.process(sink())
env.run(until=40)
print('done t=%d a=%d b=%d getters a=%d b=%d' % (env.now, len(a.items), len(b.items), len(a.get_queue), len(b.get_queue)))
