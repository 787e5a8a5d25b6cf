# Container requests as events: credits for a link, taken with a timeout
# (a sender gives up and cancels), returned by the receiver; a cancelled get
# at the head of the queue stops holding back the smaller gets behind it only
# when the next put is processed.
import simpy

env = simpy.Environment()
credits = simpy.Container(env, capacity=4, init=4)


def sender(name, n, d, patience):
    yield env.timeout(d)
    g = credits.get(n)
    yield g | env.timeout(patience)
    if g.triggered:
        print('t=%d %s took %d credits (level=%d)' % (env.now, name, n, credits.level))
        yield env.timeout(2)
        yield credits.put(n)
        print('t=%d %s returned %d (level=%d getters=%d)' % (env.now, name, n, credits.level, len(credits.get_queue)))
    else:
        g.cancel()
        print('t=%d %s gave up (getters=%d level=%d)' % (env.now, name, len(credits.get_queue), credits.level))


env.process(sender('A', 3, 0, 5))
env.process(sender('B', 4, 1, 1))
env.process(sender('C', 1, 1, 9))
env.process(sender('D', 2, 1, 9))
env.process(sender('E', 4, 3, 9))
env.run()
print('done t=%d level=%d' % (env.now, credits.level))
