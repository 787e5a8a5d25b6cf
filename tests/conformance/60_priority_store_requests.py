# PriorityStore requests as events: a bounded deadline queue whose putters
# wait for room; a put request cancelled while waiting (its item never goes
# in); a get request with a timeout; waiting getters take items as they come.
import simpy

env = simpy.Environment()
q = simpy.PriorityStore(env, capacity=2)


def producer():
    for deadline, name in [(9, 'j9'), (4, 'j4'), (7, 'j7'), (1, 'j1'), (5, 'j5')]:
        p = q.put(simpy.PriorityItem(deadline, name))
        yield p | env.timeout(1)
        if p.triggered:
            print('t=%d put %s (items=%d)' % (env.now, name, len(q.items)))
        else:
            p.cancel()
            print('t=%d dropped %s (putters=%d)' % (env.now, name, len(q.put_queue)))


def consumer(name, d):
    yield env.timeout(d)
    g = q.get()
    yield g | env.timeout(2)
    if g.triggered:
        print('t=%d %s took %s' % (env.now, name, g.value.item))
    else:
        g.cancel()
        print('t=%d %s found nothing' % (env.now, name))


env.process(producer())
for i, d in enumerate([3, 3, 4, 8, 8]):
    env.process(consumer('C%d' % i, d))
env.run()
print('done t=%d items=%s' % (env.now, ' '.join(x.item for x in sorted(q.items))))
