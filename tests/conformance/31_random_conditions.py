# A pseudo-random model of conditions and joins (integer LCG, same in both
# languages): workers wait on all_of or any_of over random timeouts (often 0)
# and on gates a controller opens at random times; a collector joins the
# workers with all_of, another waits for the first worker with any_of.
import simpy

env = simpy.Environment()
seed = 4242


def rnd(n):
    global seed
    seed = (seed * 1103515245 + 12345) % 2147483648
    return (seed // 65536) % n


def st(e):
    return str(e.value) if e.processed else '-'


gates = [env.event() for _ in range(6)]


def controller():
    for k in range(6):
        yield env.timeout(rnd(3))
        gates[k].succeed('g%d' % k)
        print('t=%d ctl opens g%d' % (env.now, k))


def worker(n):
    for k in range(12):
        a = env.timeout(rnd(4), '%s.%da' % (n, k))
        b = env.timeout(rnd(4), '%s.%db' % (n, k))
        mode = rnd(3)
        if mode == 0:
            cv = yield env.all_of([a, b])
            print('t=%d %s all %s,%s' % (env.now, n, cv[a], cv[b]))
        elif mode == 1:
            yield env.any_of([a, b])
            print('t=%d %s any %s %s' % (env.now, n, st(a), st(b)))
        else:
            g = gates[rnd(6)]
            yield env.any_of([g, a])
            print('t=%d %s gate-or-timeout %s %s' % (env.now, n, st(g), st(a)))
    return n + '-done'


def collector(ws):
    cv = yield env.all_of(ws)
    print('t=%d collector: %s' % (env.now, ','.join(cv[w] for w in ws)))


def first(ws):
    yield env.any_of(ws)
    print('t=%d first: %s' % (env.now, ' '.join(st(w) for w in ws)))


env.process(controller())
ws = [env.process(worker('W%d' % i)) for i in range(1, 6)]
env.process(collector(ws))
env.process(first(ws))
env.run()
print('done t=%d seed=%d' % (env.now, seed))
