# Preemption in a chain: each better request takes the slot of the worst user
# in turn; a preempted user re-requests with a better priority and preempts
# back; usage_since is when the victim got its slot.
import simpy

env = simpy.Environment()
bus = simpy.PreemptiveResource(env, capacity=1)
procs = {}


def name_of(p):
    for n, q in procs.items():
        if q is p:
            return n
    return 'main'


def user(name, prios, d, hold):
    yield env.timeout(d)
    for prio in prios:
        with bus.request(priority=prio) as req:
            try:
                yield req
                print('t=%d %s has the bus at prio %d' % (env.now, name, prio))
                yield env.timeout(hold)
                print('t=%d %s done' % (env.now, name))
                return
            except simpy.Interrupt as i:
                print('t=%d %s lost the bus (prio %d) to %s, held since %d' % (
                    env.now, name, prio, name_of(i.cause.by), i.cause.usage_since))


for name, prios, d, hold in [('u1', [5, 0], 0, 6), ('u2', [4], 1, 4), ('u3', [3, 1], 2, 3), ('u4', [2], 3, 1)]:
    procs[name] = env.process(user(name, prios, d, hold))
env.run()
print('done t=%d in_use=%d' % (env.now, bus.count))
