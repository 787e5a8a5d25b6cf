# A PriorityResource with two slots and requests that renege: a cancelled
# request leaves the sorted queue (the others keep their order); a request
# made later with an equal priority goes behind earlier ones of that priority;
# the main script requests and releases between runs.
import simpy

env = simpy.Environment()
r = simpy.PriorityResource(env, capacity=2)
names = {}


def q():
    return ' '.join(names[x] for x in r.queue)


def user(name, prio, d, patience, hold):
    yield env.timeout(d)
    req = r.request(priority=prio)
    names[req] = name
    yield req | env.timeout(patience)
    if req.triggered:
        print('t=%d %s in (queue: %s)' % (env.now, name, q()))
        yield env.timeout(hold)
        r.release(req)
    else:
        req.cancel()
        print('t=%d %s leaves (queue: %s)' % (env.now, name, q()))


for args in [('a', 2, 0, 9, 4), ('b', 2, 0, 9, 4), ('c', 3, 1, 9, 1), ('d', 1, 1, 2, 1),
             ('e', 3, 2, 9, 1), ('f', 1, 2, 9, 2), ('g', 3, 3, 1, 1)]:
    env.process(user(*args))
env.run(until=3)
m = r.request(priority=0)
names[m] = 'main'
print('main t=%d queue: %s' % (env.now, q()))
env.run(until=9)
print('main t=%d main in=%s queue: %s' % (env.now, 'true' if m.processed else 'false', q()))
r.release(m)
env.run()
print('done t=%d in_use=%d' % (env.now, r.count))
