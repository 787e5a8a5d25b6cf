# The random models of random_models.lua, built and run against real SimPy 3
# (Debian's python3-simpy3; run with /usr/bin/python3). A port of that file's
# model GENERATOR and model RUNNER, function by function in the same order:
# for a seed it draws the same numbers from the same 64-bit LCG in the same
# order, builds the same model against a simpy.Environment and prints the log
# that `kernbench -q random_models.lua SEED COUNT kb` (and `... model`) prints.
# Keep the two files in step: a change to random_models.lua's generator (an
# action, a process kind, a phase, a log line) must be made here too.
#
#   /usr/bin/python3 random_models.py SEED [COUNT [MODE]]
#
# MODE: log (the default) prints each seed's log, one after the other, as the
# Lua `kb` mode does (every log ends with its `main final state` line); desc
# prints each seed's model description as the Lua `desc` mode does; stats
# prints the logs and, on stderr, how often the documented differences below
# were met. tests/conformance/random_simpy.sh compares the logs with kernbench.
#
# Mapping of the Lua `sim` API (tests/conformance/README.md):
# - blocking calls are `yield`s of the event (s:sleep -> env.timeout, st:put ->
#   st.put, st:get -> st.get, r:acquire -> r.request, ev:wait / p:wait -> the
#   event / the process); actions are generator functions run with `yield from`;
# - r:release() -> r.release(req) of the request the action holds;
# - error(v, 0) and ev:fail(v) -> LuaError(v), whose args[0] is the Lua value;
# - a process returns its Lua return values as a tuple (a join prints them all,
#   a condition member's value is the first one, as in Lua);
# - s:run() without until raises 'deadlock' when a non-daemon process is still
#   alive at the end, as simpy_model.lua's Sim:run does (SimPy just returns);
# - the until event of s:run(t) is made here exactly as SimPy's
#   Environment.run makes it (an URGENT event at t) but with the value 'until',
#   so env.run() tells a run stopped by an until event (its own, or one left
#   queued by an earlier run(t) that crashed: SimPy stops there) from one that
#   ran out of events: the Lua side returns 'until' or 'empty' and checks for
#   deadlock only in the second case;
# - s:step() -> env.step(); EmptySchedule -> 0. A stale until event (left by a
#   run(t) that crashed) processed by env.step() raises StopSimulation out of
#   step() in SimPy; kernbench and simpy_model.lua just process it (step -> 1),
#   so it is counted as a step here (a known, documented difference; `stats`
#   counts them);
# - conditions: the Lua side prints member values (all_of: the list of member
#   values, a nested all_of's value being the list of its members' values, a
#   nested any_of's the value of the member that decided it) or processed /
#   triggered flags. They are computed from SimPy's ConditionValue (plain
#   members) and event attributes; the deciding member of an any_of is recorded
#   by a callback added after the condition's own check callbacks.
import gc
import sys

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import PENDING, URGENT, Condition, Event, Process
from simpy.resources.resource import Preempted

MASK = (1 << 64) - 1
INF = float('inf')

# how often the known differences were met (mode stats)
STATS = {'stale_until_steps': 0, 'stale_until_runs': 0}


class LuaError(Exception):
    """error(v, 0) / ev:fail(v): args[0] is the Lua value v."""


###########################################################################
# PRNG: a 64-bit LCG (Lua 5.4 integers wrap), high bits out. Deterministic.
###########################################################################
class new_rng(object):
    def __init__(self, seed):
        self.x = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & MASK
        for _ in range(4):
            self.next()

    def next(self):
        self.x = (self.x * 6364136223846793005 + 1442695040888963407) & MASK
        return self.x >> 33

    def int(self, n):  # 0 .. n-1
        return self.next() % n

    def range(self, a, b):
        return a + self.next() % (b - a + 1)

    def chance(self, pct):
        return self.next() % 100 < pct

    def pick(self, t):
        return t[self.next() % len(t)]

    # list of {'w': weight, ...}: one entry, by weight
    def weighted(self, lst):
        total = 0
        for e in lst:
            total += e['w']
        k = self.next() % total
        for e in lst:
            if k < e['w']:
                return e
            k -= e['w']


DELAYS = [0, 0, 1, 2, 3]


###########################################################################
# formatting (Lua's fmt, tostring, msg, b)
###########################################################################
def tostring(v):
    if v is None:
        return 'nil'
    if v is True:
        return 'true'
    if v is False:
        return 'false'
    if isinstance(v, int):
        return '%d' % v
    return str(v)


def fmt(v):
    if isinstance(v, list):  # a Lua sequence with holes: trailing nils vanish
        n = len(v)
        while n > 0 and v[n - 1] is None:
            n -= 1
        return '{' + ','.join(fmt(x) for x in v[:n]) + '}'
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if v == INF:
            return 'inf'
        return '%d' % v
    return tostring(v)


# the model being built (msg needs its processes to name a preemptor)
CUR = {'procs': {}}


def pname(p):
    for j, q in CUR['procs'].items():
        if q is p:
            return 'p%d' % j
    return '-'


def msg(e):
    if isinstance(e, simpy.Interrupt):
        c = e.cause
        if isinstance(c, Preempted):
            return 'interrupt preempted@%d by %s' % (c.usage_since, pname(c.by))
        return 'interrupt ' + fmt(c)
    if isinstance(e, RuntimeError) and 'No scheduled events left' in str(e):
        return 'no events left'
    if isinstance(e, BaseException):  # e.message: the Lua value
        e = e.args[0] if e.args else None
    s = fmt(e) if isinstance(e, list) else tostring(e)
    if s.startswith('deadlock'):
        return 'deadlock'
    return s


def b(x):
    return '0' if x is None or x is False else '1'


