# The main script steps one event at a time and prints the clock, the time of
# the next event and the store's count after each step: every event (process
# start, timeout, store put and get, process end) is one step.
import simpy
from simpy.core import EmptySchedule

env = simpy.Environment()
st = simpy.Store(env, capacity=1)


def T(x):
    return 'inf' if x == float('inf') else '%d' % x


def b(x):
    return 'true' if x else 'false'


def step():
    try:
        env.step()
        return 1
    except EmptySchedule:
        return 0


def prod():
    for i in range(3):
        yield st.put(i)
        print('  P put %d' % i)
        yield env.timeout(1)


def cons():
    for _ in range(3):
        x = yield st.get()
        print('  C got %d' % x)
    return 'C-done'


p = env.process(prod())
c = env.process(cons())
print('start: now=%d peek=%s' % (env.now, T(env.peek())))
k = 0
while step() == 1:
    k += 1
    print('step %d: now=%d peek=%s items=%d P alive=%s C alive=%s' % (k, env.now, T(env.peek()), len(st.items), b(p.is_alive), b(c.is_alive)))
print('steps=%d now=%d peek=%s' % (k, env.now, T(env.peek())))
