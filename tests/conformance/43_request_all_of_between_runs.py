# Requests in all_of, and requests made by the main script between runs and
# waited on later: a process waits for a slot and an item together; the main
# script puts and gets through request events and reads them after the run
# that processed them; a request waited on after it was processed continues.
import simpy

env = simpy.Environment()
st = simpy.Store(env, capacity=2)
res = simpy.Resource(env, capacity=1)


def b(x):
    return 'true' if x else 'false'


def worker(name, d, hold):
    yield env.timeout(d)
    req = res.request()
    get = st.get()
    print('t=%d %s asks (slot=%s item=%s)' % (env.now, name, b(req.triggered), b(get.triggered)))
    yield env.all_of([req, get])
    print('t=%d %s has slot and %s' % (env.now, name, get.value))
    yield env.timeout(hold)
    res.release(req)
    yield req
    print('t=%d %s done (req processed=%s)' % (env.now, name, b(req.processed)))


env.process(worker('W1', 0, 2))
env.process(worker('W2', 1, 1))
env.process(worker('W3', 1, 0))
env.run(until=3)
print('main t=%d in_use=%d queued=%d getters=%d' % (env.now, res.count, len(res.queue), len(st.get_queue)))
p1 = st.put('m1')
p2 = st.put('m2')
p3 = st.put('m3')
print('main puts triggered %s %s %s' % (b(p1.triggered), b(p2.triggered), b(p3.triggered)))
env.run(until=6)
print('main t=%d p3 processed=%s items=%d' % (env.now, b(p3.processed), len(st.items)))
p4 = st.put('m4')
g = st.get()
r = res.request()
print('main g triggered=%s r triggered=%s' % (b(g.triggered), b(r.triggered)))
env.run(until=8)
print('main t=%d g=%s r processed=%s in_use=%d' % (env.now, g.value, b(r.processed), res.count))
res.release(r)
env.run()
print('done t=%d in_use=%d items=%d' % (env.now, res.count, len(st.items)))
