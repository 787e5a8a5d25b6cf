# Stepping a resource model one event at a time: two users of a one-slot
# resource with zero-length holds, and an event the main script succeeds after
# step 4. Requests, releases, timeouts and process ends are each one step.
import simpy
from simpy.core import EmptySchedule

env = simpy.Environment()
r = simpy.Resource(env, capacity=1)
ev = env.event()


def T(x):
    return 'inf' if x == float('inf') else '%d' % x


def step():
    try:
        env.step()
        return 1
    except EmptySchedule:
        return 0


def user(n):
    for k in range(2):
        req = r.request()
        yield req
        print('  %s acquired (round %d)' % (n, k))
        r.release(req)
        print('  %s released' % n)
    v = yield ev
    print('  %s got %s' % (n, v))


env.process(user('U1'))
env.process(user('U2'))
k = 0
while step() == 1:
    k += 1
    print('step %d: now=%d peek=%s in_use=%d queued=%d' % (k, env.now, T(env.peek()), r.count, len(r.queue)))
    if k == 4:
        print('main succeeds ev')
        ev.succeed('go')
print('steps=%d now=%d' % (k, env.now))
