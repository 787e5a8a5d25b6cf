# all_of over timeouts that fire in the same instant. A condition is triggered
# while its last member is processed and is processed itself later in that
# instant, so processes waiting on a member directly run before its waiters.
import simpy

env = simpy.Environment()
ta = env.timeout(5, 'a')
tb = env.timeout(5, 'b')
tc = env.timeout(3, 'c')


def waiter_all(n, evs):
    cv = yield env.all_of(evs)
    print('t=%d %s all_of woke: %s' % (env.now, n, ','.join(cv[e] for e in evs)))


def waiter_one(n, ev):
    v = yield ev
    print('t=%d %s woke: %s' % (env.now, n, v))


def late_all():
    yield env.timeout(5)
    print('t=%d L builds all_of over a and b' % env.now)
    cv = yield env.all_of([ta, tb])
    print('t=%d L all_of woke: %s' % (env.now, ','.join(cv[e] for e in [ta, tb])))


env.process(waiter_all('P', [ta, tb, tc]))
env.process(waiter_one('Q', tb))
env.process(waiter_all('R', [tb, ta]))
env.process(waiter_one('S', ta))
env.process(waiter_all('T', [tc]))
env.process(late_all())
env.run()
print('done t=%d' % env.now)
