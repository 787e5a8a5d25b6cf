"""The SimPy twin of benches/perf/lua_processes.lua: the same model in
SimPy 3 (Debian's python3-simpy3), for the speed comparison in
docs/PERFORMANCE.md. P pairs of processes ping-pong a token through two
capacity-1 stores and S processes sleep in a loop, R rounds each.

    /usr/bin/python3 benches/perf/lua_processes.py [pairs] [sleepers] [rounds]

Defaults: 100 pairs, 100 sleepers, 10000 rounds. Prints one line with the
events processed and the wall time of env.run() (start-up excluded).
"""
import sys
import time

import simpy

pairs_n = int(sys.argv[1]) if len(sys.argv) > 1 else 100
sleepers = int(sys.argv[2]) if len(sys.argv) > 2 else 100
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 10000

env = simpy.Environment()


def pinger(ping, pong):
    for i in range(1, rounds + 1):
        yield ping.put(i)
        yield pong.get()


def ponger(ping, pong):
    for _ in range(rounds):
        v = yield ping.get()
        yield pong.put(v)


def sleeper():
    for _ in range(rounds):
        yield env.timeout(1)


for p in range(pairs_n):
    ping, pong = simpy.Store(env, 1), simpy.Store(env, 1)
    env.process(pinger(ping, pong))
    env.process(ponger(ping, pong))
for _ in range(sleepers):
    env.process(sleeper())

# count events the way kernbench does: every entry taken from the queue
events = 0
step = env.step


def counting_step():
    global events
    step()  # raises when the queue is empty: not an event
    events += 1


env.step = counting_step
t0 = time.perf_counter()
env.run()
wall = time.perf_counter() - t0
print("lua_processes.py pairs=%d sleepers=%d rounds=%d events=%d sim_time=%d ns wall_s=%.3f "
      "events_per_s=%.0f" % (pairs_n, sleepers, rounds, events, env.now, wall, events / wall))