# The Lua value an event stands for when a condition reports it: a process's
# first return value, an all_of's list of member values, an any_of's deciding
# member's value; otherwise the event's value.
def luaval(ev):
    if isinstance(ev, Process):
        return ev._value[0] if ev._value else None
    kind = getattr(ev, 'lua_kind', None)
    if kind == 'all':
        return [luaval(m) for m in ev._events]
    if kind == 'any':
        return None if ev.lua_winner is None else luaval(ev.lua_winner)
    return ev._value


# a member's value in an all_of's ConditionValue (nested conditions are
# flattened there: their Lua value comes from their members)
def member_value(cv, e):
    if isinstance(e, Condition):
        return luaval(e)
    v = cv[e]  # KeyError if SimPy did not count e in (it must have)
    if isinstance(e, Process):
        return v[0] if v else None
    return v


def all_of(env, evs):
    c = env.all_of(evs)
    c.lua_kind = 'all'
    return c


def any_of(env, evs):
    c = env.any_of(evs)
    c.lua_kind = 'any'
    c.lua_winner = None
    if c._value is not PENDING:
        # decided while made: by the first processed member (or no member)
        for m in evs:
            if m.callbacks is None:
                c.lua_winner = m
                break
        return c

    # the member whose own _check decided the condition: this callback comes
    # after that _check in the member's callbacks (added after the condition)
    def rec(ev):
        if c.lua_winner is None and c._value is not PENDING:
            c.lua_winner = ev
    seen = []
    for m in evs:
        if m.callbacks is not None and not any(m is x for x in seen):
            seen.append(m)
            m.callbacks.append(rec)
    return c


###########################################################################
# the generator
#
# G: generation state (rng, description, counters); E: the runtime state of
# the model being built (the env, its objects, the log). Actions are made at
# build time (all the randomness is drawn then) as closures over E.
###########################################################################
class Obj(object):
    def __init__(self, **kw):
        self.__dict__.update(kw)


def L(E, P, f, *args):
    E.log(('t=%d %s ' + f) % ((E.env.now, P.name) + args))


# condition members: a spec list built at generation time, realised at run time
def gen_members(G, depth, self_):
    r = G.r
    specs, txt = [], []
    n = r.pick([0, 1, 2, 2, 3, 3, 4])
    if n == 0 and not r.chance(30):
        n = 2
    for _ in range(n):
        k = r.int(100)
        if k < 50:
            d, v = r.pick(DELAYS), G.newval()
            specs.append({'kind': 'to', 'd': d, 'v': v})
            txt.append('to%d=%d' % (d, v))
        elif k < 68:
            e = r.range(1, G.nev)
            specs.append({'kind': 'ev', 'k': e})
            txt.append('ev%d' % e)
        elif k < 74:
            e = r.range(1, 3)
            specs.append({'kind': 'mto', 'k': e})
            txt.append('mto%d' % e)
        elif k < 92 or depth > 0:
            j = G.other_pid(self_)
            if j is not None:
                specs.append({'kind': 'proc', 'j': j})
                txt.append('p%d' % j)
            else:
                v = G.newval()
                specs.append({'kind': 'to', 'd': 0, 'v': v})
                txt.append('to0=%d' % v)
        else:
            sub, stxt = gen_members(G, depth + 1, self_)
            al = r.chance(50)
            specs.append({'kind': 'all' if al else 'any', 'members': sub})
            txt.append(('all' if al else 'any') + '(' + stxt + ')')
    return specs, ' '.join(txt)


def make_members(E, specs):
    env = E.env
    evs = []
    for m in specs:
        kind = m['kind']
        if kind == 'to':
            evs.append(env.timeout(m['d'], m['v']))
        elif kind == 'ev':
            evs.append(E.ev[m['k']])
        elif kind == 'proc':
            p = E.procs.get(m['j'])
            evs.append(p if p is not None else env.timeout(0, -m['j']))  # not spawned (yet): a stand-in
        elif kind == 'mto':
            evs.append(E.mto[m['k'] - 1] if m['k'] <= len(E.mto)
                       else env.timeout(0, -100 - m['k']))  # not made (yet): a stand-in
        else:
            sub = make_members(E, m['members'])
            evs.append(E.keep(all_of(env, sub) if kind == 'all' else any_of(env, sub)))
    return evs


# Action kinds. gen(G, opts) returns (fn(E, P, x), text, risky) or None (the
# action does not fit: another is drawn). fn is a generator function.
def gen_sleep(G, opts):
    d = G.r.pick(DELAYS)
    if G.r.chance(3):
        d = G.r.pick([7, 64, 1000, 123457])  # far ahead, now and then

    def fn(E, P, x=None):
        yield E.env.timeout(d)
        L(E, P, 'slept %d', d)
    return fn, 'sleep%d' % d, False


def gen_put(G, opts):
    r = G.r
    if len(G.stores) == 0:
        return None
    if opts['loop']:
        if opts['from'] >= len(G.stores):
            return None
        k = r.range(opts['from'] + 1, len(G.stores))
    else:
        k = r.range(1, len(G.stores))
    v = G.newval()

    def fn(E, P, x=None):
        st = E.st[k]
        item = x + 1000 if x is not None else v
        yield st.put(item)
        L(E, P, 'put %d s%d n=%d', item, k, len(st.items))
    return (fn, ('fwd' if opts['loop'] else 'put') + ' s%d' % k + ('' if opts['loop'] else '=%d' % v),
            G.stores[k] != INF)


def gen_get(G, opts):
    if len(G.stores) == 0 or opts['loop']:
        return None
    k = G.r.range(1, len(G.stores))

    def fn(E, P, x=None):
        st = E.st[k]
        x = yield st.get()
        L(E, P, 'got %s s%d n=%d', fmt(x), k, len(st.items))
    return fn, 'get s%d' % k, True


