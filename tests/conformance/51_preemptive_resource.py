# PreemptiveResource: a request of better priority takes the slot of the
# user of worst key (priority, time, not preempt), whose process gets an
# Interrupt whose cause says by whom and since when; preempt=False requests
# wait instead; a preempted user in a `with` block leaves it; a request does
# not preempt a user of equal key.
import simpy

env = simpy.Environment()
arb = simpy.PreemptiveResource(env, capacity=2)
procs = {}


def name_of(p):
    for n, q in procs.items():
        if q is p:
            return n
    return '?'


def master(name, prio, d, hold, preempt=True):
    yield env.timeout(d)
    with arb.request(priority=prio, preempt=preempt) as req:
        try:
            yield req
            print('t=%d %s granted (prio %d, in_use=%d)' % (env.now, name, prio, arb.count))
            yield env.timeout(hold)
            print('t=%d %s done' % (env.now, name))
        except simpy.Interrupt as i:
            c = i.cause
            print('t=%d %s preempted by %s, used since %d (in_use=%d queued=%d)' % (
                env.now, name, name_of(c.by), c.usage_since, arb.count, len(arb.queue)))


for name, prio, d, hold, pre in [('low1', 5, 0, 10, True), ('low2', 5, 1, 10, True),
                                 ('mid', 3, 2, 3, True), ('polite', 1, 3, 2, False),
                                 ('top', 0, 4, 2, True), ('same', 3, 4, 1, True),
                                 ('late', 4, 6, 1, True)]:
    procs[name] = env.process(master(name, prio, d, hold, pre))
env.run()
print('done t=%d in_use=%d queued=%d' % (env.now, arb.count, len(arb.queue)))
