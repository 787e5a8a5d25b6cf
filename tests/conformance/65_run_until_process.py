# run(until=process): returns what the process returned; a process that
# fails is raised by the run that processes it, and returned (the failure
# itself) by a later run(until=) of it; run(until=any_of) returns when the
# condition is processed, leaving the rest of the instant to the next run.
import simpy

env = simpy.Environment()


def job(name, d, fail=False):
    yield env.timeout(d)
    print('t=%d %s finishes' % (env.now, name))
    if fail:
        raise ValueError(name + ' broke')
    return name + '-ok'


def noise():
    for i in range(8):
        yield env.timeout(1)
        print('t=%d noise %d' % (env.now, i))


env.process(noise())
p1 = env.process(job('J1', 2))
print('run -> %s at t=%d' % (env.run(until=p1), env.now))
p2 = env.process(job('J2', 2, fail=True))
try:
    env.run(until=p2)
except ValueError as e:
    print('run raised %s at t=%d' % (e, env.now))
v = env.run(until=p2)
print('again -> %s at t=%d' % (v, env.now))
c = env.any_of([env.timeout(2, 'x'), env.process(job('J3', 2))])
env.run(until=c)
print('any_of at t=%d' % env.now)
env.run()
print('done t=%d' % env.now)
