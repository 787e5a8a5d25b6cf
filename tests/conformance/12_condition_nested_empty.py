# Nested conditions (an all_of containing an any_of, an any_of containing an
# all_of, conditions two levels deep) and empty conditions, which succeed when
# built but are still processed through the queue in that instant.
import simpy

env = simpy.Environment()


def st(e):
    return str(e.value) if e.processed else '-'


def nested1():
    a2 = env.timeout(2, 'a2')
    a5 = env.timeout(5, 'a5')
    b3 = env.timeout(3, 'b3')
    yield env.all_of([env.any_of([a2, a5]), b3])
    print('t=%d N1 woke: a2=%s a5=%s b3=%s' % (env.now, st(a2), st(a5), st(b3)))


def nested2():
    c1 = env.timeout(1, 'c1')
    c4 = env.timeout(4, 'c4')
    c6 = env.timeout(6, 'c6')
    yield env.any_of([env.all_of([c1, c4]), c6])
    print('t=%d N2 woke: c1=%s c4=%s c6=%s' % (env.now, st(c1), st(c4), st(c6)))


def nested3():
    d1 = env.timeout(3, 'd1')
    d2 = env.timeout(3, 'd2')
    d3 = env.timeout(3, 'd3')
    never = env.event()
    inner = env.all_of([d1, env.any_of([d2, never])])
    yield env.all_of([inner, env.any_of([d3, never])])
    print('t=%d N3 woke: d1=%s d2=%s d3=%s never=%s' % (env.now, st(d1), st(d2), st(d3), st(never)))


def empty():
    yield env.timeout(3)
    print('t=%d E builds empty conditions' % env.now)
    cv = yield env.all_of([])
    print('t=%d E empty all_of woke (%d values)' % (env.now, len(cv.events)))
    yield env.any_of([])
    print('t=%d E empty any_of woke' % env.now)


def other():
    yield env.timeout(3)
    print('t=%d O at 3' % env.now)
    yield env.timeout(0)
    print('t=%d O after sleep 0' % env.now)


env.process(nested1())
env.process(nested2())
env.process(empty())
env.process(nested3())
env.process(other())
env.run()
print('done t=%d' % env.now)
