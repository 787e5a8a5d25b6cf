# Joining a process at different moments: a parent spawns a child and joins it
# at once; J joins C in the instant C returned, before C's completion is
# processed (J waits); L joins C long after (continues at once, before M).
import simpy

env = simpy.Environment()


def b(x):
    return 'true' if x else 'false'


def child(v):
    print('t=%d child %d runs' % (env.now, v))
    return v * 2
    yield  # (a generator)


def parent():
    c = env.process(child(5))
    print('t=%d parent spawned child (alive=%s)' % (env.now, b(c.is_alive)))
    v = yield c
    print('t=%d parent got %d (alive=%s)' % (env.now, v, b(c.is_alive)))


def cproc():
    yield env.timeout(2)
    print('t=%d C returns' % env.now)
    return 7


def jproc():
    yield env.timeout(2)
    print('t=%d J joins C (alive=%s triggered=%s processed=%s)' % (env.now, b(c.is_alive), b(c.triggered), b(c.processed)))
    v = yield c
    print('t=%d J got %d' % (env.now, v))


def kproc():
    yield env.timeout(2)
    print('t=%d K at 2' % env.now)
    v = yield c
    print('t=%d K got %d' % (env.now, v))


def lproc():
    yield env.timeout(10)
    v = yield c
    print('t=%d L got %d at once (processed=%s)' % (env.now, v, b(c.processed)))


def mproc():
    yield env.timeout(10)
    print('t=%d M at 10' % env.now)


env.process(parent())
c = env.process(cproc())
env.process(jproc())
env.process(kproc())
env.process(lproc())
env.process(mproc())
env.run()
print('done t=%d' % env.now)
