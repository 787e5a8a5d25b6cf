# A zero-time pipeline: the main script puts 1..6 into src; stage S1 moves
# src -> mid (x10), stage S2 moves mid -> out (+1), and three consumers take
# from out. Nothing spends time: the interleaving within t=0 is the test.
import simpy

env = simpy.Environment()
src = simpy.Store(env)
mid = simpy.Store(env)
out = simpy.Store(env)
for i in range(1, 7):
    src.put(i)


def stage(n, a, b, mul, add):
    while True:
        x = yield a.get()
        print('%s moves %d' % (n, x))
        yield b.put(x * mul + add)
        print('%s put %d' % (n, x * mul + add))


def consumer(n):
    while True:
        x = yield out.get()
        print('%s got %d (src=%d mid=%d out=%d)' % (n, x, len(src.items), len(mid.items), len(out.items)))


env.process(consumer('C1'))
env.process(stage('S1', src, mid, 10, 0))
env.process(consumer('C2'))
env.process(stage('S2', mid, out, 1, 1))
env.process(consumer('C3'))
env.run()
print('done t=%d' % env.now)
