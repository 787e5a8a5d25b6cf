# Interrupts sent by the main script between runs and by processes, with
# causes of several kinds (none, a number, a string); a process interrupted
# many times in one instant sees each in turn; a process that ends at once
# after its first interrupt ignores the rest.
import simpy

env = simpy.Environment()


def show(c):
    return 'nil' if c is None else str(c)


def sturdy(name):
    seen = 0
    while seen < 4:
        try:
            yield env.timeout(10)
            print('t=%d %s woke' % (env.now, name))
            return
        except simpy.Interrupt as i:
            seen += 1
            print('t=%d %s interrupt %d: %s' % (env.now, name, seen, show(i.cause)))


def fragile(name):
    try:
        yield env.timeout(10)
    except simpy.Interrupt as i:
        print('t=%d %s caught %s and ends' % (env.now, name, show(i.cause)))


def sender(targets):
    yield env.timeout(1)
    for t, c in targets:
        t.interrupt(c)
    print('t=%d sender sent %d' % (env.now, len(targets)))


s1 = env.process(sturdy('S1'))
f1 = env.process(fragile('F1'))
env.run(until=2)
s1.interrupt(None)
s1.interrupt(7)
f1.interrupt('x')
print('main sent at t=%d' % env.now)
env.run(until=3)
print('main t=%d f1 alive=%s' % (env.now, 'true' if f1.is_alive else 'false'))
env.process(sender([(s1, 'a'), (s1, 'b')]))
env.run()
print('done t=%d' % env.now)
