# Interrupts and requests: a process waiting on its request inside a `with`
# block is interrupted; leaving the block cancels the waiting request (or
# releases the granted one), so the next in line is served. A process waiting
# on any_of over requests is interrupted and withdraws them by hand.
# Interrupting a process that has ended, or itself, is an error; an interrupt
# nobody catches fails the process and then the run.
import simpy

env = simpy.Environment()
res = simpy.Resource(env, capacity=1)
st = simpy.Store(env)


def user(name, hold):
    try:
        with res.request() as req:
            yield req
            print('t=%d %s has the slot' % (env.now, name))
            yield env.timeout(hold)
            print('t=%d %s done' % (env.now, name))
    except simpy.Interrupt as i:
        print('t=%d %s interrupted (%s) in_use=%d queued=%d' % (env.now, name, i.cause, res.count, len(res.queue)))


def chooser(name):
    g1 = st.get()
    g2 = st.get()
    try:
        yield g1 | g2
        print('t=%d %s got something' % (env.now, name))
    except simpy.Interrupt as i:
        g1.cancel()
        g2.cancel()
        print('t=%d %s interrupted (%s) getters=%d' % (env.now, name, i.cause, len(st.get_queue)))


def selfish():
    yield env.timeout(1)
    try:
        env.active_process.interrupt('me')
    except RuntimeError:
        print('t=%d selfish: cannot interrupt itself' % env.now)


def boss():
    u1 = env.process(user('U1', 10))
    u2 = env.process(user('U2', 2))
    u3 = env.process(user('U3', 2))
    c = env.process(chooser('C'))
    env.process(selfish())
    yield env.timeout(1)
    u2.interrupt('u2')     # waiting: the block cancels its request
    yield env.timeout(1)
    u1.interrupt('u1')     # holding: the block releases the slot, U3 gets it
    c.interrupt('c')
    yield env.timeout(5)
    try:
        u1.interrupt('again')
    except RuntimeError:
        print('t=%d boss: U1 has ended' % env.now)
    st.put('late')
    print('t=%d boss items=%d' % (env.now, len(st.items)))
    d = env.process(user('D', 5))
    yield env.timeout(1)
    d.interrupt(42)        # caught by user()
    yield env.timeout(1)
    e = env.process(unprotected())
    yield env.timeout(1)
    e.interrupt('fatal')


def unprotected():
    yield env.timeout(10)


env.process(boss())
try:
    env.run()
except simpy.Interrupt as i:
    print('t=%d run failed: interrupt %s' % (env.now, i.cause))
env.run()
print('done t=%d in_use=%d queued=%d items=%d' % (env.now, res.count, len(res.queue), len(st.items)))
