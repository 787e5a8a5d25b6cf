--- `kernbench sweep --backend parallel`: GNU parallel (Debian `parallel`)
-- runs the tasks' shell lines, `-j N` at once, on the hosts of `--sshlogin`
-- (`:` is this machine; others must share OUT and CWD at the same paths).
-- docs/sweeps.md "### parallel".
--
-- OUT/parallel/tasks.txt holds one task's shell line per line; parallel runs
-- each through /bin/sh (PARALLEL_SHELL) and records it in its joblog
-- (OUT/parallel/joblog, or --joblog F). parallel runs as a child of the
-- coordinator in a process group of its own (kernbench.procpool's spawn),
-- its pid and start time in OUT/parallel/pid; the coordinator polls the
-- joblog and calls on_done as its lines appear. A stop of the coordinator
-- (Ctrl-C, SIGTERM, --timeout) terminates parallel and its jobs; a
-- coordinator killed outright leaves parallel running, and `--resume`
-- follows it until it ends (the points it finishes are journaled) before
-- running what is still missing.
local pool = require "kernbench.procpool"
local R = require "kernbench.sweep.remote"

local M = {}

local WHO = "sweep --backend parallel"
local POLL_S = 0.2

local function fail(fmt, ...) error(WHO .. ": " .. fmt:format(...), 0) end

--- The parallel command line (argv) for the tasks file.
local function command(ctx, joblog, tasks_file)
  local argv = { "env", "PARALLEL_SHELL=/bin/sh", "parallel", "--jobs", tostring(ctx.jobs or pool.cpus()) }
  for _, s in ipairs(R.list_opt(ctx.opts or {}, "sshlogin")) do
    argv[#argv + 1] = "--sshlogin"
    argv[#argv + 1] = s
  end
  argv[#argv + 1] = "--joblog"
  argv[#argv + 1] = joblog
  for _, o in ipairs(R.list_opt(ctx.opts or {}, "parallel_opt", "parallel_opts")) do argv[#argv + 1] = o end
  argv[#argv + 1] = "::::"
  argv[#argv + 1] = tasks_file
  return argv
end

--- Reads the joblog's complete lines after byte offset; calls fn(seq,
-- host, exitval, signal) for each; returns the new offset.
local function read_joblog(path, offset, fn)
  local text = R.read(path)
  if not text or #text <= offset then return offset end
  local pos = offset + 1
  while true do
    local nl = text:find("\n", pos, true)
    if not nl then break end
    local line = text:sub(pos, nl - 1)
    pos = nl + 1
    local seq, host, _, _, _, _, exitval, sig = line:match("^(%d+)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t(%-?%d+)\t(%d+)\t")
    if seq then fn(tonumber(seq), host, tonumber(exitval), tonumber(sig)) end
  end
  return pos - 1
end

--- The parallel recorded in OUT/parallel/pid if it still runs (a coordinator
-- killed outright left it), else nil.
local function running_parallel(pidfile)
  local s = R.read(pidfile)
  local pid, start = (s or ""):match("^(%d+) (%d+)")
  pid = tonumber(pid)
  if not pid or R.start_time(pid) ~= start then return nil end
  return pid
end

--- Follows a parallel left running by an earlier coordinator: reports the
-- tasks whose points all have their exit files until it has ended.
local function follow(ctx, rep, pid)
  io.stderr:write(("%s: following GNU parallel (pid %d) left running by an earlier run\n"):format(WHO, pid))
  local start = R.start_time(pid)
  while true do
    local alive = R.start_time(pid) == start
    for _, t in ipairs(ctx.tasks) do
      if not rep.done(t) and R.task_files_done(ctx.out, t) then rep.report(t, nil) end
    end
    ctx.progress()
    if not alive or rep.count() == #ctx.tasks then return end
    R.sleep(POLL_S)
  end
end

--- What GNU parallel's exit status means (man parallel, EXIT STATUS).
local function explain(r, stderr_file)
  if r.ok then return nil end
  local tail = (R.read(stderr_file) or ""):gsub("%s+$", "")
  if #tail > 2000 then tail = "..." .. tail:sub(-2000) end
  if tail ~= "" then tail = ":\n" .. tail end
  if r.signal then return ("GNU parallel was killed by signal %d%s"):format(r.signal, tail) end
  if r.status >= 1 and r.status <= 101 then return nil end -- that many jobs failed: in the joblog
  if r.status == 127 then return "cannot run GNU parallel (Debian package `parallel`)" .. tail end
  return ("GNU parallel failed (exit status %d)%s"):format(r.status, tail)
end

function M.run(ctx)
  local dir = ctx.out .. "/parallel"
  local tasks_file = dir .. "/tasks.txt"
  local joblog = R.absolute((ctx.opts or {}).joblog or dir .. "/joblog", ctx.cwd)
  local rep = R.reporter(ctx)

  if ctx.dry_run then
    local argv = command(ctx, joblog, tasks_file)
    io.write(("# %s: would write %d task line(s) to %s and run:\n"):format(WHO, #ctx.tasks, tasks_file))
    io.write(R.join(argv), "\n")
    for i = 1, math.min(3, #ctx.tasks) do io.write("# ", ctx.tasks[i].shell, "\n") end
    if #ctx.tasks > 3 then io.write(("# ... (%d more)\n"):format(#ctx.tasks - 3)) end
    return
  end
  if not R.have("parallel") then
    fail("GNU parallel is not installed (Debian package `parallel`: apt-get install parallel)")
  end
  R.mkdir(dir)
  local pidfile = dir .. "/pid"
  local old = running_parallel(pidfile)
  if old then
    if not ctx.resume then
      fail("GNU parallel (pid %d) of an earlier run of this sweep is still running in %s: " ..
           "--resume follows it, or stop it with `kill -TERM -%d`", old, ctx.out, old)
    end
    follow(ctx, rep, old)
  end

  local todo = {}
  for _, t in ipairs(ctx.tasks) do
    if not rep.done(t) then todo[#todo + 1] = t end
  end
  if #todo == 0 then return end
  R.write(tasks_file, R.tasks_text(todo, WHO))
  os.remove(joblog) -- this run's joblog: line k is tasks.txt's line k
  local argv = command(ctx, joblog, tasks_file)
  local stderr_file = dir .. "/stderr"
  local pid, guard = pool.spawn(argv, { stdout = dir .. "/stdout", stderr = stderr_file, stdin = "/dev/null",
                                        group = true })
  -- an error or a stop before parallel has ended terminates it and its jobs
  local _ <close> = guard
  R.write(pidfile, ("%d %s\n"):format(pid, R.start_time(pid) or "0"))

  local offset, r = 0, nil
  local function on_line(seq, host, exitval, sig)
    local t = todo[seq]
    if not t or rep.done(t) then return end
    if sig ~= 0 then
      rep.report(t, 128 + sig, ("GNU parallel: the task was killed by signal %d on %s"):format(sig, host))
    elseif exitval ~= 0 then
      rep.report(t, exitval, ("GNU parallel: the task's shell line exited with %d on %s"):format(exitval, host))
    else
      rep.report(t, 0)
    end
  end
  repeat
    r = pool.wait(pid, POLL_S)
    offset = read_joblog(joblog, offset, on_line)
    ctx.progress()
  until r
  os.remove(pidfile)
  local why = explain(r, stderr_file)
  -- a task parallel never recorded is reported if its files are all there;
  -- else it stays unreported (missing: a resume runs it), never a failure
  local unrun = 0
  for _, t in ipairs(todo) do
    if not rep.done(t) then
      if R.task_files_done(ctx.out, t) then rep.report(t, nil) else unrun = unrun + 1 end
    end
  end
  if why then fail("%s (joblog %s, output %s/stdout)", why, joblog, dir) end
  if unrun > 0 then
    fail("GNU parallel ended (exit status %d) without running %d task(s) (joblog %s); " ..
         "--resume runs them", r.status or -1, unrun, joblog)
  end
end

return M
