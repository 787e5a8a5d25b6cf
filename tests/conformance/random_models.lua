-- Differential test: random models run against kernbench's `sim` module and
-- against simpy_model.lua (a literal Lua transcription of SimPy 3.0.11's event
-- loop); both must print exactly the same log.
--
--   kernbench -q tests/conformance/random_models.lua SEED COUNT [MODE]
--
-- For each seed in SEED .. SEED+COUNT-1, build(sim_module, seed, log) builds a
-- model from a small integer PRNG (no math.random) and runs it; it is called
-- once with kernbench's `sim` and once with the model, each time building the
-- model afresh, and the two logs are compared line by line. On the first
-- difference it prints the seed, the line, context from both logs and the
-- model's description, and exits 1. MODE:
--   check   (the default) compare, stop at the first difference, print a
--           summary line at the end
--   scan    compare, print one line per differing seed and go on
--   show    also print both logs in full and the description, for every seed
--   desc    print the description of each seed's model
--   kb      print kernbench's log only; model: print the model's log only
--
-- A model has stores (unbounded or capacity 1-3), resources (capacity 1-3),
-- hand events, and processes whose bodies are random lists of actions (see
-- ACTIONS: sleeps with mostly zero delays, puts and gets, resource holds,
-- events succeeded / failed / waited, timeouts with values, all_of / any_of
-- over timeouts, events, processes and nested conditions, conditions nobody
-- waits on, spawns, joins, raises), daemon service loops forwarding items
-- between stores, and a main script of phases (see PHASES: run(until), run(),
-- step() loops, garbage collections, and work injected between runs: spawns,
-- events triggered, store puts and gets, timeouts, joins of finished
-- processes, state dumps). Failures nothing waits on crash the run: the main
-- script logs `run failed: <message>` and runs on. A run() that ends with
-- non-daemon processes blocked logs `run failed: deadlock` (kernbench and the
-- model both raise `deadlock...`; only the word is compared).

local KB_SIM = sim
local script = debug.getinfo(1, 'S').source:gsub('^@', '')
local dir = script:match('^(.*)/[^/]*$') or '.'
local MODEL_PATH = dir .. '/simpy_model.lua'

