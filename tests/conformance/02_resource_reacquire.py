# The resource example: a one-slot resource; P1 acquires, releases and
# acquires again with no time in between, P2 acquires once. The release passes
# the slot to the waiting P2 before P1's second request is served.
import simpy

env = simpy.Environment()
r = simpy.Resource(env, capacity=1)


def p1():
    req = r.request()
    yield req
    print('P1 acq1')
    r.release(req)
    req2 = r.request()
    yield req2
    print('P1 acq2')
    r.release(req2)


def p2():
    req = r.request()
    yield req
    print('P2 acq')
    r.release(req)


env.process(p1())
env.process(p2())
env.run()
print('done t=%d' % env.now)
