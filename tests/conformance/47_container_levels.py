# Container: puts and gets of amounts. Each queue is served from its head for
# as long as requests fit and stops at the first that does not (a big get at
# the head holds back smaller ones behind it); a put's processing serves the
# getters, a get's the putters; requests are cancelled and made by the main
# script between runs.
import simpy

env = simpy.Environment()
tank = simpy.Container(env, capacity=10, init=4)


def getter(name, amount, d):
    yield env.timeout(d)
    print('t=%d %s wants %d (level=%d)' % (env.now, name, amount, tank.level))
    yield tank.get(amount)
    print('t=%d %s got %d (level=%d)' % (env.now, name, amount, tank.level))


def putter(name, amount, d):
    yield env.timeout(d)
    print('t=%d %s puts %d (level=%d)' % (env.now, name, amount, tank.level))
    yield tank.put(amount)
    print('t=%d %s put %d (level=%d getters=%d putters=%d)' % (env.now, name, amount, tank.level, len(tank.get_queue), len(tank.put_queue)))


def impatient(name, amount, d, patience):
    yield env.timeout(d)
    req = tank.get(amount)
    yield req | env.timeout(patience)
    if req.processed:
        print('t=%d %s got %d' % (env.now, name, amount))
    else:
        req.cancel()
        print('t=%d %s gave up (level=%d getters=%d)' % (env.now, name, tank.level, len(tank.get_queue)))


env.process(getter('G1', 3, 0))
env.process(getter('G2', 6, 0))
env.process(getter('G3', 1, 0))
env.process(putter('P1', 2, 1))
env.process(putter('P2', 5, 1))
env.process(impatient('I1', 9, 1, 1))
env.process(impatient('I2', 9, 2, 3))
env.process(putter('P3', 8, 3))
env.process(putter('P4', 7, 3))
env.process(getter('G4', 4, 6))
env.run(until=8)
print('main t=%d level=%d getters=%d putters=%d' % (env.now, tank.level, len(tank.get_queue), len(tank.put_queue)))
g = tank.get(2)
p = tank.put(1)
print('main g=%s p=%s level=%d' % ('true' if g.triggered else 'false', 'true' if p.triggered else 'false', tank.level))
env.run()
print('done t=%d level=%d getters=%d putters=%d' % (env.now, tank.level, len(tank.get_queue), len(tank.put_queue)))
