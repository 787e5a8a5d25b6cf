# A pending condition lives as long as its members can fire, even with no
# other reference: it still takes a member's failure (so the run goes on),
# then fails itself, and that failure, which nothing takes, crashes the run.
import gc

import simpy

env = simpy.Environment()
ev = env.event()
c = env.all_of([ev])
del c
gc.collect()


def p():
    ev.fail(ValueError('boom'))
    yield env.timeout(0)
    print('t=%d after fail' % env.now)


env.process(p())
try:
    env.run()
    print('run returned')
except Exception as e:
    print('run failed: %s' % e)
env.run()
print('done')
