# run(until) boundaries: events due exactly at `until` are left for the next
# run and the clock ends at `until`; run(10), run(20), run(21), run(), then a
# run(100) past the last event and a run() after a process spawned at t=100.
import simpy

env = simpy.Environment()


def T(x):
    return 'inf' if x == float('inf') else '%d' % x


def b(x):
    return 'true' if x else 'false'


def sleeper(n, d, k):
    for _ in range(k):
        yield env.timeout(d)
        print('t=%d %s' % (env.now, n))


def late():
    print('t=%d late starts' % env.now)
    yield env.timeout(5)
    print('t=%d late ends' % env.now)


tx = env.timeout(10, 'tx')
env.process(sleeper('A', 5, 5))
env.process(sleeper('B', 10, 3))
env.process(sleeper('C', 20, 1))
for u in [10, 20, 21]:
    env.run(until=u)
    print('after run(%d): now=%d peek=%s tx processed=%s' % (u, env.now, T(env.peek()), b(tx.processed)))
env.run()
print('after run(): now=%d peek=%s' % (env.now, T(env.peek())))
env.run(until=100)
print('after run(100): now=%d peek=%s' % (env.now, T(env.peek())))
env.process(late())
print('spawned late: now=%d peek=%s' % (env.now, T(env.peek())))
env.run()
print('done t=%d peek=%s' % (env.now, T(env.peek())))
