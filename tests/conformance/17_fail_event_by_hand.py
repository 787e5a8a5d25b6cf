# An event failed by hand while processes wait on it: each waiter gets the
# reason raised, in the order they started waiting, and catches it; the failer
# waits on the event itself (woken last); waiting later raises at once.
import simpy

env = simpy.Environment()
ev = env.event()


def b(x):
    return 'true' if x else 'false'


def waiter(n):
    try:
        v = yield ev
        print('t=%d %s got %s' % (env.now, n, v))
    except ValueError as e:
        print('t=%d %s caught %s' % (env.now, n, e))


def killer():
    yield env.timeout(2)
    ev.fail(ValueError('bad'))
    print('t=%d K failed ev (triggered=%s ok=%s processed=%s)' % (env.now, b(ev.triggered), b(ev.ok), b(ev.processed)))
    try:
        yield ev
        print('t=%d K not reached' % env.now)
    except ValueError as e:
        print('t=%d K caught %s' % (env.now, e))


def bystander():
    yield env.timeout(2)
    print('t=%d B at 2' % env.now)


def late():
    yield env.timeout(4)
    try:
        yield ev
        print('t=%d L not reached' % env.now)
    except ValueError as e:
        print('t=%d L caught %s at once' % (env.now, e))
    print('t=%d L continues' % env.now)


env.process(waiter('W1'))
env.process(killer())
env.process(waiter('W2'))
env.process(bystander())
env.process(late())
env.run()
print('done t=%d' % env.now)
