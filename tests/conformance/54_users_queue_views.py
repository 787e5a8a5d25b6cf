# users / queue views of resources: which requests hold slots (in the order
# they got them) and which wait (in queue order: arrival for a Resource,
# priority for a PriorityResource), as requests are granted, cancelled and
# released.
import simpy

env = simpy.Environment()
res = simpy.Resource(env, capacity=2)
pres = simpy.PriorityResource(env, capacity=1)
names = {}


def show(tag, r):
    print('t=%d %s users=[%s] queue=[%s]' % (env.now, tag, ' '.join(names[u] for u in r.users),
                                             ' '.join(names[q] for q in r.queue)))


def make(r, name, **kw):
    req = r.request(**kw)
    names[req] = name
    return req


def driver():
    a = make(res, 'a')
    b = make(res, 'b')
    c = make(res, 'c')
    d = make(res, 'd')
    show('res', res)
    yield a
    res.release(a)
    show('res', res)
    yield env.timeout(1)
    show('res', res)
    d.cancel()
    res.release(b)
    yield env.timeout(1)
    show('res', res)
    p1 = make(pres, 'p1', priority=5)
    p2 = make(pres, 'p2', priority=3)
    p3 = make(pres, 'p3', priority=1)
    p4 = make(pres, 'p4', priority=3)
    show('pres', pres)
    yield p1
    pres.release(p1)
    yield env.timeout(1)
    show('pres', pres)
    pres.release(p3)
    yield env.timeout(1)
    show('pres', pres)


env.process(driver())
env.run()
