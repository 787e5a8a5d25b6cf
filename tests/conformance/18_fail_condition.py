# Failures through conditions: an all_of fails when a member failed by hand is
# processed and its waiter catches the reason (the other members still succeed
# later); an any_of whose first member to fire fails; an all_of over a process
# that raises.
import simpy

env = simpy.Environment()
e = env.event()
f = env.event()


def st(x):
    return str(x.value) if x.processed else '-'


def w_all():
    t1 = env.timeout(1, 't1')
    t5 = env.timeout(5, 't5')
    try:
        cv = yield env.all_of([t1, e, t5])
        print('t=%d A not reached' % env.now)
    except ValueError as x:
        print('t=%d A caught %s (t1=%s t5=%s)' % (env.now, x, st(t1), st(t5)))
    v = yield t5
    print('t=%d A then got %s' % (env.now, v))


def w_any():
    t3 = env.timeout(3, 't3')
    try:
        yield env.any_of([t3, f])
        print('t=%d Y not reached' % env.now)
    except ValueError as x:
        print('t=%d Y caught %s (t3=%s)' % (env.now, x, st(t3)))


def failer():
    yield env.timeout(2)
    e.fail(ValueError('e-failed'))
    f.fail(ValueError('f-failed'))
    print('t=%d F failed e and f' % env.now)


def raiser():
    yield env.timeout(4)
    print('t=%d R raises' % env.now)
    raise ValueError('r-failed')


def w_proc(r):
    t6 = env.timeout(6, 't6')
    try:
        yield env.all_of([r, t6])
        print('t=%d P not reached' % env.now)
    except ValueError as x:
        print('t=%d P caught %s (t6=%s)' % (env.now, x, st(t6)))


env.process(w_all())
env.process(w_any())
env.process(failer())
r = env.process(raiser())
env.process(w_proc(r))
env.run()
print('done t=%d' % env.now)
