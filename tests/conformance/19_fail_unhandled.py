# A failure nobody waits on crashes the run when the failed event is processed
# (not when the process raises): Y, due in the same instant, runs first. The
# main script catches the error, runs on, and an event failed by hand between
# runs with no waiter crashes the next run the same way.
import simpy

env = simpy.Environment()


def b(x):
    return 'true' if x else 'false'


def x():
    yield env.timeout(1)
    print('t=%d X raises' % env.now)
    raise ValueError('boom')


def y():
    yield env.timeout(1)
    print('t=%d Y at 1' % env.now)
    yield env.timeout(2)
    print('t=%d Y at 3' % env.now)


px = env.process(x())
env.process(y())
try:
    env.run()
    print('run returned')
except Exception as e:
    print('run failed: %s (t=%d)' % (e, env.now))
print('X alive=%s ok=%s' % (b(px.is_alive), b(px.ok)))
env.run()
print('second run returned at t=%d' % env.now)
ev = env.event()
ev.fail(ValueError('lost'))
t = env.timeout(2, 'later')
try:
    env.run()
    print('run returned')
except Exception as e:
    print('run failed: %s (t=%d)' % (e, env.now))
print('t processed=%s' % b(t.processed))
env.run()
print('done t=%d t processed=%s' % (env.now, b(t.processed)))
