# Interrupts of sleeping and waiting processes: the interrupt is thrown into
# the process, which catches it and goes on (re-waiting on the same event,
# sleeping again); its old timeout is still processed, waking nobody; an
# interrupt in the instant a process is spawned runs after its start; two
# interrupts in one instant reach a process that survives the first; an
# interrupt of a process that ends in the same instant is ignored.
import simpy

env = simpy.Environment()
gate = env.event()


def b(x):
    return 'true' if x else 'false'


def sleeper(name, d):
    n = 0
    while n < 3:
        try:
            yield env.timeout(d)
            print('t=%d %s woke' % (env.now, name))
            n += 1
        except simpy.Interrupt as i:
            print('t=%d %s interrupted: %s' % (env.now, name, i.cause))
            n += 1
    return name


def gatekeeper(name):
    while True:
        try:
            v = yield gate
            print('t=%d %s passed gate with %s' % (env.now, name, v))
            return v
        except simpy.Interrupt as i:
            print('t=%d %s interrupted at gate: %s' % (env.now, name, i.cause))


def quick(name):
    yield env.timeout(5)
    print('t=%d %s ends' % (env.now, name))


def joiner(p):
    try:
        yield p
    except simpy.Interrupt as i:
        print('t=%d J: Q failed with interrupt %s' % (env.now, i.cause))


def boss():
    s1 = env.process(sleeper('S1', 5))
    g1 = env.process(gatekeeper('G1'))
    q = env.process(quick('Q'))
    env.process(joiner(q))
    s1.interrupt('early')           # in the instant S1 was spawned
    yield env.timeout(1)
    q.interrupt('late1')            # Q does not catch it and fails ...
    q.interrupt('late2')            # ... so this one is ignored
    g1.interrupt('one')
    g1.interrupt('two')
    print('t=%d boss sent (q alive=%s)' % (env.now, b(q.is_alive)))
    yield env.timeout(2)
    s1.interrupt('again')
    yield env.timeout(1)
    gate.succeed('open')
    v = yield g1
    print('t=%d boss joined G1: %s' % (env.now, v))
    v = yield s1
    print('t=%d boss joined S1: %s' % (env.now, v))


def victim():
    try:
        yield env.timeout(10)
    except simpy.Interrupt as i:
        print('t=%d V caught %s' % (env.now, i.cause))


v = env.process(victim())
env.process(boss())


def late_killer():
    yield env.timeout(1)
    v.interrupt('k1')


env.process(late_killer())
env.run()
print('done t=%d' % env.now)
