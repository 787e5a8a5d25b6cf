# Resource requests cancelled: a waiting request leaves the queue (the next
# one is granted at the next release, not at the cancel); cancelling a
# granted request does nothing (it still holds its slot until released);
# releasing a cancelled request queues a harmless release.
import simpy

env = simpy.Environment()
r = simpy.Resource(env, capacity=1)


def b(x):
    return 'true' if x else 'false'


def main_proc():
    r1 = r.request()
    r2 = r.request()
    r3 = r.request()
    r4 = r.request()
    print('t=%d in_use=%d queued=%d' % (env.now, r.count, len(r.queue)))
    yield r1
    r1.cancel()
    print('t=%d cancel granted r1: in_use=%d' % (env.now, r.count))
    r2.cancel()
    print('t=%d cancel r2: queued=%d' % (env.now, len(r.queue)))
    yield env.timeout(1)
    r.release(r1)
    print('t=%d released r1: in_use=%d queued=%d r3=%s' % (env.now, r.count, len(r.queue), b(r3.triggered)))
    yield r3
    print('t=%d r3 granted' % env.now)
    r.release(r2)
    yield env.timeout(1)
    r4.cancel()
    r.release(r3)
    yield env.timeout(1)
    print('t=%d in_use=%d queued=%d r4=%s' % (env.now, r.count, len(r.queue), b(r4.triggered)))


env.process(main_proc())
env.run()
print('done t=%d' % env.now)
