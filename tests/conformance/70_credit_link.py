# A credit-based link: the sender takes a credit (a Container) before each
# flit, the receiver returns it when it has consumed the flit; a callback on
# each put request logs when the flit is in the buffer; the sender stalls when
# the credits run out.
import simpy

env = simpy.Environment()
credits = simpy.Container(env, capacity=2, init=2)
buf = simpy.Store(env)


def sender(n):
    for i in range(n):
        yield credits.get(1)
        p = buf.put('f%d' % i)
        p.callbacks.append(lambda e, i=i: print('t=%d flit f%d in the buffer (credits=%d)' % (env.now, i, credits.level)))
        yield p
        yield env.timeout(1)
    print('t=%d sender done' % env.now)


def receiver():
    while True:
        f = yield buf.get()
        print('t=%d receiver got %s' % (env.now, f))
        yield env.timeout(3)
        yield credits.put(1)
        print('t=%d receiver returned a credit (credits=%d)' % (env.now, credits.level))


env.process(sender(5))
env.process(receiver())
env.run(until=30)
print('done t=%d credits=%d' % (env.now, credits.level))
