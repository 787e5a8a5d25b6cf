--- torch.multiprocessing.spawn (spec §3.3, docs/ccl.md): one coroutine per
-- rank inside the one simulation, rank = SIP.
--
--   torch.multiprocessing.spawn(fn, args, nprocs)   -- fn(rank, table.unpack(args))
--
-- Workers run in turn until each has finished or yielded on something that
-- needs simulated time (torch.wait, a launch, an all-reduce, a host read,
-- torch.synchronize: lua/kernbench/torch/runtime.lua turns these into
-- yields inside a worker). Then the scheduler drains: it runs the
-- simulation until every yielded wait is done, and resumes the workers. All
-- ranks advance a round at a time, which collectives between SIPs need: a
-- rank's all-reduce launch is in flight before any rank waits on its own.
--
-- A drain that stops because nothing more can happen (some waits done, the
-- others blocked on work a waiting rank has yet to start) resumes the ranks
-- whose waits are done; a drain where none is done is a deadlock, reported
-- with every rank and what it waits for. An error in a rank stops every
-- rank; spawn raises one error naming each failing rank with its traceback.
local M = {}

-- The event a yielded wait stands for.
local function event_of(req)
  local h = req.wait
  if type(h) == "table" and h.finished then return h.finished end
  return h
end

local function done(req)
  if req.synchronize then return false end
  local ev = event_of(req)
  return ev:processed()
end

-- Runs the simulation until nothing more can happen: true when every
-- request is done, else false and the run's deadlock message (some ranks
-- wait for work another rank has yet to start). No helper process waits
-- on the requests, so a drain that ends in a deadlock leaves nothing behind
-- that could stop a later run.
local function drain(s, reqs)
  local ok, err = pcall(s.run, s)
  if not ok and not tostring(err):find("deadlock", 1, true) then error(err, 0) end
  for _, r in pairs(reqs) do
    if r.synchronize and not ok then return false, err end
    if not r.synchronize and not event_of(r):processed() then return false, err end
  end
  return true
end

local function fail(errors)
  local ranks, lines = {}, {}
  for r in pairs(errors) do ranks[#ranks + 1] = r end
  table.sort(ranks)
  for _, r in ipairs(ranks) do lines[#lines + 1] = ("rank %d raised %s"):format(r, errors[r]) end
  local list = {}
  for i, r in ipairs(ranks) do list[i] = tostring(r) end
  error(setmetatable({ message = ("spawn failed on ranks [%s]: %s"):format(table.concat(list, ", "),
    table.concat(lines, "\n")), errors = errors, ranks = ranks },
    { __tostring = function(e) return e.message end }), 0)
end

--- torch.multiprocessing.spawn(fn, args, nprocs[, join]): runs
-- fn(rank, table.unpack(args)) for ranks 0 .. nprocs - 1 and returns when
-- all have returned.
function M.spawn(rt, fn, args, nprocs, join)
  local P = rt.P
  if type(fn) ~= "function" then
    error(("torch.multiprocessing.spawn: fn must be a function(rank, ...), got %s"):format(type(fn)), 2)
  end
  if args ~= nil and type(args) ~= "table" then
    error(("torch.multiprocessing.spawn: args must be a table (the arguments after the rank), got %s"):format(
      type(args)), 2)
  end
  if math.type(nprocs) ~= "integer" or nprocs < 1 or nprocs > P.sips then
    error(("torch.multiprocessing.spawn: nprocs must be 1 .. %d (a rank is a SIP of the topology), got %s"):format(
      P.sips, tostring(nprocs)), 2)
  end
  if join == false then
    error("torch.multiprocessing.spawn: join = false is not modelled: spawn returns when every rank has", 2)
  end
  if rt:current_rank() then error("torch.multiprocessing.spawn: called from inside a rank", 2) end
  args = args or {}
  local nargs = args.n or #args
  local cos, alive, reqs, errors = {}, {}, {}, {}
  for r = 0, nprocs - 1 do
    local co = coroutine.create(function() return fn(r, table.unpack(args, 1, nargs)) end)
    cos[r], alive[r] = co, true
    rt:add_worker(co, r)
  end
  local runnable = {}
  for r = 0, nprocs - 1 do runnable[r] = true end
  while next(alive) do
    for r = 0, nprocs - 1 do
      if alive[r] and runnable[r] then
        local co = cos[r]
        local ok, req = coroutine.resume(co)
        if not ok then
          errors[r] = debug.traceback(co, tostring(type(req) == "table" and req.message or req))
          alive[r] = nil
        elseif coroutine.status(co) == "dead" then
          alive[r], reqs[r] = nil, nil
        elseif type(req) ~= "table" or not (req.wait or req.synchronize) then
          errors[r] = debug.traceback(co, "a rank may yield only through torch (wait, launch, all_reduce, "
            .. "host reads); it called coroutine.yield itself")
          alive[r] = nil
        else
          reqs[r] = req
        end
        runnable[r] = false
      end
    end
    if next(errors) then
      for r in pairs(alive) do rt:remove_worker(cos[r]) end
      fail(errors)
    end
    if not next(alive) then break end
    local all, why = drain(rt.s, reqs)
    local progressed = false
    for r in pairs(alive) do
      if all or done(reqs[r]) then
        runnable[r], reqs[r], progressed = true, nil, true
      end
    end
    if not progressed then
      local lines = {}
      for r = 0, nprocs - 1 do
        if alive[r] then lines[#lines + 1] = ("  rank %d waits for %s"):format(r,
          reqs[r].synchronize and "torch.synchronize()" or tostring(event_of(reqs[r]))) end
      end
      error(("torch.multiprocessing.spawn: no rank can go on:\n%s\n%s"):format(table.concat(lines, "\n"),
        tostring(why)), 2)
    end
  end
  for r = 0, nprocs - 1 do rt:remove_worker(cos[r]) end
end

--- Adds torch.multiprocessing to runtime rt (lua/kernbench/torch/runtime.lua):
-- a rank is a worker coroutine of rt (rt:add_worker), whose waits yield here.
function M.attach(rt)
  rt:export("multiprocessing", { current_rank = rt:bind(rt.current_rank), spawn = rt:bind(M.spawn) })
end

return M
