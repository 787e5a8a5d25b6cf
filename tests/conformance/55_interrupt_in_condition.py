# A process waiting on any_of over two get requests is interrupted: the
# condition and both requests go on without it (SimPy removes only the
# process's callback), so later puts are taken by the abandoned requests; a
# second process that withdraws its requests on the interrupt leaves the
# items to others.
import simpy

env = simpy.Environment()
a = simpy.Store(env)
b = simpy.Store(env)


def careless(name):
    ga, gb = a.get(), b.get()
    try:
        yield ga | gb
        print('t=%d %s got one' % (env.now, name))
    except simpy.Interrupt as i:
        print('t=%d %s interrupted (%s) getters a=%d b=%d' % (env.now, name, i.cause, len(a.get_queue), len(b.get_queue)))


def careful(name):
    ga, gb = a.get(), b.get()
    try:
        yield ga | gb
        print('t=%d %s got one' % (env.now, name))
    except simpy.Interrupt as i:
        ga.cancel()
        gb.cancel()
        print('t=%d %s interrupted (%s), withdrew: getters a=%d b=%d' % (env.now, name, i.cause, len(a.get_queue), len(b.get_queue)))


def taker(name, st, d):
    yield env.timeout(d)
    x = yield st.get()
    print('t=%d %s got %s' % (env.now, name, x))


def boss(p1, p2):
    yield env.timeout(1)
    p1.interrupt('stop1')
    yield env.timeout(1)
    p2.interrupt('stop2')
    yield env.timeout(1)
    for x in ['a1', 'a2', 'a3']:
        yield a.put(x)
        print('t=%d boss put %s (items a=%d)' % (env.now, x, len(a.items)))
    yield b.put('b1')
    print('t=%d boss put b1 (items b=%d)' % (env.now, len(b.items)))


p1 = env.process(careless('C1'))
p2 = env.process(careful('C2'))
env.process(taker('T1', a, 2))
env.process(taker('T2', b, 2))
env.process(boss(p1, p2))
env.run()
print('done t=%d items a=%d b=%d getters a=%d b=%d' % (env.now, len(a.items), len(b.items), len(a.get_queue), len(b.get_queue)))
