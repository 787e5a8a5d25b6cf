# Callbacks on events: they run when the event is processed, in the order
# they and the processes waiting on it were added; a callback sees the value
# of a timeout, a process, a condition; a failed event whose callback defuses
# it does not crash the run, one whose callback does not does; the value of
# an event triggered but not processed yet is there already.
import simpy

env = simpy.Environment()
log = []


def cb(name):
    def f(ev):
        print('t=%d cb %s ok=%s value=%s' % (env.now, name, 'true' if ev.ok else 'false', ev.value if ev.ok else 'err'))
    return f


def waiter(name, ev):
    v = yield ev
    print('t=%d %s woke with %s' % (env.now, name, v))


def worker():
    yield env.timeout(2)
    return 'w-done'


ev = env.event()
ev.callbacks.append(cb('A'))
env.process(waiter('P1', ev))
ev.callbacks.append(cb('B'))
t = env.timeout(3, 'tmo')
t.callbacks.append(cb('T'))
w = env.process(worker())
w.callbacks.append(cb('W'))
both = env.all_of([t, w])
both.callbacks.append(lambda e: print('t=%d cb all_of processed' % env.now))


def trigger():
    yield env.timeout(1)
    ev.succeed('go')
    print('t=%d triggered ev: value now %s processed=%s' % (env.now, ev.value, 'true' if ev.processed else 'false'))
    env.process(waiter('P2', ev))


def defuser(e):
    print('t=%d defusing %s' % (env.now, e.value))
    e.defused = True


def failing():
    yield env.timeout(4)
    bad = env.event()
    bad.callbacks.append(defuser)
    bad.fail(ValueError('quiet'))
    yield env.timeout(1)
    worse = env.event()
    worse.callbacks.append(cb('X'))
    worse.fail(ValueError('loud'))


env.process(trigger())
env.process(failing())
try:
    env.run()
except ValueError as e:
    print('t=%d run failed: %s' % (env.now, e))
env.run()
print('done t=%d' % env.now)
