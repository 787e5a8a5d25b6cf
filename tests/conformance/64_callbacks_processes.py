# Callbacks on processes and conditions: a callback on a process that fails
# defuses the failure (the run goes on); one on a process that returns reads
# its value; callbacks on an any_of and its member run in the member's order;
# a callback on a timeout added after a process began to wait runs after it.
import simpy

env = simpy.Environment()


def worker(v, d):
    yield env.timeout(d)
    return v


def failer(d):
    yield env.timeout(d)
    raise ValueError('bad%d' % d)


def waiter(name, ev):
    v = yield ev
    print('t=%d %s woke: %s' % (env.now, name, v))


def on_fail(p):
    print('t=%d cb: process failed (%s), defused' % (env.now, p.value))
    p.defused = True


w = env.process(worker('w1', 2))
w.callbacks.append(lambda p: print('t=%d cb: process returned %s' % (env.now, p.value)))
f = env.process(failer(3))
f.callbacks.append(on_fail)
t1 = env.timeout(1, 't1')
t4 = env.timeout(4, 't4')
c = env.any_of([t1, t4])
c.callbacks.append(lambda e: print('t=%d cb: any_of' % env.now))
t1.callbacks.append(lambda e: print('t=%d cb: t1 %s' % (env.now, e.value)))
env.process(waiter('W', t4))


def later():
    yield env.timeout(1)
    t4.callbacks.append(lambda e: print('t=%d cb: t4 %s (added late)' % (env.now, e.value)))


env.process(later())
env.run()
print('done t=%d f ok=%s' % (env.now, 'true' if f.ok else 'false'))
