# Resource requests as events in `with` blocks: customers renege after a
# patience timeout (the request leaves the queue), one releases early inside
# its block (a second release when the block ends), one raises inside its
# block (the block still gives the slot back) and is joined.
import simpy

env = simpy.Environment()
counter = simpy.Resource(env, capacity=1)


def customer(name, arrive, patience, work, mode):
    yield env.timeout(arrive)
    print('t=%d %s arrives (in_use=%d queued=%d)' % (env.now, name, counter.count, len(counter.queue)))
    with counter.request() as req:
        res = yield req | env.timeout(patience)
        if req in res:
            print('t=%d %s served' % (env.now, name))
            yield env.timeout(work)
            if mode == 'early':
                counter.release(req)
                print('t=%d %s released early (in_use=%d)' % (env.now, name, counter.count))
                yield env.timeout(1)
            elif mode == 'raise':
                raise ValueError('fault-' + name)
            print('t=%d %s leaves' % (env.now, name))
        else:
            print('t=%d %s reneges (queued=%d)' % (env.now, name, len(counter.queue)))
    print('t=%d %s out of block (in_use=%d queued=%d)' % (env.now, name, counter.count, len(counter.queue)))


def joiner(p):
    try:
        yield p
    except ValueError as e:
        print('t=%d J caught %s (in_use=%d)' % (env.now, e, counter.count))


env.process(customer('C0', 0, 10, 4, 'early'))
env.process(customer('C1', 1, 2, 3, 'plain'))
c2 = env.process(customer('C2', 1, 8, 2, 'raise'))
env.process(customer('C3', 2, 20, 1, 'plain'))
env.process(customer('C4', 4, 1, 1, 'plain'))
env.process(customer('C5', 5, 30, 0, 'plain'))
c6 = env.process(customer('C6', 6, 30, 2, 'raise'))
env.process(joiner(c2))
env.process(joiner(c6))
env.run()
print('done t=%d in_use=%d queued=%d' % (env.now, counter.count, len(counter.queue)))
