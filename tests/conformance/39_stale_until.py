# run(until) is an event at `until`: a run that crashes before it leaves it
# queued, and it stops a later run() there; run(until) twice to the same
# time after a crash leaves the second one queued for the run after.
import simpy

env = simpy.Environment()


def pk():
    p = env.peek()
    return 'inf' if p == float('inf') else '%d' % p


def raiser(at):
    yield env.timeout(at)
    raise ValueError('x%d' % at)


def ticker():
    for i in range(12):
        yield env.timeout(1)
        print('t=%d tick' % env.now)


env.process(raiser(0))
env.process(raiser(5))
env.process(ticker())
for attempt in range(2):
    try:
        env.run(until=4)
        print('run(4) returned t=%d' % env.now)
    except Exception as e:
        print('run(4) failed: %s t=%d peek=%s' % (e, env.now, pk()))
env.run()
print('run() returned t=%d peek=%s' % (env.now, pk()))
try:
    env.run(until=8)
except Exception as e:
    print('run(8) failed: %s t=%d peek=%s' % (e, env.now, pk()))
env.run()
print('run() returned t=%d peek=%s' % (env.now, pk()))
env.run()
print('run() returned t=%d peek=%s' % (env.now, pk()))
