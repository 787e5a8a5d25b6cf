# A condition stops watching its members once it is decided: a member of a
# decided any_of that fails later, or the second member of an all_of to fail
# in the same instant, has no waiter, so its failure crashes the run (the main
# script catches it and runs on; the all_of waiter then catches the first).
import simpy

env = simpy.Environment()
a = env.event()
c1 = env.event()
c2 = env.event()


def any_waiter():
    t1 = env.timeout(1, 't1')
    v = yield env.any_of([t1, a])
    print('t=%d W any_of woke (a triggered=%s)' % (env.now, 'true' if a.triggered else 'false'))


def all_waiter():
    try:
        yield env.all_of([c1, c2])
        print('t=%d V not reached' % env.now)
    except ValueError as e:
        print('t=%d V caught %s' % (env.now, e))


def failer():
    yield env.timeout(2)
    a.fail(ValueError('a-failed'))
    print('t=%d F failed a' % env.now)
    yield env.timeout(1)
    c1.fail(ValueError('c1-failed'))
    c2.fail(ValueError('c2-failed'))
    print('t=%d F failed c1 and c2' % env.now)
    yield env.timeout(1)
    print('t=%d F done' % env.now)


env.process(any_waiter())
env.process(all_waiter())
env.process(failer())
for _ in range(3):
    try:
        env.run()
        print('run returned at t=%d' % env.now)
        break
    except Exception as e:
        print('run failed: %s (t=%d)' % (e, env.now))
print('done t=%d' % env.now)
