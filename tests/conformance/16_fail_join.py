# A process that raises fails its own event; processes joining it get the error
# raised and catch it: J1 and J1b join F1 while it runs, J2 joins F2 in the
# instant F2 failed (before the failure is processed), J3 joins F1 long after.
import simpy

env = simpy.Environment()


def b(x):
    return 'true' if x else 'false'


def failer(n, d):
    if d > 0:
        yield env.timeout(d)
    print('t=%d %s raises' % (env.now, n))
    raise ValueError('boom-' + n)


def joiner(n, p, d):
    if d > 0:
        yield env.timeout(d)
    print('t=%d %s joins (alive=%s)' % (env.now, n, b(p.is_alive)))
    try:
        v = yield p
        print('t=%d %s got %s' % (env.now, n, v))
    except ValueError as e:
        print('t=%d %s caught %s (alive=%s ok=%s)' % (env.now, n, e, b(p.is_alive), b(p.ok)))


def bystander():
    yield env.timeout(2)
    print('t=%d B at 2' % env.now)


f1 = env.process(failer('F1', 2))
env.process(joiner('J1', f1, 0))
f2 = env.process(failer('F2', 0))
env.process(joiner('J2', f2, 0))
env.process(bystander())
env.process(joiner('J1b', f1, 1))
env.process(joiner('J3', f1, 5))
env.run()
print('done t=%d' % env.now)
