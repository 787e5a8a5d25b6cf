# Conditions over processes: an all_of over workers returning values (one
# finished and processed before the condition is built), an any_of over two
# processes finishing in the same instant, and an any_of between a process
# spawned in that instant and a zero timeout (the timeout decides it).
import simpy

env = simpy.Environment()


def st(e):
    return str(e.value) if e.processed else '-'


def worker(n, d):
    if d > 0:
        yield env.timeout(d)
    print('t=%d %s returns' % (env.now, n))
    return n.lower()


def boss():
    q = env.process(worker('Q', 0))
    yield env.timeout(1)
    ws = [env.process(worker('A', 2)), env.process(worker('B', 2)), q]
    cv = yield env.all_of(ws)
    print('t=%d boss all_of: %s' % (env.now, ','.join(cv[w] for w in ws)))
    x = env.process(worker('X', 1))
    y = env.process(worker('Y', 1))
    yield env.any_of([x, y])
    print('t=%d boss any_of: %s %s' % (env.now, st(x), st(y)))
    z = env.process(worker('Z', 0))
    t0 = env.timeout(0, 't0')
    yield env.any_of([z, t0])
    print('t=%d boss any_of: %s %s (z alive=%s)' % (env.now, st(z), st(t0), 'true' if z.is_alive else 'false'))
    v = yield z
    print('t=%d boss joined z: %s' % (env.now, v))


def bystander():
    yield env.timeout(3)
    print('t=%d bystander at 3' % env.now)
    yield env.timeout(1)
    print('t=%d bystander at 4' % env.now)


env.process(boss())
env.process(bystander())
env.run()
print('done t=%d' % env.now)