def gen_resource(G, opts):
    r = G.r
    if len(G.res) == 0:
        return None
    k = r.range(1, len(G.res))
    hold = r.pick(['none', 'sleep', 'sleep', 'sleep0x2', 'put'])
    d = r.pick([0, 0, 1, 2])
    sk, v = None, G.newval()
    if hold == 'put':
        if len(G.stores) == 0 or opts['loop']:
            hold = 'none'
        else:
            sk = r.range(1, len(G.stores))

    def fn(E, P, x=None):
        res = E.res[k]
        req = res.request()
        yield req
        L(E, P, 'acq r%d use=%d q=%d', k, res.count, len(res.queue))
        if hold == 'sleep':
            yield E.env.timeout(d)
        elif hold == 'sleep0x2':
            yield E.env.timeout(0)
            yield E.env.timeout(0)
        elif hold == 'put':
            yield E.st[sk].put(v)
            L(E, P, 'put %d s%d n=%d (holding r%d)', v, sk, len(E.st[sk].items), k)
        res.release(req)
        L(E, P, 'rel r%d use=%d q=%d', k, res.count, len(res.queue))
    return (fn, 'res r%d %s%s%s' % (k, hold, '%d' % d if hold == 'sleep' else '',
                                    ' s%d' % sk if sk is not None else ''),
            hold == 'put' and G.stores[sk] != INF)


def gen_succeed(G, opts):
    k, v = G.r.range(1, G.nev), G.newval()
    if G.r.chance(15):
        v = None

    def fn(E, P, x=None):
        ev = E.ev[k]
        if ev.triggered:
            L(E, P, 'ev%d already triggered', k)
        else:
            ev.succeed(v)
            L(E, P, 'succeeded ev%d=%s', k, fmt(v))
        return
        yield
    return fn, 'succeed ev%d=%s' % (k, fmt(v)), False


def gen_fail(G, opts):
    if opts['loop']:
        return None
    k = G.r.range(1, G.nev)
    reason = 7000 + k if G.r.chance(30) else 'r%d' % k

    def fn(E, P, x=None):
        ev = E.ev[k]
        if ev.triggered:
            L(E, P, 'ev%d already triggered', k)
        else:
            ev.fail(LuaError(reason))
            L(E, P, 'failed ev%d', k)
        return
        yield
    return fn, 'fail ev%d' % k, False


def gen_wait(G, opts):
    if opts['loop']:
        return None
    k = G.r.range(1, G.nev)

    def fn(E, P, x=None):
        ev = E.ev[k]
        try:
            v = yield ev
        except (LuaError, simpy.Interrupt) as e:
            L(E, P, 'ev%d %s', k, 'caught ' + msg(e))
        else:
            L(E, P, 'ev%d %s', k, 'ok ' + fmt(v))
    return fn, 'wait ev%d' % k, True


def gen_timeout(G, opts):
    d, v = G.r.pick(DELAYS), G.newval()

    def fn(E, P, x=None):
        x = yield E.env.timeout(d, v)
        L(E, P, 'timeout %s', fmt(x))
    return fn, 'to%d=%d' % (d, v), False


# a timeout made now, waited after a sleep (often already processed)
def gen_deferred(G, opts):
    r = G.r
    d1, d2, v = r.pick(DELAYS), r.pick(DELAYS), G.newval()

    def fn(E, P, x=None):
        t = E.env.timeout(d1, v)
        yield E.env.timeout(d2)
        L(E, P, 'deferred to%d: processed=%s', d1, b(t.processed))
        x = yield t
        L(E, P, 'deferred timeout %s', fmt(x))
    return fn, 'defer to%d=%d sleep%d' % (d1, v, d2), False


def gen_all_of(G, opts):
    if opts['loop']:
        return None
    specs, txt = gen_members(G, 0, opts['pid'])

    def fn(E, P, x=None):
        evs = make_members(E, specs)
        c = E.keep(all_of(E.env, evs))
        try:
            cv = yield c
        except (LuaError, simpy.Interrupt) as e:
            L(E, P, 'all_of caught %s', msg(e))
        else:
            parts = [fmt(member_value(cv, e)) for e in evs]
            L(E, P, 'all_of ok [%s]', ' '.join(parts))
    return fn, 'all(' + txt + ')', True


def gen_any_of(G, opts):
    if opts['loop']:
        return None
    specs, txt = gen_members(G, 0, opts['pid'])

    def fn(E, P, x=None):
        evs = make_members(E, specs)
        c = E.keep(any_of(E.env, evs))
        try:
            yield c
            res = 'ok ' + fmt(luaval(c))
        except (LuaError, simpy.Interrupt) as e:
            res = 'caught ' + msg(e)
        flags = [b(e.processed) + b(e.triggered) for e in evs]
        L(E, P, 'any_of %s [%s]', res, ' '.join(flags))
    return fn, 'any(' + txt + ')', True


# a condition nobody waits on: it still fires when its members do (their
# callbacks keep it), taking their failures
def gen_abandon(G, opts):
    if opts['loop']:
        return None
    specs, txt = gen_members(G, 0, opts['pid'])
    al = G.r.chance(50)

    def fn(E, P, x=None):
        evs = make_members(E, specs)
        c = all_of(E.env, evs) if al else any_of(E.env, evs)
        E.abandoned.append(c)
        L(E, P, 'made %s_of', 'all' if al else 'any')
        return
        yield
    return fn, 'abandon ' + ('all' if al else 'any') + '(' + txt + ')', False


def gen_spawn(G, opts):
    if opts['loop'] or opts['depth'] >= 2:
        return None
    child = gen_proc(G, opts['depth'] + 1)

    def fn(E, P, x=None):
        E.spawn(child)
        L(E, P, 'spawned %s', child.name)
        return
        yield
    return fn, 'spawn ' + child.name, False


