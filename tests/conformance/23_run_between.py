# Work injected by the main script between runs lands in the instant where
# run(until) stopped, ordered against the events already due then: a spawned
# process starts first (URGENT), then earlier-scheduled timeouts, then an event
# succeeded by main, then a store put that feeds a waiting getter.
import simpy

env = simpy.Environment()
ev = env.event()
ev2 = env.event()
st = simpy.Store(env)


def waiter(n, e):
    v = yield e
    print('t=%d %s got %s' % (env.now, n, v))


def getter():
    while True:
        x = yield st.get()
        print('t=%d G got %s (items=%d)' % (env.now, x, len(st.items)))


def ticker():
    for _ in range(3):
        yield env.timeout(5)
        print('t=%d tick' % env.now)


def newcomer(n):
    print('t=%d %s starts' % (env.now, n))
    yield env.timeout(0)
    print('t=%d %s after sleep 0' % (env.now, n))
    v = yield ev
    print('t=%d %s sees ev=%s' % (env.now, n, v))


env.process(waiter('W', ev))
env.process(getter())
env.process(ticker())
env.run(until=10)
print('main at t=%d: succeed ev, spawn N1, put x, put y' % env.now)
ev.succeed('go')
env.process(newcomer('N1'))
st.put('x')
st.put('y')
env.run(until=12)
print('main at t=%d: spawn N2, succeed ev2, put z' % env.now)
env.process(newcomer('N2'))
env.process(waiter('W2', ev2))
ev2.succeed('go2')
st.put('z')
env.run(until=20)
print('done t=%d items=%d' % (env.now, len(st.items)))
