# Processing a condition detaches the conditions nested in it, however deep:
# an inner condition still pending then never fires, and a failure of its
# member is not taken by it (the run crashes at once). An inner condition
# triggered before the outer one is processed still fires.
import simpy

env = simpy.Environment()


def b(x):
    return 'true' if x else 'false'


ev = env.event()


def watcher():
    inner = env.all_of([env.timeout(2, 'a')])
    deep = env.all_of([ev])
    outer = env.any_of([env.timeout(1, 'b'), inner, env.any_of([deep])])
    yield outer
    print('t=%d outer fired' % env.now)
    yield env.timeout(4)
    print('t=%d inner triggered=%s processed=%s deep triggered=%s' % (
        env.now, b(inner.triggered), b(inner.processed), b(deep.triggered)))


def failer():
    yield env.timeout(3)
    ev.fail(ValueError('boom'))
    yield env.timeout(0)
    print('t=%d failer goes on' % env.now)


def racer():
    yield env.timeout(10)
    inner = env.all_of([env.timeout(1, 'i')])
    outer = env.any_of([env.timeout(1, 'o'), inner])
    yield outer
    print('t=%d racer: inner triggered=%s' % (env.now, b(inner.triggered)))
    yield env.timeout(1)
    print('t=%d racer: inner processed=%s' % (env.now, b(inner.processed)))


env.process(watcher())
env.process(failer())
env.process(racer())
try:
    env.run()
    print('run returned')
except Exception as e:
    print('run failed: %s (t=%d)' % (e, env.now))
env.run()
print('done t=%d' % env.now)
