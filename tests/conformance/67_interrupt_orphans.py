# Interrupted blocking calls on the new kinds: a container get and a filter
# store get stay queued without their process and take what comes later; a
# priority store put waiting for room still puts its item; a priority
# resource request waiting in the queue is granted later and keeps its slot.
import simpy

env = simpy.Environment()
c = simpy.Container(env, capacity=10, init=0)
fs = simpy.FilterStore(env)
ps = simpy.PriorityStore(env, capacity=1)
pr = simpy.PriorityResource(env, capacity=1)


def blocked(name, what):
    try:
        if what == 'cget':
            yield c.get(3)
        elif what == 'fget':
            yield fs.get(lambda x: x > 5)
        elif what == 'psput':
            yield ps.put(simpy.PriorityItem(1, 'late'))
        else:
            yield pr.request(priority=2)
        print('t=%d %s done' % (env.now, name))
    except simpy.Interrupt as i:
        print('t=%d %s interrupted (%s)' % (env.now, name, i.cause))


def holder():
    with pr.request(priority=0) as req:
        yield req
        yield env.timeout(3)
    print('t=%d holder released (in_use=%d queued=%d)' % (env.now, pr.count, len(pr.queue)))


env.process(holder())
ps.put(simpy.PriorityItem(0, 'first'))
ws = [env.process(blocked(n, w)) for n, w in [('A', 'cget'), ('B', 'fget'), ('C', 'psput'), ('D', 'preq')]]


def boss():
    yield env.timeout(1)
    for w in ws:
        w.interrupt('stop')
    yield env.timeout(1)
    yield c.put(4)
    print('t=%d put 4: level=%d' % (env.now, c.level))
    yield fs.put(3)
    yield fs.put(8)
    print('t=%d fs items=%d' % (env.now, len(fs.items)))
    x = yield ps.get()
    print('t=%d ps got %s, items=%d' % (env.now, x.item, len(ps.items)))
    yield env.timeout(5)
    print('t=%d pr in_use=%d queued=%d' % (env.now, pr.count, len(pr.queue)))


env.process(boss())
env.run()
print('done t=%d level=%d fs=%d ps=%d' % (env.now, c.level, len(fs.items), len(ps.items)))
