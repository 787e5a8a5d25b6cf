# any_of whose members fire in the same instant: both are processed before the
# condition is, so the waiter sees both done; an any_of with a member that never
# fires; and an any_of decided by a timeout just before another process
# succeeds its other member in the same instant.
import simpy

env = simpy.Environment()
t4x = env.timeout(4, 'x')
t4y = env.timeout(4, 'y')
t2 = env.timeout(2, 'z')
never = env.event()
ev = env.event()


def st(e):
    return str(e.value) if e.processed else '-'


def any_waiter(n, evs):
    yield env.any_of(evs)
    print('t=%d %s any_of woke: %s' % (env.now, n, ' '.join(st(e) for e in evs)))


def direct():
    v = yield t4y
    print('t=%d D woke: %s (x=%s)' % (env.now, v, st(t4x)))


def e_proc():
    t3 = env.timeout(3, 't3')
    yield env.any_of([ev, t3])
    print('t=%d E any_of woke: %s %s (ev triggered=%s)' % (env.now, st(ev), st(t3), 'true' if ev.triggered else 'false'))
    v = yield ev
    print('t=%d E then got %s' % (env.now, v))


def k_proc():
    yield env.timeout(3)
    ev.succeed('ev')
    print('t=%d K succeeded ev' % env.now)


env.process(any_waiter('A', [t4x, t4y]))
env.process(any_waiter('B', [never, t2]))
env.process(direct())
env.process(any_waiter('C', [t4y, t2, never]))
env.process(e_proc())
env.process(k_proc())
env.run()
print('done t=%d never triggered=%s' % (env.now, 'true' if never.triggered else 'false'))
