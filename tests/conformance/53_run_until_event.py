# run(until=event): the run stops once the event is processed and returns its
# value (a hand event, a process's return value, a timeout, a condition);
# events of the same instant queued after it wait for the next run; an event
# already processed returns at once; a failed until event raises from run; a
# run whose queue empties first raises.
import simpy

env = simpy.Environment()
gate = env.event()


def ticker(name, n):
    for i in range(n):
        yield env.timeout(1)
        print('t=%d %s tick %d' % (env.now, name, i))


def opener():
    yield env.timeout(3)
    gate.succeed('open')
    print('t=%d gate opened' % env.now)


def job():
    yield env.timeout(2)
    return 'job-result'


env.process(ticker('K', 12))
env.process(opener())
v = env.run(until=gate)
print('run -> %s at t=%d' % (v, env.now))
j = env.process(job())
v = env.run(until=j)
print('run -> %s at t=%d' % (v, env.now))
v = env.run(until=env.timeout(2, 'two'))
print('run -> %s at t=%d' % (v, env.now))
v = env.run(until=gate)
print('again -> %s at t=%d' % (v, env.now))
bad = env.event()


def breaker():
    yield env.timeout(1)
    bad.fail(ValueError('broken'))


env.process(breaker())
try:
    env.run(until=bad)
except ValueError as e:
    print('run raised %s at t=%d' % (e, env.now))
env.run(until=env.all_of([env.timeout(1), env.timeout(2)]))
print('all_of at t=%d' % env.now)
never = env.event()
try:
    env.run(until=never)
except RuntimeError:
    print('run: no events left at t=%d' % env.now)