def gen_join(G, opts):
    if opts['loop']:
        return None
    j = G.other_pid(opts['pid'])
    if j is None:
        return None

    def fn(E, P, x=None):
        p = E.procs.get(j)
        if p is None:
            L(E, P, 'join p%d: not spawned', j)
            return
        try:
            rets = yield p
        except (LuaError, simpy.Interrupt) as e:
            L(E, P, 'joined p%d: caught %s', j, msg(e))
        else:
            L(E, P, 'joined p%d: [%s]', j, ' '.join(fmt(v) for v in rets))
    return fn, 'join p%d' % j, True


def gen_state(G, opts):
    def fn(E, P, x=None):
        L(E, P, 'state %s', E.state())
        return
        yield
    return fn, 'state', False


# requests as events: a get or put that gives up after a timeout (cancelled)
def gen_getreq(G, opts):
    if len(G.stores) == 0 or opts['loop']:
        return None
    k, d = G.r.range(1, len(G.stores)), G.r.pick(DELAYS)

    def fn(E, P, x=None):
        st = E.st[k]
        g = st.get()
        yield E.env.any_of([g, E.env.timeout(d)])
        if g.triggered:
            L(E, P, 'getreq s%d got %s n=%d', k, fmt(g.value), len(st.items))
        else:
            g.cancel()
            L(E, P, 'getreq s%d gave up n=%d getters=%d', k, len(st.items), len(st.get_queue))
    return fn, 'getreq s%d to%d' % (k, d), False


def gen_putreq(G, opts):
    if len(G.stores) == 0 or opts['loop']:
        return None
    k, d, v = G.r.range(1, len(G.stores)), G.r.pick(DELAYS), G.newval()

    def fn(E, P, x=None):
        st = E.st[k]
        p = st.put(v)
        yield E.env.any_of([p, E.env.timeout(d)])
        if p.triggered:
            L(E, P, 'putreq %d s%d done n=%d', v, k, len(st.items))
        else:
            p.cancel()
            L(E, P, 'putreq %d s%d gave up n=%d putters=%d', v, k, len(st.items), len(st.put_queue))
    return fn, 'putreq s%d=%d to%d' % (k, v, d), False


# a resource request in a `with` block, reneging after a patience
def gen_reqwith(G, opts):
    if len(G.res) == 0 or opts['loop']:
        return None
    k, pat, hold = G.r.range(1, len(G.res)), G.r.pick(DELAYS), G.r.pick([0, 1, 2])

    def fn(E, P, x=None):
        res = E.res[k]
        with res.request() as req:
            yield E.env.any_of([req, E.env.timeout(pat)])
            if req.processed:
                L(E, P, 'reqwith r%d got use=%d q=%d', k, res.count, len(res.queue))
                yield E.env.timeout(hold)
            else:
                L(E, P, 'reqwith r%d reneged q=%d', k, len(res.queue))
        L(E, P, 'reqwith r%d out use=%d q=%d', k, res.count, len(res.queue))
    return fn, 'reqwith r%d pat%d hold%d' % (k, pat, hold), False


def gen_interrupt(G, opts):
    if opts['loop']:
        return None
    j = G.other_pid(opts['pid'])
    if j is None:
        return None
    v = G.newval()

    def fn(E, P, x=None):
        p = E.procs.get(j)
        if p is not None and p.is_alive:
            p.interrupt(v)
            L(E, P, 'interrupted p%d', j)
        else:
            L(E, P, 'p%d not alive', j)
        return
        yield
    return fn, 'interrupt p%d=%d' % (j, v), False


def gen_cont(G, opts):
    if len(G.conts) == 0 or opts['loop']:
        return None
    k, put, a = G.r.range(1, len(G.conts)), G.r.chance(50), G.r.range(1, 4)

    def fn(E, P, x=None):
        c = E.c[k]
        yield c.put(a) if put else c.get(a)
        L(E, P, 'c%d %s %d level=%s', k, 'put' if put else 'got', a, fmt(c.level))
    return fn, 'c%d%s%d' % (k, ' put' if put else ' get', a), True


def gen_psop(G, opts):
    if len(G.pss) == 0 or opts['loop']:
        return None
    k, put, v, pr = G.r.range(1, len(G.pss)), G.r.chance(55), G.newval(), G.r.range(0, 3)

    def fn(E, P, x=None):
        ps = E.ps[k]
        if put:
            yield ps.put(simpy.PriorityItem(pr, v))
            L(E, P, 'ps%d put %d/%d n=%d', k, v, pr, len(ps.items))
        else:
            x = yield ps.get()
            L(E, P, 'ps%d got %s n=%d', k, fmt(x.item), len(ps.items))
    return fn, 'ps%d' % k + (' put %d/%d' % (v, pr) if put else ' get'), True


def gen_fsop(G, opts):
    if len(G.fss) == 0 or opts['loop']:
        return None
    k, put, v = G.r.range(1, len(G.fss)), G.r.chance(55), G.newval()
    m = G.r.range(2, 3)
    rem = G.r.range(0, m - 1)

    def fn(E, P, x=None):
        fs = E.fs[k]
        if put:
            yield fs.put(v)
            L(E, P, 'fs%d put %d n=%d', k, v, len(fs.items))
        else:
            x = yield fs.get(lambda y: y % m == rem)
            L(E, P, 'fs%d got %s n=%d', k, fmt(x), len(fs.items))
    return fn, 'fs%d' % k + (' put %d' % v if put else ' get %%%d=%d' % (m, rem)), True


