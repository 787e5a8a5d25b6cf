# Five users loop three times over a 3-slot resource: acquire, print, release
# with no time in between; U1 and U3 also sleep 0 between rounds. Requesting
# again right after a release queues behind the users already waiting.
import simpy

env = simpy.Environment()
r = simpy.Resource(env, capacity=3)


def user(n, pause):
    for k in range(3):
        req = r.request()
        yield req
        print('t=%d U%d round %d (in_use=%d queued=%d)' % (env.now, n, k, r.count, len(r.queue)))
        r.release(req)
        if pause:
            yield env.timeout(0)
    print('t=%d U%d finished' % (env.now, n))


for n in range(5):
    env.process(user(n, n % 2 == 1))
env.run()
print('done t=%d in_use=%d queued=%d' % (env.now, r.count, len(r.queue)))
