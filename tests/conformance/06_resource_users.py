# A resource with 2 slots and 6 users arriving in pairs (t=0,0,1,1,2,2) that
# hold it for 3, 0, 2, 0, 1, 0: a release frees the slot at once (in_use
# drops) but the next waiter gets it only when the release is processed.
import simpy

env = simpy.Environment()
r = simpy.Resource(env, capacity=2)
holds = [3, 0, 2, 0, 1, 0]


def user(i):
    yield env.timeout(i // 2)
    print('t=%d U%d request (in_use=%d queued=%d)' % (env.now, i, r.count, len(r.queue)))
    req = r.request()
    yield req
    print('t=%d U%d acquired (in_use=%d queued=%d)' % (env.now, i, r.count, len(r.queue)))
    if holds[i] > 0:
        yield env.timeout(holds[i])
    r.release(req)
    print('t=%d U%d released (in_use=%d queued=%d)' % (env.now, i, r.count, len(r.queue)))


for i in range(6):
    env.process(user(i))
env.run()
print('done t=%d' % env.now)