# a priority resource's request in a `with` block; a preemption is caught
def gen_preq(G, opts):
    if len(G.prs) == 0 or opts['loop']:
        return None
    k, prio, pre, hold = G.r.range(1, len(G.prs)), G.r.range(0, 3), G.r.chance(70), G.r.pick([1, 2, 3, 5])

    def fn(E, P, x=None):
        r = E.pr[k]
        try:
            with r.request(priority=prio, preempt=pre) as req:
                yield req
                L(E, P, 'pr%d got prio %d use=%d q=%d', k, prio, r.count, len(r.queue))
                yield E.env.timeout(hold)
                L(E, P, 'pr%d done', k)
        except simpy.Interrupt as i:
            L(E, P, 'pr%d %s use=%d q=%d', k, msg(i), r.count, len(r.queue))
    return fn, 'preq pr%d prio%d%s hold%d' % (k, prio, '' if pre else ' nopre', hold), True


def gen_callback(G, opts):
    if opts['loop']:
        return None
    k = G.r.range(1, G.nev)

    def fn(E, P, x=None):
        ev = E.ev[k]
        if ev.callbacks is None:
            L(E, P, 'ev%d processed: no callback', k)
        else:
            name = P.name
            ev.callbacks.append(lambda e: E.log('t=%d cb ev%d of %s ok=%s' % (E.env.now, k, name, b(e.ok))))
            L(E, P, 'callback on ev%d', k)
        return
        yield
    return fn, 'callback ev%d' % k, False


ACTIONS = [
    {'name': 'sleep', 'w': 22, 'gen': gen_sleep},
    {'name': 'put', 'w': 10, 'gen': gen_put},
    {'name': 'get', 'w': 9, 'gen': gen_get},
    {'name': 'resource', 'w': 12, 'gen': gen_resource},
    {'name': 'succeed', 'w': 7, 'gen': gen_succeed},
    {'name': 'fail', 'w': 2, 'gen': gen_fail},
    {'name': 'wait', 'w': 8, 'gen': gen_wait},
    {'name': 'timeout', 'w': 5, 'gen': gen_timeout},
    {'name': 'deferred', 'w': 4, 'gen': gen_deferred},
    {'name': 'all_of', 'w': 6, 'gen': gen_all_of},
    {'name': 'any_of', 'w': 6, 'gen': gen_any_of},
    {'name': 'abandon', 'w': 2, 'gen': gen_abandon},
    {'name': 'spawn', 'w': 5, 'gen': gen_spawn},
    {'name': 'join', 'w': 5, 'gen': gen_join},
    {'name': 'state', 'w': 3, 'gen': gen_state},
    {'name': 'getreq', 'w': 4, 'gen': gen_getreq},
    {'name': 'putreq', 'w': 2, 'gen': gen_putreq},
    {'name': 'reqwith', 'w': 4, 'gen': gen_reqwith},
    {'name': 'interrupt', 'w': 3, 'gen': gen_interrupt},
    {'name': 'cont', 'w': 4, 'gen': gen_cont},
    {'name': 'psop', 'w': 3, 'gen': gen_psop},
    {'name': 'fsop', 'w': 3, 'gen': gen_fsop},
    {'name': 'preq', 'w': 5, 'gen': gen_preq},
    {'name': 'callback', 'w': 2, 'gen': gen_callback},
]


# gen_body(G, n, opts): n actions drawn by weight (opts['weights'], by action
# name, overrides ACTIONS' weights); returns their generator functions, a
# text, and whether any may block forever.
def gen_body(G, n, opts):
    lst = ACTIONS
    weights = opts.get('weights')
    if weights:
        lst = []
        for a in ACTIONS:
            w = weights.get(a['name'])
            if w and w > 0:
                lst.append({'w': w, 'gen': a['gen']})
    acts, txt, risky = [], [], False
    while len(acts) < n:
        got = G.r.weighted(lst)['gen'](G, opts)
        if got:
            fn, t, rk = got
            acts.append(fn)
            txt.append(t)
            risky = risky or rk
    return acts, '; '.join(txt), risky


PROCESS_KINDS = [
    {'name': 'worker', 'w': 50, 'n': (3, 14)},
    {'name': 'producer', 'w': 12, 'n': (3, 10),
     'weights': {'sleep': 10, 'put': 14, 'timeout': 2, 'resource': 3, 'deferred': 1, 'state': 1}},
    {'name': 'controller', 'w': 10, 'n': (3, 8),
     'weights': {'sleep': 12, 'succeed': 8, 'fail': 2, 'state': 1}},
    {'name': 'raiser', 'w': 10, 'n': (0, 6), 'raises': True},
    {'name': 'service', 'w': 18, 'loop': True},
]


