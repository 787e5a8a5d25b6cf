# Cancelling requests in a queue: a cancelled head put or get leaves the queue
# but serves nobody by itself (the next waiter goes when the other side's next
# request is processed); blocking calls and requests share one FIFO queue;
# cancelling a request already served does nothing.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=1)


def b(x):
    return 'true' if x else 'false'


def blocking_putter(name, x, d):
    yield env.timeout(d)
    print('t=%d %s puts %s (putters=%d)' % (env.now, name, x, len(st.put_queue)))
    yield st.put(x)
    print('t=%d %s put %s done' % (env.now, name, x))


def blocking_getter(name, d):
    yield env.timeout(d)
    x = yield st.get()
    print('t=%d %s got %s (items=%d)' % (env.now, name, x, len(st.items)))


def controller():
    st.put('p0')                    # fills the store at t=0
    r1 = st.put('r1')               # queued
    yield env.timeout(1)
    r2 = st.put('r2')               # queued behind r1 and the blocking putter
    print('t=%d C putters=%d' % (env.now, len(st.put_queue)))
    print('t=%d C cancel r1 -> %s putters=%d' % (env.now, b(r1.cancel() is None and not r1.triggered), len(st.put_queue)))
    yield env.timeout(1)
    g1 = st.get()                   # takes p0; its processing admits the head putter
    print('t=%d C g1 triggered=%s' % (env.now, b(g1.triggered)))
    v = yield g1
    print('t=%d C g1 got %s items=%d putters=%d' % (env.now, v, len(st.items), len(st.put_queue)))
    yield env.timeout(1)
    g2 = st.get()
    g3 = st.get()
    g4 = st.get()
    print('t=%d C getters=%d' % (env.now, len(st.get_queue)))
    g2.cancel()
    print('t=%d C cancel served g2: triggered=%s getters=%d' % (env.now, b(g2.triggered), len(st.get_queue)))
    g3.cancel()
    print('t=%d C cancel g3: getters=%d' % (env.now, len(st.get_queue)))
    v = yield g4 | env.timeout(5)
    print('t=%d C g4 processed=%s' % (env.now, b(g4.processed)))
    if g4.processed:
        print('t=%d C g4 got %s' % (env.now, g4.value))
    print('t=%d C g2 got %s' % (env.now, (yield g2)))


env.process(blocking_putter('BP', 'bp', 0))
env.process(controller())
env.process(blocking_getter('BG', 12))
env.run()
print('done t=%d items=%s putters=%d getters=%d' % (env.now, st.items, len(st.put_queue), len(st.get_queue)))
