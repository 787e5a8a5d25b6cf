# Process start-up is URGENT: processes spawned inside a process at time t
# start before ordinary events already due at t (Q's and R's timeouts), in
# spawn order, and a grandchild spawned by a child starts before P's sleep 0.
import simpy

env = simpy.Environment()


def grandchild():
    print('t=%d G starts' % env.now)
    return
    yield  # (a generator)


def child(n, spawn):
    print('t=%d %s starts' % (env.now, n))
    yield env.timeout(0)
    print('t=%d %s after sleep 0' % (env.now, n))
    if spawn:
        env.process(grandchild())
        print('t=%d %s spawned G' % (env.now, n))


def parent():
    print('t=%d P starts' % env.now)
    yield env.timeout(1)
    print('t=%d P spawns C1, C2' % env.now)
    env.process(child('C1', True))
    env.process(child('C2', False))
    print('t=%d P after spawning' % env.now)
    yield env.timeout(0)
    print('t=%d P after sleep 0' % env.now)


def other(n):
    print('t=%d %s starts' % (env.now, n))
    yield env.timeout(1)
    print('t=%d %s at 1' % (env.now, n))


t0 = env.timeout(0, 't0')


def zero_waiter():
    print('t=%d Z starts (t0 processed=%s)' % (env.now, 'true' if t0.processed else 'false'))
    v = yield t0
    print('t=%d Z got %s' % (env.now, v))


env.process(parent())
env.process(other('Q'))
env.process(zero_waiter())
env.process(other('R'))
env.run()
print('done t=%d' % env.now)
