# Events triggered and waited on in the same instant: T succeeds an event W1
# and W2 wait on, then waits on it itself (woken after them); S succeeds its
# own event and waits on it; L waits on the processed event and goes on at once.
import simpy

env = simpy.Environment()
ev = env.event()


def b(x):
    return 'true' if x else 'false'


def waiter(n):
    v = yield ev
    print('t=%d %s woke: %s' % (env.now, n, v))


def trigger():
    yield env.timeout(1)
    print('t=%d T succeeds ev (triggered=%s processed=%s)' % (env.now, b(ev.triggered), b(ev.processed)))
    ev.succeed('go')
    print('t=%d T after succeed (triggered=%s processed=%s ok=%s)' % (env.now, b(ev.triggered), b(ev.processed), b(ev.ok)))
    v = yield ev
    print('t=%d T woke on ev: %s (processed=%s)' % (env.now, v, b(ev.processed)))


def self_event():
    yield env.timeout(1)
    mine = env.event()
    mine.succeed('own')
    print('t=%d S succeeded its own event' % env.now)
    v = yield mine
    print('t=%d S woke on own event: %s' % (env.now, v))


def bystander():
    yield env.timeout(1)
    print('t=%d B at 1' % env.now)
    yield env.timeout(0)
    print('t=%d B after sleep 0' % env.now)


def late():
    yield env.timeout(2)
    print('t=%d L waits on processed ev' % env.now)
    v = yield ev
    print('t=%d L got %s at once' % (env.now, v))
    v = yield ev
    print('t=%d L got %s again' % (env.now, v))


env.process(waiter('W1'))
env.process(trigger())
env.process(waiter('W2'))
env.process(self_event())
env.process(bystander())
env.process(late())
env.run()
print('done t=%d' % env.now)
