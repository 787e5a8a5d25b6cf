# Contention for a 2-slot resource in one instant: U1 and U2 hold it from t=0
# to t=2 while U3 and U4 queue; at t=2 the holders release and request again at
# once and N1, N2 arrive. Each release hands a slot to the queue head when the
# release is processed, so the re-requests queue behind N1 and N2.
import simpy

env = simpy.Environment()
r = simpy.Resource(env, capacity=2)


def state():
    return '(in_use=%d queued=%d)' % (r.count, len(r.queue))


def holder(n):
    req = r.request()
    yield req
    print('t=%d %s acquired %s' % (env.now, n, state()))
    yield env.timeout(2)
    r.release(req)
    print('t=%d %s released %s' % (env.now, n, state()))
    print('t=%d %s requests again %s' % (env.now, n, state()))
    req = r.request()
    yield req
    print('t=%d %s acquired again %s' % (env.now, n, state()))
    r.release(req)
    print('t=%d %s released again %s' % (env.now, n, state()))


def user(n, t, hold):
    if t > 0:
        yield env.timeout(t)
    print('t=%d %s requests %s' % (env.now, n, state()))
    req = r.request()
    yield req
    print('t=%d %s acquired %s' % (env.now, n, state()))
    if hold > 0:
        yield env.timeout(hold)
    r.release(req)
    print('t=%d %s released %s' % (env.now, n, state()))


env.process(holder('U1'))
env.process(holder('U2'))
env.process(user('U3', 0, 1))
env.process(user('U4', 0, 0))
env.process(user('N1', 2, 0))
env.process(user('N2', 2, 1))
env.run()
print('done t=%d %s' % (env.now, state()))
