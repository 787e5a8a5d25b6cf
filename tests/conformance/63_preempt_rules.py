# Who a preempting request takes the slot from, with two slots: the user of
# greatest key (priority, then the later request, then non-preempting first);
# a request of equal key preempts nobody; a request with preempt=False queues
# even when it is better; a preempting request behind a non-preempting head
# waits its turn.
import simpy

env = simpy.Environment()
r = simpy.PreemptiveResource(env, capacity=2)
names = {}


def user(name, prio, pre, d, hold):
    yield env.timeout(d)
    req = r.request(priority=prio, preempt=pre)
    names[req] = name
    with req:
        try:
            yield req
            print('t=%d %s in (prio %d) users=%s' % (env.now, name, prio, ','.join(sorted(names[u] for u in r.users))))
            yield env.timeout(hold)
            print('t=%d %s out' % (env.now, name))
        except simpy.Interrupt as i:
            print('t=%d %s preempted, held since %d' % (env.now, name, i.cause.usage_since))


for name, prio, pre, d, hold in [('a', 3, True, 0, 9), ('b', 3, True, 0, 9), ('c', 3, True, 1, 2),
                                 ('d', 1, False, 2, 2), ('e', 2, True, 3, 2), ('f', 0, True, 3, 1)]:
    env.process(user(name, prio, pre, d, hold))
env.run()
print('done t=%d in_use=%d' % (env.now, r.count))
