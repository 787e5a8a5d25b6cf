# Conditions over events that were processed earlier: the condition is
# triggered when it is built but still processed through the queue, so a
# process woken by an event already due in that instant runs before the
# waiter. Waiting on a processed event itself continues at once.
import simpy

env = simpy.Environment()
e2 = env.timeout(0, 'e2')
e1 = env.event()
e1.succeed('e1')


def b(x):
    return 'true' if x else 'false'


def p():
    yield env.timeout(1)
    print('t=%d P builds all_of (e1 processed=%s e2 processed=%s)' % (env.now, b(e1.processed), b(e2.processed)))
    c = env.all_of([e1, e2])
    print('t=%d P all_of triggered=%s processed=%s' % (env.now, b(c.triggered), b(c.processed)))
    cv = yield c
    print('t=%d P all_of woke: %s,%s' % (env.now, cv[e1], cv[e2]))
    pending = env.event()
    yield env.any_of([pending, e1])
    print('t=%d P any_of woke (pending triggered=%s)' % (env.now, b(pending.triggered)))
    v = yield e1
    print('t=%d P waited on e1 again: %s' % (env.now, v))
    v = yield e2
    print('t=%d P waited on e2 again: %s' % (env.now, v))


def q():
    yield env.timeout(1)
    print('t=%d Q runs' % env.now)
    yield env.timeout(0)
    print('t=%d Q after sleep 0' % env.now)
    yield env.timeout(0)
    print('t=%d Q after second sleep 0' % env.now)


env.process(p())
env.process(q())
env.run()
print('done t=%d' % env.now)
