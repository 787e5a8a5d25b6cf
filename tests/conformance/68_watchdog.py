# A watchdog: a worker kicks it after each job; if no kick comes within the
# timeout, the watchdog interrupts the worker, which abandons its job, resets
# and goes on; the watchdog waits on any_of(kick, timeout) with a fresh kick
# event each round.
import simpy

env = simpy.Environment()
jobs = simpy.Store(env)
state = {'kick': env.event()}


def worker():
    done = 0
    while done < 5:
        try:
            job = yield jobs.get()
            yield env.timeout(job)
            done += 1
            print('t=%d worker finished a %d-long job' % (env.now, job))
            state['kick'].succeed(done)
        except simpy.Interrupt as i:
            print('t=%d worker reset by %s' % (env.now, i.cause))
            yield env.timeout(1)
    return done


def watchdog(w, limit):
    while w.is_alive:
        kick = state['kick']
        to = env.timeout(limit)
        yield kick | to
        if kick.triggered:
            state['kick'] = env.event()
            print('t=%d watchdog kicked (%s)' % (env.now, kick.value))
        elif w.is_alive:
            print('t=%d watchdog fires' % env.now)
            w.interrupt('watchdog')


def feeder():
    for job in [2, 7, 1, 9, 3, 2, 2]:
        yield jobs.put(job)
        yield env.timeout(1)


w = env.process(worker())
env.process(watchdog(w, 5))
env.process(feeder())
print('worker done %d at t=%d' % (env.run(until=w), env.now))
