# A container of fractional amounts (bytes in flight as fractions of a
# buffer): levels are Python floats, so a sum that is not exact in binary
# (0.1 + 0.2) decides a get exactly as in SimPy; an unbounded container.
import simpy

env = simpy.Environment()
buf = simpy.Container(env, capacity=1.0, init=0.0)
sink = simpy.Container(env)


def filler(name, amounts, d):
    for a in amounts:
        yield env.timeout(d)
        yield buf.put(a)
        print('t=%d %s put %.2f level=%.17g' % (env.now, name, a, buf.level))


def drainer(name, a):
    yield buf.get(a)
    print('t=%d %s got %.2f level=%.17g' % (env.now, name, a, buf.level))
    yield sink.put(a)
    print('t=%d %s sank %.2f sink=%.17g' % (env.now, name, a, sink.level))


env.process(drainer('D1', 0.3))
env.process(drainer('D2', 0.5))
env.process(filler('F1', [0.1, 0.2, 0.25, 0.25], 1))
env.process(filler('F2', [0.5, 0.75], 3))
env.run()
print('done t=%d level=%.17g sink=%.17g putters=%d' % (env.now, buf.level, sink.level, len(buf.put_queue)))
