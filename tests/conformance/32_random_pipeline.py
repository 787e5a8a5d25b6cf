# A pseudo-random pipeline (integer LCG, same in both languages): sources feed
# a capacity-1 store, two stage workers move items to a capacity-2 store while
# holding a 1-slot tool resource for random times (often 0), sinks take items
# waiting on any_of(get-side timeouts) and the main process joins the sources.
import simpy

env = simpy.Environment()
seed = 777


def rnd(n):
    global seed
    seed = (seed * 1103515245 + 12345) % 2147483648
    return (seed // 65536) % n


q1 = simpy.Store(env, capacity=1)
q2 = simpy.Store(env, capacity=2)
tool = simpy.Resource(env, capacity=1)
done = simpy.Store(env)


def source(n, k):
    for i in range(k):
        yield env.timeout(rnd(2))
        yield q1.put(n * 100 + i)
        print('t=%d S%d put %d (q1=%d)' % (env.now, n, n * 100 + i, len(q1.items)))
    return k


def stage(n):
    while True:
        x = yield q1.get()
        req = tool.request()
        yield req
        h = rnd(3)
        print('t=%d T%d took %d, tool for %d (queued=%d)' % (env.now, n, x, h, len(tool.queue)))
        if h > 0:
            yield env.timeout(h)
        tool.release(req)
        yield q2.put(x + 1)
        print('t=%d T%d passed %d (q2=%d)' % (env.now, n, x + 1, len(q2.items)))


def sink(n):
    while True:
        x = yield q2.get()
        t = env.timeout(rnd(3), 'slow')
        u = env.timeout(rnd(3), 'fast')
        yield env.any_of([t, u])
        print('t=%d K%d got %d (%s %s)' % (env.now, n, x, 'slow' if t.processed else '-', 'fast' if u.processed else '-'))
        yield done.put(x)


def main():
    srcs = [env.process(source(n, 6 + n)) for n in range(1, 4)]
    cv = yield env.all_of(srcs)
    print('t=%d sources finished: %s' % (env.now, ','.join('%d' % cv[p] for p in srcs)))
    total = 0
    while total < 24:
        x = yield done.get()
        total += 1
    print('t=%d main collected %d items (q1=%d q2=%d done=%d)' % (env.now, total, len(q1.items), len(q2.items), len(done.items)))


env.process(stage(1))
env.process(sink(1))
env.process(stage(2))
env.process(sink(2))
env.process(main())
env.run()
print('done t=%d seed=%d' % (env.now, seed))
