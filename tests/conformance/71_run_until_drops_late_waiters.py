# run(until=ev) stops by raising from ev's callbacks: a callback or a process
# that begins to wait on ev while the run goes is behind the stop and is
# skipped; the process stays blocked on ev for good, while one that waited on
# ev before the run began resumes. The rest of the instant is left to the next
# run.
import simpy

env = simpy.Environment()
ev = env.timeout(3, 'v')


def early():
    v = yield ev
    print('t=%d early got %s' % (env.now, v))


def late():
    yield env.timeout(1)
    ev.callbacks.append(lambda e: print('t=%d late callback' % env.now))
    print('t=%d late waits' % env.now)
    v = yield ev
    print('t=%d late got %s' % (env.now, v))


def ticker():
    for i in range(5):
        yield env.timeout(1)
        print('t=%d tick %d' % (env.now, i))


env.process(early())
env.process(late())
env.process(ticker())
env.run(until=1)  # early starts waiting on ev before the run below
print('run -> %s at t=%d' % (env.run(until=ev), env.now))
env.run()
print('end at t=%d' % env.now)