---------------------------------------------------------------------------
-- PRNG: a 64-bit LCG (Lua 5.4 integers wrap), high bits out. Deterministic.
---------------------------------------------------------------------------
local function new_rng(seed)
  local x = seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
  local r = {}
  function r.next()
    x = x * 6364136223846793005 + 1442695040888963407
    return x >> 33
  end
  for _ = 1, 4 do r.next() end
  function r.int(n) return r.next() % n end                 -- 0 .. n-1
  function r.range(a, b) return a + r.next() % (b - a + 1) end
  function r.chance(pct) return r.next() % 100 < pct end
  function r.pick(t) return t[r.next() % #t + 1] end
  -- list of {w = weight, ...}: one entry, by weight
  function r.weighted(list)
    local total = 0
    for _, e in ipairs(list) do total = total + e.w end
    local k = r.next() % total
    for _, e in ipairs(list) do
      if k < e.w then return e end
      k = k - e.w
    end
  end
  return r
end

local DELAYS = {0, 0, 1, 2, 3}

---------------------------------------------------------------------------
-- formatting
---------------------------------------------------------------------------
local function fmt(v)
  if type(v) == 'table' then
    local n = 0
    for k in pairs(v) do if math.type(k) == 'integer' and k > n then n = k end end
    local parts = {}
    for i = 1, n do parts[i] = fmt(v[i]) end
    return '{' .. table.concat(parts, ',') .. '}'
  elseif type(v) == 'number' then
    if v == math.huge then return 'inf' end
    return string.format('%d', v)
  end
  return tostring(v)
end

-- the model being built (msg and causes need its module and processes)
local CUR = {is_interrupt = function() return false end, procs = {}}

local function pname(p)
  for j, q in pairs(CUR.procs) do if q == p then return 'p' .. j end end
  return '-'
end

local function msg(e)
  if type(e) == 'table' and e.message ~= nil then e = e.message end
  if CUR.is_interrupt(e) then
    local c = e.cause
    if type(c) == 'table' and c.usage_since ~= nil then -- a preemption
      return string.format('interrupt preempted@%d by %s', c.usage_since, pname(c.by))
    end
    return 'interrupt ' .. fmt(c)
  end
  local s = type(e) == 'table' and fmt(e) or tostring(e)
  if s:match('^deadlock') then return 'deadlock' end
  if s:find('no events left', 1, true) then return 'no events left' end
  return s
end

local function b(x) return x and '1' or '0' end

---------------------------------------------------------------------------
-- the generator
--
-- G: generation state (rng, description, counters); E: the runtime state of
-- the model being built (the sim, its objects, the log). Actions are made at
-- build time (all the randomness is drawn then) as closures over E; both runs
-- of a seed draw the same numbers and so build the same model.
---------------------------------------------------------------------------

local function L(E, P, f, ...)
  E.log(string.format('t=%d %s ' .. f, E.s:now(), P.name, ...))
end

local gen_body, gen_proc

-- condition members: a spec list built at generation time, realised at run time
local function gen_members(G, depth, self)
  local r = G.r
  local specs, txt = {}, {}
  local n = r.pick{0, 1, 2, 2, 3, 3, 4}
  if n == 0 and not r.chance(30) then n = 2 end
  for i = 1, n do
    local k = r.int(100)
    if k < 50 then
      local d, v = r.pick(DELAYS), G.newval()
      specs[i] = {kind = 'to', d = d, v = v}
      txt[i] = 'to' .. d .. '=' .. v
    elseif k < 68 then
      local e = r.range(1, G.nev)
      specs[i] = {kind = 'ev', k = e}
      txt[i] = 'ev' .. e
    elseif k < 74 then
      local e = r.range(1, 3)
      specs[i] = {kind = 'mto', k = e}
      txt[i] = 'mto' .. e
    elseif k < 92 or depth > 0 then
      local j = G.other_pid(self)
      if j then
        specs[i] = {kind = 'proc', j = j}
        txt[i] = 'p' .. j
      else
        specs[i] = {kind = 'to', d = 0, v = G.newval()}
        txt[i] = 'to0=' .. specs[i].v
      end
    else
      local sub, stxt = gen_members(G, depth + 1, self)
      local all = r.chance(50)
      specs[i] = {kind = all and 'all' or 'any', members = sub}
      txt[i] = (all and 'all' or 'any') .. '(' .. stxt .. ')'
    end
  end
  return specs, table.concat(txt, ' ')
end

local function make_members(E, specs)
  local s = E.s
  local evs = {}
  for i, m in ipairs(specs) do
    if m.kind == 'to' then
      evs[i] = s:timeout(m.d, m.v)
    elseif m.kind == 'ev' then
      evs[i] = E.ev[m.k]
    elseif m.kind == 'proc' then
      evs[i] = E.procs[m.j] or s:timeout(0, -m.j) -- not spawned (yet): a stand-in
    elseif m.kind == 'mto' then
      evs[i] = E.mto[m.k] or s:timeout(0, -100 - m.k) -- not made (yet): a stand-in
    else
      local sub = make_members(E, m.members)
      evs[i] = E.keep(m.kind == 'all' and s:all_of(sub) or s:any_of(sub))
    end
  end
  return evs
end

-- Action kinds. gen(G, opts) returns fn(E, P, x) (x: the item a service loop
-- got), a short text, and whether the action may block forever (risky).
-- An action that does not fit returns nothing (another is drawn).
-- opts.loop: inside a service loop (only sleeps, forwarding puts, resource
-- holds, succeeds, timeouts and state dumps); opts.from: the store the loop
-- gets from (it forwards only to later stores); opts.pid: the process's own
-- number (it never joins itself); opts.depth: nesting of spawned processes.
local ACTIONS = {
  {name = 'sleep', w = 22, gen = function(G)
    local d = G.r.pick(DELAYS)
    if G.r.chance(3) then d = G.r.pick{7, 64, 1000, 123457} end -- far ahead, now and then
    return function(E, P)
      E.s:sleep(d)
      L(E, P, 'slept %d', d)
    end, 'sleep' .. d, false
  end},

  {name = 'put', w = 10, gen = function(G, opts)
    local r = G.r
    if #G.stores == 0 then return nil end
    local k
    if opts.loop then
      if opts.from >= #G.stores then return nil end
      k = r.range(opts.from + 1, #G.stores)
    else
      k = r.range(1, #G.stores)
    end
    local v = G.newval()
    return function(E, P, x)
      local st = E.st[k]
      local item = x and x + 1000 or v
      st:put(item)
      L(E, P, 'put %d s%d n=%d', item, k, st:count())
    end, (opts.loop and 'fwd' or 'put') .. ' s' .. k .. (opts.loop and '' or '=' .. v),
      G.stores[k] ~= math.huge
  end},

  {name = 'get', w = 9, gen = function(G, opts)
    if #G.stores == 0 or opts.loop then return nil end
    local k = G.r.range(1, #G.stores)
    return function(E, P)
      local st = E.st[k]
      local x = st:get()
      L(E, P, 'got %s s%d n=%d', fmt(x), k, st:count())
    end, 'get s' .. k, true
  end},

  {name = 'resource', w = 12, gen = function(G, opts)
    local r = G.r
    if #G.res == 0 then return nil end
    local k = r.range(1, #G.res)
    local hold = r.pick{'none', 'sleep', 'sleep', 'sleep0x2', 'put'}
    local d = r.pick{0, 0, 1, 2}
    local sk, v = nil, G.newval()
    if hold == 'put' then
      if #G.stores == 0 or opts.loop then hold = 'none' else sk = r.range(1, #G.stores) end
    end
    return function(E, P)
      local res = E.res[k]
      res:acquire()
      L(E, P, 'acq r%d use=%d q=%d', k, res:in_use(), res:queued())
      if hold == 'sleep' then
        E.s:sleep(d)
      elseif hold == 'sleep0x2' then
        E.s:sleep(0); E.s:sleep(0)
      elseif hold == 'put' then
        E.st[sk]:put(v)
        L(E, P, 'put %d s%d n=%d (holding r%d)', v, sk, E.st[sk]:count(), k)
      end
      res:release()
      L(E, P, 'rel r%d use=%d q=%d', k, res:in_use(), res:queued())
    end, 'res r' .. k .. ' ' .. hold .. (hold == 'sleep' and d or '') .. (sk and ' s' .. sk or ''),
      hold == 'put' and G.stores[sk] ~= math.huge
  end},

  {name = 'succeed', w = 7, gen = function(G)
    local k, v = G.r.range(1, G.nev), G.newval()
    if G.r.chance(15) then v = nil end
    return function(E, P)
      local ev = E.ev[k]
      if ev:triggered() then
        L(E, P, 'ev%d already triggered', k)
      else
        ev:succeed(v)
        L(E, P, 'succeeded ev%d=%s', k, fmt(v))
      end
    end, 'succeed ev' .. k .. '=' .. fmt(v), false
  end},

  {name = 'fail', w = 2, gen = function(G, opts)
    if opts.loop then return nil end
    local k = G.r.range(1, G.nev)
    local reason = G.r.chance(30) and 7000 + k or 'r' .. k
    return function(E, P)
      local ev = E.ev[k]
      if ev:triggered() then
        L(E, P, 'ev%d already triggered', k)
      else
        ev:fail(reason)
        L(E, P, 'failed ev%d', k)
      end
    end, 'fail ev' .. k, false
  end},

  {name = 'wait', w = 8, gen = function(G, opts)
    if opts.loop then return nil end
    local k = G.r.range(1, G.nev)
    return function(E, P)
      local ev = E.ev[k]
      local ok, v = pcall(ev.wait, ev)
      L(E, P, 'ev%d %s', k, ok and 'ok ' .. fmt(v) or 'caught ' .. msg(v))
    end, 'wait ev' .. k, true
  end},

  {name = 'timeout', w = 5, gen = function(G)
    local d, v = G.r.pick(DELAYS), G.newval()
    return function(E, P)
      local x = E.s:timeout(d, v):wait()
      L(E, P, 'timeout %s', fmt(x))
    end, 'to' .. d .. '=' .. v, false
  end},

  -- a timeout made now, waited after a sleep (often already processed)
  {name = 'deferred', w = 4, gen = function(G)
    local r = G.r
    local d1, d2, v = r.pick(DELAYS), r.pick(DELAYS), G.newval()
    return function(E, P)
      local t = E.s:timeout(d1, v)
      E.s:sleep(d2)
      L(E, P, 'deferred to%d: processed=%s', d1, b(t:processed()))
      local x = t:wait()
      L(E, P, 'deferred timeout %s', fmt(x))
    end, 'defer to' .. d1 .. '=' .. v .. ' sleep' .. d2, false
  end},

  {name = 'all_of', w = 6, gen = function(G, opts)
    if opts.loop then return nil end
    local specs, txt = gen_members(G, 0, opts.pid)
    return function(E, P)
      local evs = make_members(E, specs)
      local c = E.keep(E.s:all_of(evs))
      local ok, v = pcall(c.wait, c)
      if ok then
        local parts = {}
        for i = 1, #specs do parts[i] = fmt(v[i]) end
        L(E, P, 'all_of ok [%s]', table.concat(parts, ' '))
      else
        L(E, P, 'all_of caught %s', msg(v))
      end
    end, 'all(' .. txt .. ')', true
  end},

  {name = 'any_of', w = 6, gen = function(G, opts)
    if opts.loop then return nil end
    local specs, txt = gen_members(G, 0, opts.pid)
    return function(E, P)
      local evs = make_members(E, specs)
      local c = E.keep(E.s:any_of(evs))
      local ok, v = pcall(c.wait, c)
      local flags = {}
      for i, e in ipairs(evs) do flags[i] = b(e:processed()) .. b(e:triggered()) end
      L(E, P, 'any_of %s [%s]', ok and 'ok ' .. fmt(v) or 'caught ' .. msg(v), table.concat(flags, ' '))
    end, 'any(' .. txt .. ')', true
  end},

  -- a condition nobody waits on: it still fires when its members do (in SimPy
  -- its members' callbacks keep it), taking their failures; the main script's
  -- gc phases drop the last reference and collect it (kernbench then drops it)
  {name = 'abandon', w = 2, gen = function(G, opts)
    if opts.loop then return nil end
    local specs, txt = gen_members(G, 0, opts.pid)
    local all = G.r.chance(50)
    return function(E, P)
      local evs = make_members(E, specs)
      local c = all and E.s:all_of(evs) or E.s:any_of(evs)
      E.abandoned[#E.abandoned + 1] = c
      L(E, P, 'made %s_of', all and 'all' or 'any')
    end, 'abandon ' .. (all and 'all' or 'any') .. '(' .. txt .. ')', false
  end},

  {name = 'spawn', w = 5, gen = function(G, opts)
    if opts.loop or opts.depth >= 2 then return nil end
    local child = gen_proc(G, opts.depth + 1)
    return function(E, P)
      E.spawn(child)
      L(E, P, 'spawned %s', child.name)
    end, 'spawn ' .. child.name, false
  end},

  {name = 'join', w = 5, gen = function(G, opts)
    if opts.loop then return nil end
    local j = G.other_pid(opts.pid)
    if not j then return nil end
    return function(E, P)
      local p = E.procs[j]
      if not p then
        L(E, P, 'join p%d: not spawned', j)
        return
      end
      local res = table.pack(pcall(p.wait, p))
      if res[1] then
        local parts = {}
        for i = 2, res.n do parts[#parts + 1] = fmt(res[i]) end
        L(E, P, 'joined p%d: [%s]', j, table.concat(parts, ' '))
      else
        L(E, P, 'joined p%d: caught %s', j, msg(res[2]))
      end
    end, 'join p' .. j, true
  end},

  {name = 'state', w = 3, gen = function(G)
    return function(E, P)
      L(E, P, 'state %s', E.state())
    end, 'state', false
  end},

  -- requests as events: a get or put that gives up after a timeout (cancelled)
  {name = 'getreq', w = 4, gen = function(G, opts)
    if #G.stores == 0 or opts.loop then return nil end
    local k, d = G.r.range(1, #G.stores), G.r.pick(DELAYS)
    return function(E, P)
      local st = E.st[k]
      local g = st:get_event()
      E.s:any_of{g, E.s:timeout(d)}:wait()
      if g:triggered() then
        L(E, P, 'getreq s%d got %s n=%d', k, fmt(g:value()), st:count())
      else
        g:cancel()
        L(E, P, 'getreq s%d gave up n=%d getters=%d', k, st:count(), st:getters())
      end
    end, 'getreq s' .. k .. ' to' .. d, false
  end},

  {name = 'putreq', w = 2, gen = function(G, opts)
    if #G.stores == 0 or opts.loop then return nil end
    local k, d, v = G.r.range(1, #G.stores), G.r.pick(DELAYS), G.newval()
    return function(E, P)
      local st = E.st[k]
      local p = st:put_event(v)
      E.s:any_of{p, E.s:timeout(d)}:wait()
      if p:triggered() then
        L(E, P, 'putreq %d s%d done n=%d', v, k, st:count())
      else
        p:cancel()
        L(E, P, 'putreq %d s%d gave up n=%d putters=%d', v, k, st:count(), st:putters())
      end
    end, 'putreq s' .. k .. '=' .. v .. ' to' .. d, false
  end},

  -- a resource request in a `with` block, reneging after a patience
  {name = 'reqwith', w = 4, gen = function(G, opts)
    if #G.res == 0 or opts.loop then return nil end
    local k, pat, hold = G.r.range(1, #G.res), G.r.pick(DELAYS), G.r.pick{0, 1, 2}
    return function(E, P)
      local res = E.res[k]
      do
        local req <close> = res:request()
        E.s:any_of{req, E.s:timeout(pat)}:wait()
        if req:processed() then
          L(E, P, 'reqwith r%d got use=%d q=%d', k, res:in_use(), res:queued())
          E.s:sleep(hold)
        else
          L(E, P, 'reqwith r%d reneged q=%d', k, res:queued())
        end
      end
      L(E, P, 'reqwith r%d out use=%d q=%d', k, res:in_use(), res:queued())
    end, 'reqwith r' .. k .. ' pat' .. pat .. ' hold' .. hold, false
  end},

  {name = 'interrupt', w = 3, gen = function(G, opts)
    if opts.loop then return nil end
    local j = G.other_pid(opts.pid)
    if not j then return nil end
    local v = G.newval()
    return function(E, P)
      local p = E.procs[j]
      if p and p:alive() then
        p:interrupt(v)
        L(E, P, 'interrupted p%d', j)
      else
        L(E, P, 'p%d not alive', j)
      end
    end, 'interrupt p' .. j .. '=' .. v, false
  end},

  {name = 'cont', w = 4, gen = function(G, opts)
    if #G.conts == 0 or opts.loop then return nil end
    local k, put, a = G.r.range(1, #G.conts), G.r.chance(50), G.r.range(1, 4)
    return function(E, P)
      local c = E.c[k]
      if put then c:put(a) else c:get(a) end
      L(E, P, 'c%d %s %d level=%s', k, put and 'put' or 'got', a, fmt(c:level()))
    end, 'c' .. k .. (put and ' put' or ' get') .. a, true
  end},

  {name = 'psop', w = 3, gen = function(G, opts)
    if #G.pss == 0 or opts.loop then return nil end
    local k, put, v, pr = G.r.range(1, #G.pss), G.r.chance(55), G.newval(), G.r.range(0, 3)
    return function(E, P)
      local ps = E.ps[k]
      if put then
        ps:put(v, pr)
        L(E, P, 'ps%d put %d/%d n=%d', k, v, pr, ps:count())
      else
        local x = ps:get()
        L(E, P, 'ps%d got %s n=%d', k, fmt(x), ps:count())
      end
    end, 'ps' .. k .. (put and (' put ' .. v .. '/' .. pr) or ' get'), true
  end},

  {name = 'fsop', w = 3, gen = function(G, opts)
    if #G.fss == 0 or opts.loop then return nil end
    local k, put, v = G.r.range(1, #G.fss), G.r.chance(55), G.newval()
    local m = G.r.range(2, 3)
    local rem = G.r.range(0, m - 1)
    return function(E, P)
      local fs = E.fs[k]
      if put then
        fs:put(v)
        L(E, P, 'fs%d put %d n=%d', k, v, fs:count())
      else
        local x = fs:get(function(y) return y % m == rem end)
        L(E, P, 'fs%d got %s n=%d', k, fmt(x), fs:count())
      end
    end, 'fs' .. k .. (put and (' put ' .. v) or (' get %' .. m .. '=' .. rem)), true
  end},

  -- a priority resource's request in a `with` block; a preemption is caught
  {name = 'preq', w = 5, gen = function(G, opts)
    if #G.prs == 0 or opts.loop then return nil end
    local k, prio, pre, hold = G.r.range(1, #G.prs), G.r.range(0, 3), G.r.chance(70), G.r.pick{1, 2, 3, 5}
    return function(E, P)
      local r = E.pr[k]
      local ok, e = pcall(function()
        local req <close> = r:request{priority = prio, preempt = pre}
        req:wait()
        L(E, P, 'pr%d got prio %d use=%d q=%d', k, prio, r:in_use(), r:queued())
        E.s:sleep(hold)
        L(E, P, 'pr%d done', k)
      end)
      if not ok then
        if not CUR.is_interrupt(e) then error(e, 0) end
        L(E, P, 'pr%d %s use=%d q=%d', k, msg(e), r:in_use(), r:queued())
      end
    end, 'preq pr' .. k .. ' prio' .. prio .. (pre and '' or ' nopre') .. ' hold' .. hold, true
  end},

  {name = 'callback', w = 2, gen = function(G, opts)
    if opts.loop then return nil end
    local k = G.r.range(1, G.nev)
    return function(E, P)
      local ev = E.ev[k]
      if ev:processed() then
        L(E, P, 'ev%d processed: no callback', k)
      else
        local name = P.name
        ev:add_callback(function(e)
          E.log(string.format('t=%d cb ev%d of %s ok=%s', E.s:now(), k, name, b(e:ok())))
        end)
        L(E, P, 'callback on ev%d', k)
      end
    end, 'callback ev' .. k, false
  end},
}

-- gen_body(G, n, opts): n actions drawn by weight (opts.weights, by action
-- name, overrides ACTIONS' weights); returns their closures, a text, and
-- whether any may block forever.
function gen_body(G, n, opts)
  local list = ACTIONS
  if opts.weights then
    list = {}
    for _, a in ipairs(ACTIONS) do
      local w = opts.weights[a.name]
      if w and w > 0 then list[#list + 1] = {w = w, gen = a.gen} end
    end
  end
  local acts, txt, risky = {}, {}, false
  while #acts < n do
    local fn, t, rk = G.r.weighted(list).gen(G, opts)
    if fn then
      acts[#acts + 1] = fn
      txt[#txt + 1] = t
      risky = risky or rk
    end
  end
  return acts, table.concat(txt, '; '), risky
end

-- Process kinds: workers run a finite list of actions and return 0-2 values
-- (raisers end in error('xN', 0) instead); producers and controllers are
-- workers biased to puts, and to succeeding / failing events; a service is a
-- daemon loop: get from a store, then a few actions forwarding the item (+1000)
-- to later stores only (no cycles, so runs end). A process that may block
-- forever is mostly a daemon; the others mostly not (a run() that ends with
-- one blocked logs `run failed: deadlock`).
local PROCESS_KINDS = {
  {name = 'worker', w = 50, n = {3, 14}},
  {name = 'producer', w = 12, n = {3, 10},
   weights = {sleep = 10, put = 14, timeout = 2, resource = 3, deferred = 1, state = 1}},
  {name = 'controller', w = 10, n = {3, 8}, weights = {sleep = 12, succeed = 8, fail = 2, state = 1}},
  {name = 'raiser', w = 10, n = {0, 6}, raises = true},
  {name = 'service', w = 18, loop = true},
}

-- Returns a spec {pid, name, daemon, run = fn(E, P), text}.
function gen_proc(G, depth)
  local r = G.r
  local pid = G.newpid()
  local spec = {pid = pid, name = 'p' .. pid}
  G.specs[pid] = spec
  local kind = r.weighted(PROCESS_KINDS)
  if kind.loop and #G.stores == 0 then kind = PROCESS_KINDS[1] end
  if kind.loop then
    local from = r.range(1, #G.stores)
    local acts, txt = gen_body(G, r.range(0, 3), {loop = true, from = from, depth = depth, pid = pid})
    spec.daemon = true
    spec.text = string.format('%s daemon loop{get s%d; %s}', spec.name, from, txt)
    spec.run = function(E, P)
      local st = E.st[from]
      while true do
        local x = st:get()
        L(E, P, 'svc got %s s%d n=%d', fmt(x), from, st:count())
        for _, a in ipairs(acts) do a(E, P, x) end
      end
    end
    return spec
  end
  local lo, hi = kind.n[1], kind.n[2]
  if depth > 0 then hi = math.max(lo, hi // 2) end
  local acts, txt, risky = gen_body(G, r.range(lo, hi),
    {loop = false, depth = depth, pid = pid, weights = kind.weights})
  local nret = r.pick{0, 1, 1, 2}
  local rets = {}
  for i = 1, nret do rets[i] = G.newval() end
  local raises = kind.raises and (r.chance(25) and pid * 1000 or 'x' .. pid)
  spec.daemon = r.chance(risky and 75 or 8)
  spec.table_form = r.chance(50)
  spec.text = string.format('%s%s %s{%s%s}', spec.name, spec.daemon and ' daemon' or '', kind.name, txt,
    raises and '; raise' or (nret > 0 and '; return ' .. table.concat(rets, ',') or ''))
  spec.run = function(E, P)
    for _, a in ipairs(acts) do a(E, P) end
    if raises then
      L(E, P, 'raises %s', raises)
      error(raises, 0)
    end
    L(E, P, 'ends')
    return table.unpack(rets, 1, nret)
  end
  return spec
end

---------------------------------------------------------------------------
-- the main script: phases and work injected between them
---------------------------------------------------------------------------
local function ML(E, f, ...)
  E.log(string.format('t=%d main ' .. f, E.s:now(), ...))
end

-- After a run that ended with nothing due before its end (settled), a store
-- with room has no waiting putters and a non-empty one no waiting getters, so a
-- store operation from the main script completes at once on both sides; after
-- one, that store's own processing is due, so the next waits for another run.
local function settle(E, yes)
  E.clean = {}
  if yes then for k = 1, #E.st do E.clean[k] = true end end
end

local function do_run(E, untl)
  local s = E.s
  local ok, res
  if untl then ok, res = pcall(s.run, s, untl) else ok, res = pcall(s.run, s) end
  if ok then
    -- run(until)'s result is not compared: kernbench returns "empty" when no
    -- event is left, the model always "until" (SimPy returns None); peek shows it
    if untl then ML(E, 'run(%d) peek=%s', untl, fmt(s:peek())) else ML(E, 'run() -> %s', tostring(res)) end
    settle(E, true)
    return 'ok'
  else
    local m = msg(res)
    ML(E, 'run failed: %s', m)
    settle(E, m == 'deadlock')
    return m == 'deadlock' and 'deadlock' or 'crash'
  end
end

local PHASES = {
  -- A run(until) that crashes leaves its until event queued, as in SimPy: it
  -- stops a later run at that time.
  {name = 'run_until', w = 40, gen = function(G)
    local dt = G.r.range(1, 6)
    return function(E) do_run(E, E.s:now() + dt) end, 'run(+' .. dt .. ')'
  end},
  {name = 'run', w = 18, gen = function(G)
    return function(E) do_run(E) end, 'run()'
  end},
  {name = 'steps', w = 18, gen = function(G)
    local lim = G.r.range(3, 60)
    return function(E)
      local s = E.s
      ML(E, 'steps peek=%s', fmt(s:peek()))
      local n = 0
      while s:peek() < math.huge and n < lim do
        local ok, res = pcall(s.step, s)
        n = n + 1
        if ok then
          ML(E, 'step -> %s peek=%s', fmt(res), fmt(s:peek()))
        else
          ML(E, 'step failed: %s', msg(res))
        end
      end
      settle(E, s:peek() == math.huge)
    end, 'steps<=' .. lim
  end},
  -- work injected by the main script (between runs)
  {name = 'spawn', w = 8, gen = function(G)
    local spec = gen_proc(G, 1)
    return function(E)
      E.spawn(spec)
      ML(E, 'spawned %s', spec.name)
    end, 'main spawn ' .. spec.name
  end},
  {name = 'trigger', w = 8, gen = function(G)
    local k, fail, v = G.r.range(1, G.nev), G.r.chance(25), G.newval()
    return function(E)
      local ev = E.ev[k]
      if ev:triggered() then
        ML(E, 'ev%d already triggered', k)
      elseif fail then
        ev:fail('m' .. k)
        ML(E, 'failed ev%d', k)
      else
        ev:succeed(v)
        ML(E, 'succeeded ev%d=%d', k, v)
      end
    end, string.format('main %s ev%d', fail and 'fail' or 'succeed', k)
  end},
  -- store operations from the main script only on a clean store (see settle)
  {name = 'mainput', w = 6, gen = function(G)
    if #G.stores == 0 then return nil end
    local k, v = G.r.range(1, #G.stores), G.newval()
    return function(E)
      local st = E.st[k]
      -- (a cancelled request can leave a put waiting behind room: not then)
      if E.clean[k] and st:count() < G.stores[k] and st:putters() == 0 then
        E.clean[k] = nil
        st:put(v)
        ML(E, 'put %d s%d n=%d', v, k, st:count())
      end
    end, 'main put s' .. k .. '=' .. v
  end},
  {name = 'mainget', w = 4, gen = function(G)
    if #G.stores == 0 then return nil end
    local k = G.r.range(1, #G.stores)
    return function(E)
      local st = E.st[k]
      if E.clean[k] and st:count() > 0 and st:getters() == 0 then
        E.clean[k] = nil
        local x = st:get()
        ML(E, 'got %s s%d n=%d', fmt(x), k, st:count())
      end
    end, 'main get s' .. k
  end},
  {name = 'state', w = 5, gen = function(G)
    return function(E) ML(E, 'state %s peek=%s', E.state(), fmt(E.s:peek())) end, 'main state'
  end},
  -- run(until=event) on a timeout nobody else waits on, or on a hand event
  -- already processed (its value, or its failure, returned at once). Not on
  -- a pending hand event: processes waiting on it behind the run's own stop
  -- are dropped, as in SimPy, whose interrupt of such a process then crashes.
  {name = 'run_ev', w = 4, gen = function(G)
    local r = G.r
    local k, d, v = r.range(1, G.nev), r.pick(DELAYS), G.newval()
    local fresh = r.chance(60)
    return function(E)
      local ev = fresh and E.s:timeout(d, v) or E.ev[k]
      if not fresh and not ev:processed() then
        ML(E, 'run(ev%d) skipped: not processed', k)
        return
      end
      local ok, res = pcall(E.s.run, E.s, ev)
      local what = fresh and ('to' .. d) or ('ev' .. k)
      if ok then
        ML(E, 'run(%s) -> %s', what, fmt(res))
      else
        ML(E, 'run(%s) failed: %s', what, msg(res))
      end
      settle(E, false)
    end, fresh and ('run(to' .. d .. '=' .. v .. ')') or ('run(ev' .. k .. ')')
  end},
  {name = 'interrupt', w = 3, gen = function(G)
    local j = G.other_pid(nil)
    if not j then return nil end
    local v = G.newval()
    return function(E)
      local p = E.procs[j]
      if p and p:alive() then
        p:interrupt(v)
        ML(E, 'interrupted p%d', j)
      else
        ML(E, 'p%d not alive', j)
      end
    end, 'main interrupt p' .. j .. '=' .. v
  end},
  {name = 'gc', w = 4, gen = function(G)
    return function(E)
      E.abandoned = {}
      collectgarbage(); collectgarbage()
      ML(E, 'collected garbage')
    end, 'main gc'
  end},
  -- a timeout made by the main script (mtoK), which later conditions may use
  {name = 'timeout', w = 4, gen = function(G)
    local d, v = G.r.pick(DELAYS), G.newval()
    return function(E)
      E.mto[#E.mto + 1] = E.s:timeout(d, v)
      ML(E, 'made mto%d', #E.mto)
    end, 'main mto to' .. d .. '=' .. v
  end},
  -- the main script may wait on what is processed: a process, an event
  {name = 'join', w = 4, gen = function(G)
    local j, k = G.other_pid(nil), G.r.range(1, G.nev)
    return function(E)
      local p, ev = j and E.procs[j], E.ev[k]
      if p and p:processed() then
        local res = table.pack(pcall(p.wait, p))
        local parts = {}
        for i = 2, res.n do parts[#parts + 1] = res[1] and fmt(res[i]) or msg(res[i]) end
        ML(E, 'joined p%d: %s [%s]', j, res[1] and 'ok' or 'caught', table.concat(parts, ' '))
      end
      if ev:processed() then
        local ok, v = pcall(ev.wait, ev)
        ML(E, 'ev%d %s', k, ok and 'ok ' .. fmt(v) or 'caught ' .. msg(v))
      end
    end, string.format('main join p%s, wait ev%d', tostring(j), k)
  end},
}

---------------------------------------------------------------------------
-- build(sim_module, seed, log): build the model of `seed` against sim_module
-- and run it; log(line) collects the output. Returns the description and the
-- simulation.
---------------------------------------------------------------------------
local function build(simmod, seed, log)
  local r = new_rng(seed)
  local s = simmod.new()
  local E = {s = s, log = log, st = {}, res = {}, ev = {}, procs = {}, mto = {}, clean = {},
    abandoned = {}, c = {}, ps = {}, fs = {}, pr = {}}
  CUR = {is_interrupt = simmod.is_interrupt, procs = E.procs}
  -- Conditions are kept referenced for the model's lifetime (kernbench drops a
  -- condition whose last reference is collected, so the garbage collector's
  -- timing would decide what happens); abandoned ones until a gc phase.
  local kept = {}
  E.keep = function(c) kept[#kept + 1] = c; return c end
  local nextval, nextpid = 100, 0
  local G = {r = r, stores = {}, res = {}, specs = {}, conts = {}, pss = {}, fss = {}, prs = {}}
  G.newval = function() nextval = nextval + 1; return nextval end
  G.newpid = function() nextpid = nextpid + 1; return nextpid end
  -- a process other than `self` among those made so far (nil if none)
  G.other_pid = function(self)
    if nextpid == 0 or (nextpid == 1 and self == 1) then return nil end
    local j = r.chance(40) and nextpid or r.range(1, nextpid) -- often the latest: a child
    if j == self then j = j == 1 and 2 or j - 1 end
    return j
  end
  local desc = {}

  for k = 1, r.range(1, 3) do
    local cap = r.chance(45) and math.huge or r.range(1, 3)
    G.stores[k] = cap
    E.st[k] = cap == math.huge and s:store() or s:store(cap)
    desc[#desc + 1] = string.format('s%d(%s)', k, fmt(cap))
  end
  for k = 1, r.range(0, 3) do
    local cap = r.pick{1, 1, 2, 3}
    G.res[k] = cap
    E.res[k] = s:resource(cap)
    desc[#desc + 1] = string.format('r%d(%d)', k, cap)
  end
  G.nev = r.range(1, 6)
  for k = 1, G.nev do E.ev[k] = s:event() end
  desc[#desc + 1] = G.nev .. ' events'
  for k = 1, r.range(0, 2) do
    local cap = r.chance(40) and math.huge or r.range(4, 10)
    local init = r.range(0, 3)
    G.conts[k] = cap
    E.c[k] = s:container{capacity = cap, init = init}
    desc[#desc + 1] = string.format('c%d(%s,%d)', k, fmt(cap), init)
  end
  for k = 1, r.range(0, 1) do
    local cap = r.chance(50) and math.huge or r.range(1, 3)
    G.pss[k] = cap
    E.ps[k] = cap == math.huge and s:priority_store() or s:priority_store(cap)
    desc[#desc + 1] = string.format('ps%d(%s)', k, fmt(cap))
  end
  for k = 1, r.range(0, 1) do
    local cap = r.chance(50) and math.huge or r.range(1, 3)
    G.fss[k] = cap
    E.fs[k] = cap == math.huge and s:filter_store() or s:filter_store(cap)
    desc[#desc + 1] = string.format('fs%d(%s)', k, fmt(cap))
  end
  for k = 1, r.range(0, 2) do
    local cap, pre = r.pick{1, 1, 2}, r.chance(50)
    G.prs[k] = cap
    E.pr[k] = pre and s:preemptive_resource(cap) or s:priority_resource(cap)
    desc[#desc + 1] = string.format('pr%d(%d%s)', k, cap, pre and 'p' or '')
  end
  desc = {table.concat(desc, ' ')}

  E.spawn = function(spec)
    local P = {name = spec.name}
    if spec.daemon or spec.table_form then
      E.procs[spec.pid] = s:spawn{fn = spec.run, args = {E, P}, daemon = spec.daemon}
    else
      E.procs[spec.pid] = s:spawn(spec.run, E, P)
    end
  end
  E.state = function()
    local parts = {}
    for k, st in ipairs(E.st) do parts[#parts + 1] = string.format('s%d=%d', k, st:count()) end
    for k, res in ipairs(E.res) do
      parts[#parts + 1] = string.format('r%d=%d/%d', k, res:in_use(), res:queued())
    end
    for k, ev in ipairs(E.ev) do
      parts[#parts + 1] = string.format('ev%d=%s%s%s', k, b(ev:triggered()), b(ev:processed()),
        ev:triggered() and b(ev:ok()) or '-')
    end
    for j = 1, nextpid do
      local p = E.procs[j]
      parts[#parts + 1] = string.format('p%d=%s', j, p and (b(p:alive()) .. b(p:processed())) or '-')
    end
    for k, c in ipairs(E.c) do
      parts[#parts + 1] = string.format('c%d=%s/%d/%d', k, fmt(c:level()), c:getters(), c:putters())
    end
    for k, ps in ipairs(E.ps) do parts[#parts + 1] = string.format('ps%d=%d', k, ps:count()) end
    for k, fs in ipairs(E.fs) do parts[#parts + 1] = string.format('fs%d=%d/%d', k, fs:count(), fs:getters()) end
    for k, pr in ipairs(E.pr) do
      parts[#parts + 1] = string.format('pr%d=%d/%d', k, pr:in_use(), pr:queued())
    end
    return table.concat(parts, ' ')
  end

  -- initial processes, then the phases (all generated before anything runs)
  local initial = {}
  for i = 1, r.range(3, 8) do initial[i] = gen_proc(G, 0) end
  local phases = {}
  local nph = r.range(2, 8)
  while #phases < nph do
    local kind = r.weighted(PHASES)
    local fn, t = kind.gen(G)
    if fn then phases[#phases + 1] = {fn = fn, text = t} end
  end
  -- all specs are made: describe them
  for pid = 1, nextpid do desc[#desc + 1] = G.specs[pid].text end
  local ptxt = {}
  for i, sp in ipairs(initial) do ptxt[i] = sp.name end
  desc[#desc + 1] = 'main: spawn ' .. table.concat(ptxt, ',')
  ptxt = {}
  for i, ph in ipairs(phases) do ptxt[i] = ph.text end
  desc[#desc + 1] = 'main: ' .. table.concat(ptxt, '; ') ..
    '; succeed pending events; run() until it returns (<= 4 times)'

  settle(E, true)
  for _, sp in ipairs(initial) do E.spawn(sp) end
  for _, ph in ipairs(phases) do ph.fn(E) end
  -- finally: succeed every event still pending and run to the end
  for k, ev in ipairs(E.ev) do
    if not ev:triggered() then ev:succeed(900 + k) end
  end
  for _ = 1, 4 do
    if do_run(E) ~= 'crash' then break end
  end
  ML(E, 'final state %s', E.state())
  return table.concat(desc, '\n'), s
end

---------------------------------------------------------------------------
-- driver
---------------------------------------------------------------------------
local args = {...}
local first = math.tointeger(tonumber(args[1] or '1'))
local count = math.tointeger(tonumber(args[2] or '100'))
local mode
for i = 3, #args do
  if args[i] ~= 'check' then
    mode = args[i]
  end
end
if not first or not count or count < 0 then
  io.stderr:write('usage: kernbench -q random_models.lua SEED COUNT [check|scan|show|desc|kb|model]\n')
  os.exit(2)
end
local MODEL = dofile(MODEL_PATH)

local function run_one(simmod, seed)
  local out = {}
  local ok, desc, s = pcall(build, simmod, seed, function(line) out[#out + 1] = line end)
  if not ok then
    out[#out + 1] = 'BUILD ERROR: ' .. msg(desc)
    return out, nil, nil, false
  end
  if s.close then s:close() end
  for _, line in ipairs(out) do -- an error in this script, raised inside a process
    if line:find('random_models.lua:%d+:') then return out, desc, s, false end
  end
  return out, desc, s, true
end

local function dump(title, lines, from, to)
  print(title)
  for i = math.max(1, from), math.min(#lines, to) do
    print(string.format('  %4d  %s', i, lines[i]))
  end
end


local total_lines, total_events, differ = 0, 0, 0
for seed = first, first + count - 1 do
  if mode == 'desc' then
    local _, desc = pcall(build, MODEL, seed, function() end)
    print(string.format('== seed %d\n%s', seed, desc))
    goto next_seed
  end
  do
    local kb_log, desc, _, kb_ok = run_one(KB_SIM, seed)
    local m_log, _, ms, m_ok = run_one(MODEL, seed)
    if mode == 'kb' or mode == 'model' then
      for _, l in ipairs(mode == 'kb' and kb_log or m_log) do print(l) end
      goto next_seed
    end
    if mode == 'show' then
      print(string.format('== seed %d\n%s', seed, desc or '?'))
      dump('-- kernbench', kb_log, 1, #kb_log)
      dump('-- simpy_model', m_log, 1, #m_log)
    end
    local diff
    for i = 1, math.max(#kb_log, #m_log) do
      if kb_log[i] ~= m_log[i] then diff = i; break end
    end
    if diff or not kb_ok or not m_ok then
      diff = diff or #kb_log
      differ = differ + 1
      print(string.format('random models: seed %d differs at line %d%s', seed, diff,
        (kb_ok and m_ok) and '' or ' (a build raised an error)'))
      if mode ~= 'scan' and mode ~= 'show' then
        dump('-- kernbench', kb_log, diff - 8, diff + 3)
        dump('-- simpy_model', m_log, diff - 8, diff + 3)
        print('-- model:')
        print(desc)
        print(string.format('reproduce: kernbench -q %s %d 1 show', script, seed))
        os.exit(1)
      end
    end
    total_lines = total_lines + #kb_log
    total_events = total_events + (ms and ms._eid or 0)
  end
  ::next_seed::
end
if differ > 0 then
  print(string.format('random models: %d seeds, %d differ', count, differ))
  os.exit(1)
end
if mode == nil or mode == 'show' or mode == 'scan' then
  print(string.format('random models: %d seeds, %d events-ish (%d log lines), all identical',
    count, total_events, total_lines))
end
