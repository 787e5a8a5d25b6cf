# PriorityResource: waiting requests are served by priority (lower first),
# then by the time they were made, in arrival order among equals; a request
# made later with a better priority overtakes the queue but never takes a
# slot in use; releases in one instant and cancelled requests.
import simpy

env = simpy.Environment()
bus = simpy.PriorityResource(env, capacity=2)


def user(name, prio, d, hold):
    yield env.timeout(d)
    with bus.request(priority=prio) as req:
        print('t=%d %s asks (prio %d, in_use=%d queued=%d)' % (env.now, name, prio, bus.count, len(bus.queue)))
        yield req
        print('t=%d %s has a slot' % (env.now, name))
        yield env.timeout(hold)
    print('t=%d %s released (in_use=%d queued=%d)' % (env.now, name, bus.count, len(bus.queue)))


def quitter(name, prio, d, patience):
    yield env.timeout(d)
    req = bus.request(priority=prio)
    yield req | env.timeout(patience)
    if req.triggered:
        print('t=%d %s has a slot, leaves it' % (env.now, name))
        bus.release(req)
    else:
        req.cancel()
        print('t=%d %s gave up (queued=%d)' % (env.now, name, len(bus.queue)))


env.process(user('A', 5, 0, 4))
env.process(user('B', 5, 0, 4))
env.process(user('C', 3, 1, 1))
env.process(user('D', 1, 1, 1))
env.process(user('E', 3, 1, 2))
env.process(user('F', 1, 2, 1))
env.process(quitter('Q', 0, 2, 1))
env.process(user('G', 2, 3, 1))
env.process(quitter('R', 9, 3, 20))
env.process(user('H', 0, 5, 1))
env.run()
print('done t=%d in_use=%d queued=%d' % (env.now, bus.count, len(bus.queue)))
