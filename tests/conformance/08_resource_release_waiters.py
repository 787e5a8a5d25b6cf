# One slot held by H until t=5 while W1..W4 queue at t=1..4 and N arrives at
# t=5. At t=5 H releases, prints the state and requests again at once: the slot
# goes to the queue in arrival order and H waits behind N.
import simpy

env = simpy.Environment()
r = simpy.Resource(env, capacity=1)


def state():
    return '(in_use=%d queued=%d)' % (r.count, len(r.queue))


def holder():
    req = r.request()
    yield req
    print('t=%d H acquired %s' % (env.now, state()))
    yield env.timeout(5)
    r.release(req)
    print('t=%d H released %s' % (env.now, state()))
    req = r.request()
    yield req
    print('t=%d H acquired again %s' % (env.now, state()))
    r.release(req)
    print('t=%d H released again %s' % (env.now, state()))


def waiter(n, t, hold):
    yield env.timeout(t)
    print('t=%d %s request %s' % (env.now, n, state()))
    req = r.request()
    yield req
    print('t=%d %s acquired %s' % (env.now, n, state()))
    if hold > 0:
        yield env.timeout(hold)
    r.release(req)
    print('t=%d %s released %s' % (env.now, n, state()))


env.process(holder())
env.process(waiter('W1', 1, 0))
env.process(waiter('W2', 2, 1))
env.process(waiter('W3', 3, 0))
env.process(waiter('W4', 4, 2))
env.process(waiter('N', 5, 0))
env.run()
print('done t=%d %s' % (env.now, state()))
