# Interrupts during blocking store and resource calls: the request goes on
# without its process (SimPy removes only the process's callback). A get
# interrupted while waiting keeps its place and takes a later item; one
# interrupted after being served (before its processing) keeps its item; a
# put interrupted while the store is full still puts its item later; an
# acquire interrupted while queued is granted later and keeps the slot.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=1)
res = simpy.Resource(env, capacity=2)
sig = {}


def getter(name, pre):
    if pre:
        sig[name].succeed()
    try:
        x = yield st.get()
        print('t=%d %s got %s' % (env.now, name, x))
    except simpy.Interrupt as i:
        print('t=%d %s interrupted (%s) items=%d getters=%d' % (env.now, name, i.cause, len(st.items), len(st.get_queue)))


def putter(name, x):
    try:
        yield st.put(x)
        print('t=%d %s put %s' % (env.now, name, x))
    except simpy.Interrupt as i:
        print('t=%d %s interrupted (%s) putters=%d' % (env.now, name, i.cause, len(st.put_queue)))


def acquirer(name, pre, hold):
    if pre:
        sig[name].succeed()
    try:
        req = res.request()
        yield req
        print('t=%d %s has a slot (in_use=%d)' % (env.now, name, res.count))
        yield env.timeout(hold)
        res.release(req)
        print('t=%d %s released (in_use=%d queued=%d)' % (env.now, name, res.count, len(res.queue)))
    except simpy.Interrupt as i:
        print('t=%d %s interrupted (%s) in_use=%d queued=%d' % (env.now, name, i.cause, res.count, len(res.queue)))


def boss():
    g1 = env.process(getter('G1', False))
    yield env.timeout(1)
    g1.interrupt('g1')                       # waiting: its get stays queued
    g2 = env.process(getter('G2', False))
    yield env.timeout(1)
    yield st.put('i1')                       # taken by G1's orphaned get
    print('t=%d boss put i1 items=%d getters=%d' % (env.now, len(st.items), len(st.get_queue)))
    yield st.put('i2')                       # G2 gets it
    yield env.timeout(1)
    yield st.put('i3')
    sig['G3'] = env.event()
    g3 = env.process(getter('G3', True))     # served at once, interrupted before its processing
    yield sig['G3']
    g3.interrupt('g3')
    yield env.timeout(1)
    print('t=%d boss items=%d' % (env.now, len(st.items)))
    yield st.put('i4')
    p1 = env.process(putter('P1', 'i5'))     # the store is full: waits
    yield env.timeout(1)
    p1.interrupt('p1')
    yield env.timeout(1)
    x = yield st.get()
    print('t=%d boss got %s items=%d' % (env.now, x, len(st.items)))
    x = yield st.get()
    print('t=%d boss got %s items=%d' % (env.now, x, len(st.items)))
    a1 = env.process(acquirer('A1', False, 10))
    a2 = env.process(acquirer('A2', False, 3))
    a3 = env.process(acquirer('A3', False, 1))
    yield env.timeout(1)
    a3.interrupt('a3')                       # queued: granted later, holds the slot
    yield env.timeout(5)
    print('t=%d boss in_use=%d queued=%d' % (env.now, res.count, len(res.queue)))
    yield env.timeout(5)
    sig['A4'] = env.event()
    a4 = env.process(acquirer('A4', True, 1))  # granted at once, interrupted before its processing
    yield sig['A4']
    a4.interrupt('a4')
    yield env.timeout(5)
    print('t=%d boss in_use=%d queued=%d' % (env.now, res.count, len(res.queue)))


env.process(boss())
env.run()
print('done t=%d items=%d in_use=%d queued=%d' % (env.now, len(st.items), res.count, len(res.queue)))
