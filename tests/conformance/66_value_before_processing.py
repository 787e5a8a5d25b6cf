# The value of an event triggered but not yet processed is already there:
# a timeout's from the start, a hand event's once succeeded, a get request's
# item once served, a process's return value once it returned; processed is
# false until the event's turn in the queue.
import simpy

env = simpy.Environment()
st = simpy.Store(env)
ev = env.event()


def b(x):
    return 'true' if x else 'false'


def quick():
    return 'q'
    yield


def observer():
    t = env.timeout(5, 'five')
    print('t=%d timeout value=%s triggered=%s processed=%s' % (env.now, t.value, b(t.triggered), b(t.processed)))
    ev.succeed('hand')
    print('t=%d event value=%s processed=%s' % (env.now, ev.value, b(ev.processed)))
    st.put('item')
    g = st.get()
    print('t=%d get triggered=%s value=%s processed=%s' % (env.now, b(g.triggered), g.value, b(g.processed)))
    p = env.process(quick())
    yield env.timeout(0)
    print('t=%d process triggered=%s value=%s processed=%s' % (env.now, b(p.triggered), p.value, b(p.processed)))
    yield p
    print('t=%d process processed=%s' % (env.now, b(p.processed)))
    yield t
    print('t=%d timeout processed=%s' % (env.now, b(t.processed)))


env.process(observer())
env.run()