# Returns a spec (pid, name, daemon, run = generator function (E, P), text).
def gen_proc(G, depth):
    r = G.r
    pid = G.newpid()
    spec = Obj(pid=pid, name='p%d' % pid, daemon=False, table_form=False)
    G.specs[pid] = spec
    kind = r.weighted(PROCESS_KINDS)
    if kind.get('loop') and len(G.stores) == 0:
        kind = PROCESS_KINDS[0]
    if kind.get('loop'):
        frm = r.range(1, len(G.stores))
        acts, txt, _ = gen_body(G, r.range(0, 3), {'loop': True, 'from': frm, 'depth': depth, 'pid': pid})
        spec.daemon = True
        spec.text = '%s daemon loop{get s%d; %s}' % (spec.name, frm, txt)

        def run_loop(E, P):
            st = E.st[frm]
            while True:
                x = yield st.get()
                L(E, P, 'svc got %s s%d n=%d', fmt(x), frm, len(st.items))
                for a in acts:
                    yield from a(E, P, x)
        spec.run = run_loop
        return spec
    lo, hi = kind['n']
    if depth > 0:
        hi = max(lo, hi // 2)
    acts, txt, risky = gen_body(G, r.range(lo, hi),
                                {'loop': False, 'depth': depth, 'pid': pid, 'weights': kind.get('weights')})
    nret = r.pick([0, 1, 1, 2])
    rets = [G.newval() for _ in range(nret)]
    raises = None
    if kind.get('raises'):
        raises = pid * 1000 if r.chance(25) else 'x%d' % pid
    spec.daemon = r.chance(75 if risky else 8)
    spec.table_form = r.chance(50)  # kernbench's s:spawn{...} form: no SimPy counterpart
    spec.text = '%s%s %s{%s%s}' % (
        spec.name, ' daemon' if spec.daemon else '', kind['name'], txt,
        '; raise' if raises is not None else ('; return ' + ','.join('%d' % v for v in rets) if nret > 0 else ''))

    def run(E, P):
        for a in acts:
            yield from a(E, P)
        if raises is not None:
            L(E, P, 'raises %s', tostring(raises))
            raise LuaError(raises)
        L(E, P, 'ends')
        return tuple(rets)
    spec.run = run
    return spec


###########################################################################
# the main script: phases and work injected between them
###########################################################################
def ML(E, f, *args):
    E.log(('t=%d main ' + f) % ((E.env.now,) + args))


# After a run that ended with nothing due before its end (settled), a store
# operation from the main script completes at once (see random_models.lua).
def settle(E, yes):
    E.clean = {}
    if yes:
        for k in E.st:
            E.clean[k] = True


# s:run([until]) as simpy_model.lua's Sim:run: 'until' or 'empty', or raises
# LuaError('deadlock: ...') when it ran out of events with a non-daemon
# process still alive.
def sim_run(E, untl=None):
    env = E.env
    if untl is not None:
        # SimPy's Environment.run(until=number), with the value 'until'
        at = float(untl)
        if at <= env.now:
            raise ValueError('until must be > now')
        u = Event(env)
        u._ok = True
        u._value = 'until'
        env.schedule(u, URGENT, at - env.now)
        res = env.run(until=u)
        if env.now < at:
            STATS['stale_until_runs'] += 1
    else:
        res = env.run()
        if res == 'until':
            STATS['stale_until_runs'] += 1
    if res == 'until':
        return 'until'
    for p, daemon in E.all_procs:
        if p.is_alive and not daemon:
            raise LuaError('deadlock: process still waiting')
    return 'empty'


# s:step(): 1, or 0 when nothing is queued
def sim_step(env):
    try:
        env.step()
    except EmptySchedule:
        return 0
    except StopSimulation:
        # a stale until event (see the top of the file): kernbench processes it
        STATS['stale_until_steps'] += 1
    return 1


def do_run(E, untl=None):
    env = E.env
    try:
        res = sim_run(E, untl)
    except (LuaError, simpy.Interrupt) as e:
        m = msg(e)
        ML(E, 'run failed: %s', m)
        settle(E, m == 'deadlock')
        return 'deadlock' if m == 'deadlock' else 'crash'
    # run(until)'s result is not compared (see random_models.lua)
    if untl is not None:
        ML(E, 'run(%d) peek=%s', untl, fmt(env.peek()))
    else:
        ML(E, 'run() -> %s', tostring(res))
    settle(E, True)
    return 'ok'


def ph_run_until(G):
    dt = G.r.range(1, 6)

    def fn(E):
        do_run(E, E.env.now + dt)
    return fn, 'run(+%d)' % dt


def ph_run(G):
    def fn(E):
        do_run(E)
    return fn, 'run()'


def ph_steps(G):
    lim = G.r.range(3, 60)

    def fn(E):
        env = E.env
        ML(E, 'steps peek=%s', fmt(env.peek()))
        n = 0
        while env.peek() < INF and n < lim:
            n += 1
            try:
                res = sim_step(env)
            except (LuaError, simpy.Interrupt) as e:
                ML(E, 'step failed: %s', msg(e))
            else:
                ML(E, 'step -> %s peek=%s', fmt(res), fmt(env.peek()))
        settle(E, env.peek() == INF)
    return fn, 'steps<=%d' % lim


def ph_spawn(G):
    spec = gen_proc(G, 1)

    def fn(E):
        E.spawn(spec)
        ML(E, 'spawned %s', spec.name)
    return fn, 'main spawn ' + spec.name


def ph_trigger(G):
    k, fail, v = G.r.range(1, G.nev), G.r.chance(25), G.newval()

    def fn(E):
        ev = E.ev[k]
        if ev.triggered:
            ML(E, 'ev%d already triggered', k)
        elif fail:
            ev.fail(LuaError('m%d' % k))
            ML(E, 'failed ev%d', k)
        else:
            ev.succeed(v)
            ML(E, 'succeeded ev%d=%d', k, v)
    return fn, 'main %s ev%d' % ('fail' if fail else 'succeed', k)


# store operations from the main script only on a clean store (see settle)
def ph_mainput(G):
    if len(G.stores) == 0:
        return None
    k, v = G.r.range(1, len(G.stores)), G.newval()

    def fn(E):
        st = E.st[k]
        if E.clean.get(k) and len(st.items) < G.stores[k] and len(st.put_queue) == 0:
            E.clean.pop(k, None)
            st.put(v)
            ML(E, 'put %d s%d n=%d', v, k, len(st.items))
    return fn, 'main put s%d=%d' % (k, v)


def ph_mainget(G):
    if len(G.stores) == 0:
        return None
    k = G.r.range(1, len(G.stores))

    def fn(E):
        st = E.st[k]
        if E.clean.get(k) and len(st.items) > 0 and len(st.get_queue) == 0:
            E.clean.pop(k, None)
            ev = st.get()
            if not ev.triggered:
                raise RuntimeError('would block')
            ML(E, 'got %s s%d n=%d', fmt(ev.value), k, len(st.items))
    return fn, 'main get s%d' % k


def ph_state(G):
    def fn(E):
        ML(E, 'state %s peek=%s', E.state(), fmt(E.env.peek()))
    return fn, 'main state'


# s:run(ev): SimPy's run(until=ev); a run that ends before ev is processed
# takes its stop callback back (kernbench's choice: SimPy leaves it there)
def sim_run_ev(env, ev):
    if ev.callbacks is None:
        v = ev.value
        return v.args[0] if isinstance(v, LuaError) else v
    try:
        return env.run(until=ev)
    finally:
        if ev.callbacks is not None:
            try:
                ev.callbacks.remove(StopSimulation.callback)
            except ValueError:
                pass


# run(until=event) on a timeout nobody else waits on, or on a hand event
# already processed (see random_models.lua)
def ph_run_ev(G):
    r = G.r
    k, d, v = r.range(1, G.nev), r.pick(DELAYS), G.newval()
    fresh = r.chance(60)

    def fn(E):
        ev = E.env.timeout(d, v) if fresh else E.ev[k]
        if not fresh and not ev.processed:
            ML(E, 'run(ev%d) skipped: not processed', k)
            return
        what = ('to%d' % d) if fresh else ('ev%d' % k)
        try:
            res = sim_run_ev(E.env, ev)
        except (LuaError, simpy.Interrupt, RuntimeError) as e:
            ML(E, 'run(%s) failed: %s', what, msg(e))
        else:
            ML(E, 'run(%s) -> %s', what, fmt(res))
        settle(E, False)
    return fn, ('run(to%d=%d)' % (d, v)) if fresh else ('run(ev%d)' % k)


def ph_interrupt(G):
    j = G.other_pid(None)
    if j is None:
        return None
    v = G.newval()

    def fn(E):
        p = E.procs.get(j)
        if p is not None and p.is_alive:
            p.interrupt(v)
            ML(E, 'interrupted p%d', j)
        else:
            ML(E, 'p%d not alive', j)
    return fn, 'main interrupt p%d=%d' % (j, v)


def ph_gc(G):
    def fn(E):
        E.abandoned = []
        gc.collect()
        gc.collect()
        ML(E, 'collected garbage')
    return fn, 'main gc'


# a timeout made by the main script (mtoK), which later conditions may use
def ph_timeout(G):
    d, v = G.r.pick(DELAYS), G.newval()

    def fn(E):
        E.mto.append(E.env.timeout(d, v))
        ML(E, 'made mto%d', len(E.mto))
    return fn, 'main mto to%d=%d' % (d, v)


# the main script may wait on what is processed: a process, an event
def ph_join(G):
    j, k = G.other_pid(None), G.r.range(1, G.nev)

    def fn(E):
        p = E.procs.get(j) if j is not None else None
        ev = E.ev[k]
        if p is not None and p.processed:
            if p.ok:
                parts = [fmt(v) for v in p.value]
            else:
                parts = [msg(p.value)]
            ML(E, 'joined p%d: %s [%s]', j, 'ok' if p.ok else 'caught', ' '.join(parts))
        if ev.processed:
            ML(E, 'ev%d %s', k, 'ok ' + fmt(ev.value) if ev.ok else 'caught ' + msg(ev.value))
    return fn, 'main join p%s, wait ev%d' % (tostring(j), k)


PHASES = [
    {'name': 'run_until', 'w': 40, 'gen': ph_run_until},
    {'name': 'run', 'w': 18, 'gen': ph_run},
    {'name': 'steps', 'w': 18, 'gen': ph_steps},
    {'name': 'spawn', 'w': 8, 'gen': ph_spawn},
    {'name': 'trigger', 'w': 8, 'gen': ph_trigger},
    {'name': 'mainput', 'w': 6, 'gen': ph_mainput},
    {'name': 'mainget', 'w': 4, 'gen': ph_mainget},
    {'name': 'state', 'w': 5, 'gen': ph_state},
    {'name': 'run_ev', 'w': 4, 'gen': ph_run_ev},
    {'name': 'interrupt', 'w': 3, 'gen': ph_interrupt},
    {'name': 'gc', 'w': 4, 'gen': ph_gc},
    {'name': 'timeout', 'w': 4, 'gen': ph_timeout},
    {'name': 'join', 'w': 4, 'gen': ph_join},
]


###########################################################################
# build(seed, log): build the model of `seed` against SimPy and run it;
# log(line) collects the output. Returns the description and the env.
###########################################################################
def build(seed, log):
    r = new_rng(seed)
    env = simpy.Environment()
    E = Obj(env=env, log=log, st={}, res={}, ev={}, procs={}, mto=[], clean={}, abandoned=[],
            all_procs=[], c={}, ps={}, fs={}, pr={})
    CUR['procs'] = E.procs
    kept = []

    def keep(c):
        kept.append(c)
        return c
    E.keep = keep
    cnt = {'val': 100, 'pid': 0}
    G = Obj(r=r, stores={}, res={}, specs={}, conts={}, pss={}, fss={}, prs={})

    def newval():
        cnt['val'] += 1
        return cnt['val']

    def newpid():
        cnt['pid'] += 1
        return cnt['pid']
    G.newval, G.newpid = newval, newpid

    # a process other than `self_` among those made so far (None if none)
    def other_pid(self_):
        nextpid = cnt['pid']
        if nextpid == 0 or (nextpid == 1 and self_ == 1):
            return None
        j = nextpid if r.chance(40) else r.range(1, nextpid)  # often the latest: a child
        if j == self_:
            j = 2 if j == 1 else j - 1
        return j
    G.other_pid = other_pid
    desc = []

    for k in range(1, r.range(1, 3) + 1):
        cap = INF if r.chance(45) else r.range(1, 3)
        G.stores[k] = cap
        E.st[k] = simpy.Store(env) if cap == INF else simpy.Store(env, capacity=cap)
        desc.append('s%d(%s)' % (k, fmt(cap)))
    for k in range(1, r.range(0, 3) + 1):
        cap = r.pick([1, 1, 2, 3])
        G.res[k] = cap
        E.res[k] = simpy.Resource(env, capacity=cap)
        desc.append('r%d(%d)' % (k, cap))
    G.nev = r.range(1, 6)
    for k in range(1, G.nev + 1):
        E.ev[k] = env.event()
    desc.append('%d events' % G.nev)
    for k in range(1, r.range(0, 2) + 1):
        cap = INF if r.chance(40) else r.range(4, 10)
        init = r.range(0, 3)
        G.conts[k] = cap
        E.c[k] = simpy.Container(env, capacity=cap, init=init)
        desc.append('c%d(%s,%d)' % (k, fmt(cap), init))
    for k in range(1, r.range(0, 1) + 1):
        cap = INF if r.chance(50) else r.range(1, 3)
        G.pss[k] = cap
        E.ps[k] = simpy.PriorityStore(env) if cap == INF else simpy.PriorityStore(env, capacity=cap)
        desc.append('ps%d(%s)' % (k, fmt(cap)))
    for k in range(1, r.range(0, 1) + 1):
        cap = INF if r.chance(50) else r.range(1, 3)
        G.fss[k] = cap
        E.fs[k] = simpy.FilterStore(env) if cap == INF else simpy.FilterStore(env, capacity=cap)
        desc.append('fs%d(%s)' % (k, fmt(cap)))
    for k in range(1, r.range(0, 2) + 1):
        cap, pre = r.pick([1, 1, 2]), r.chance(50)
        G.prs[k] = cap
        E.pr[k] = simpy.PreemptiveResource(env, capacity=cap) if pre else simpy.PriorityResource(env, capacity=cap)
        desc.append('pr%d(%d%s)' % (k, cap, 'p' if pre else ''))
    desc = [' '.join(desc)]

    def spawn(spec):
        P = Obj(name=spec.name)
        p = env.process(spec.run(E, P))
        E.procs[spec.pid] = p
        E.all_procs.append((p, spec.daemon))
    E.spawn = spawn

    def state():
        parts = []
        for k, st in E.st.items():
            parts.append('s%d=%d' % (k, len(st.items)))
        for k, res in E.res.items():
            parts.append('r%d=%d/%d' % (k, res.count, len(res.queue)))
        for k, ev in E.ev.items():
            parts.append('ev%d=%s%s%s' % (k, b(ev.triggered), b(ev.processed),
                                          b(ev.ok) if ev.triggered else '-'))
        for j in range(1, cnt['pid'] + 1):
            p = E.procs.get(j)
            parts.append('p%d=%s' % (j, b(p.is_alive) + b(p.processed) if p is not None else '-'))
        for k, c in E.c.items():
            parts.append('c%d=%s/%d/%d' % (k, fmt(c.level), len(c.get_queue), len(c.put_queue)))
        for k, ps in E.ps.items():
            parts.append('ps%d=%d' % (k, len(ps.items)))
        for k, fs in E.fs.items():
            parts.append('fs%d=%d/%d' % (k, len(fs.items), len(fs.get_queue)))
        for k, pr in E.pr.items():
            parts.append('pr%d=%d/%d' % (k, pr.count, len(pr.queue)))
        return ' '.join(parts)
    E.state = state

    # initial processes, then the phases (all generated before anything runs)
    initial = [gen_proc(G, 0) for _ in range(r.range(3, 8))]
    phases = []
    nph = r.range(2, 8)
    while len(phases) < nph:
        kind = r.weighted(PHASES)
        got = kind['gen'](G)
        if got:
            phases.append(got)
    # all specs are made: describe them
    for pid in range(1, cnt['pid'] + 1):
        desc.append(G.specs[pid].text)
    desc.append('main: spawn ' + ','.join(sp.name for sp in initial))
    desc.append('main: ' + '; '.join(t for _, t in phases) +
                '; succeed pending events; run() until it returns (<= 4 times)')

    settle(E, True)
    for sp in initial:
        E.spawn(sp)
    for fn, _ in phases:
        fn(E)
    # finally: succeed every event still pending and run to the end
    for k, ev in E.ev.items():
        if not ev.triggered:
            ev.succeed(900 + k)
    for _ in range(4):
        if do_run(E) != 'crash':
            break
    ML(E, 'final state %s', E.state())
    return '\n'.join(desc), env


###########################################################################
# driver
###########################################################################
def main(argv):
    try:
        first = int(argv[1]) if len(argv) > 1 else 1
        count = int(argv[2]) if len(argv) > 2 else 100
        mode = argv[3] if len(argv) > 3 else 'log'
        if count < 0 or mode not in ('log', 'desc', 'stats'):
            raise ValueError(mode)
    except ValueError:
        sys.stderr.write('usage: /usr/bin/python3 random_models.py SEED [COUNT [log|desc|stats]]\n')
        return 2
    out = sys.stdout
    for seed in range(first, first + count):
        lines = []
        try:
            desc, _ = build(seed, lines.append)
        except Exception as e:  # a bug of this port: visible in the log and on stderr
            import traceback
            traceback.print_exc()
            lines.append('BUILD ERROR: %s' % msg(e))
            desc = '?'
        if mode == 'desc':
            out.write('== seed %d\n%s\n' % (seed, desc))
        elif lines:
            out.write('\n'.join(lines) + '\n')
    out.flush()
    if mode == 'stats':
        sys.stderr.write('random_models.py: %d seeds; stale until events processed by step(): %d; '
                         'runs stopped by a stale until event: %d\n'
                         % (count, STATS['stale_until_steps'], STATS['stale_until_runs']))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
