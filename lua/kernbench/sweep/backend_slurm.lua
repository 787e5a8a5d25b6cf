--- `kernbench sweep --backend slurm`: a SLURM job array, one array task per
-- sweep task (the coordinator groups `--points-per-task K` points into a
-- task). docs/sweeps.md "### slurm".
--
-- OUT/slurm/tasks.txt holds one task's shell line per line and
-- OUT/slurm/sweep.sbatch the job script: array task i runs line i + 1
-- (plus an offset when the array is split to fit the cluster's
-- MaxArraySize). The script is submitted with `sbatch --parsable`; each
-- submission is a line of OUT/slurm/jobs.txt ("JOBID TASKS OFFSET TIME").
-- The coordinator then polls every second: a task whose points all have
-- their OUT/points/ID.exit is reported; a task that left `squeue` without
-- them is reported failed with the state `sacct` (or, without accounting,
-- `scontrol show job`) gives. The job runs on if the coordinator stops:
-- `--resume` follows a job of jobs.txt still pending or running, then
-- submits only the tasks still missing.
local pool = require "kernbench.procpool"
local R = require "kernbench.sweep.remote"

local M = {}

local WHO = "sweep --backend slurm"
local POLL_S = 1.0
local UNREACHABLE_S = 60 -- squeue failing this long is an error
local LATE_FILES_S = 30  -- a task COMPLETED without its files: how long to wait for them (shared file systems)

local function fail(fmt, ...) error(WHO .. ": " .. fmt:format(...), 0) end

local function unreachable(out)
  return out:find("Unable to contact slurm controller", 1, true) or out:find("Connection refused", 1, true)
      or out:find("Zero Bytes were transmitted", 1, true) or out:find("resolve_ctls_from_dns_srv", 1, true)
      or out:find("configuration source", 1, true)
end

local function refuse_newline(what, s)
  if s:find("[\n\r]") then fail("%s holds a newline: %q", what, s) end
end

--- The #SBATCH line of a --slurm-opt: "--time=10" and "time=10" alike.
local function sbatch_opt(o)
  refuse_newline("--slurm-opt", o)
  if o:sub(1, 1) ~= "-" then o = "--" .. o end
  return "#SBATCH " .. o
end

--- The job script for ntasks array tasks (the first chunk's array when the
-- array is split: later chunks override --array on sbatch's command line).
local function script(ctx, ntasks, tasks_file, max_running)
  local out_dir = ctx.out .. "/slurm"
  local name = ctx.out:match("([^/]+)/*$") or "sweep"
  local l = {
    "#!/bin/sh",
    "# kernbench sweep: a SLURM job array; array task i runs the points of line",
    "# KB_SWEEP_OFFSET + i + 1 of tasks.txt one after another, each writing its",
    "# exit code to points/ID.exit and its results to points/ID.json in the",
    "# sweep's output directory (shared by the coordinator and the nodes).",
    "#SBATCH --job-name=" .. ("kernbench-" .. name):gsub("[^%w%-%._]", "_"),
    ("#SBATCH --array=0-%d%s"):format(ntasks - 1, max_running and ("%" .. max_running) or ""),
  }
  if out_dir:find("[%s\"'\\]") then
    l[#l + 1] = "# --output is on sbatch's command line: the directory's name has a space or a quote"
  else
    l[#l + 1] = "#SBATCH --output=" .. out_dir .. "/%A_%a.out"
  end
  for _, o in ipairs(R.list_opt(ctx.opts or {}, "slurm_opt", "slurm_opts")) do l[#l + 1] = sbatch_opt(o) end
  l[#l + 1] = ("line=$(( ${KB_SWEEP_OFFSET:-0} + SLURM_ARRAY_TASK_ID + 1 ))")
  l[#l + 1] = ("task=$(sed -n \"${line}p\" %s)"):format(R.quote(tasks_file))
  l[#l + 1] = "if [ -z \"$task\" ]; then"
  l[#l + 1] = ("  echo \"kernbench sweep: no line $line in %s\" >&2"):format(tasks_file:gsub("[\"$`\\]", "\\%0"))
  l[#l + 1] = "  exit 1"
  l[#l + 1] = "fi"
  l[#l + 1] = "exec /bin/sh -c \"$task\""
  return table.concat(l, "\n") .. "\n"
end

--- The cluster's MaxArraySize (array indices run from 0 to it - 1).
local function max_array_size()
  local out, code = R.capture("scontrol show config")
  if code == 0 then
    local n = tonumber(out:match("MaxArraySize%s*=%s*(%d+)"))
    if n and n > 0 then return n end
  end
  return 1001 -- SLURM's default
end

--- { [jobid] = { [array index] = state } } of the jobs' array tasks that
-- squeue lists (pending, running, completing...), or nil and the error.
local function squeue(jobs)
  local ids = {}
  for j in pairs(jobs) do ids[#ids + 1] = j end
  if #ids == 0 then return {} end
  table.sort(ids)
  local out, code = R.capture(("squeue -h -r -j %s -o '%%F %%K %%T'"):format(table.concat(ids, ",")))
  if code ~= 0 then
    if out:find("Invalid job id", 1, true) then return {} end -- all gone (and purged)
    return nil, out
  end
  local active = {}
  for jid, k, state in out:gmatch("(%d+) (%d+) (%S+)") do
    active[jid] = active[jid] or {}
    active[jid][tonumber(k)] = state
  end
  return active
end

--- Parses "3", "4-5" or "4-9%2" (scontrol's ArrayTaskId) into a list.
local function index_range(s)
  local a, b = s:match("^(%d+)%-(%d+)")
  if a then
    local t = {}
    for i = tonumber(a), tonumber(b) do t[#t + 1] = i end
    return t
  end
  local i = tonumber(s:match("^%d+"))
  return i and { i } or {}
end

--- { [array index] = "STATE (exit a:b)" } of a job's ended tasks, from
-- sacct, else (no accounting) scontrol show job (which forgets a job
-- MinJobAge after it ends).
local function final_states(jid)
  local states = {}
  local out, code = R.capture(("sacct -n -P -X -j %s -o JobID,State,ExitCode"):format(jid))
  if code == 0 and out ~= "" then
    for k, state, ec in out:gmatch("%d+_(%d+)|([^|\n]+)|([^|\n]*)") do
      states[tonumber(k)] = ("%s (exit code %s)"):format(state, ec)
    end
    return states
  end
  out, code = R.capture(("scontrol -o show job %s"):format(jid))
  if code ~= 0 then return states end
  for line in out:gmatch("[^\n]+") do
    local k = line:match("ArrayTaskId=(%S+)")
    local state = line:match("JobState=(%S+)")
    local ec = line:match(" ExitCode=(%S+)")
    if k and state then
      for _, i in ipairs(index_range(k)) do states[i] = ("%s (exit code %s)"):format(state, ec or "?") end
    end
  end
  return states
end

local function read_jobs(path)
  local jobs = {}
  for line in ((R.read(path) or "") .. "\n"):gmatch("([^\n]*)\n") do
    local jid, n, off = line:match("^(%d+) (%d+) (%d+)")
    if jid then jobs[#jobs + 1] = { id = jid, n = tonumber(n), offset = tonumber(off) } end
  end
  return jobs
end

--- Follows the jobs until none of their tasks is in squeue. tasks_of[jid]
-- maps array indices to ctx tasks (nil for a job of an earlier run: its
-- tasks are known only by their files).
local function follow(ctx, rep, jobs, tasks_of, pending)
  local failing_since
  local ended_at = {} -- [task] = when its array task left squeue without its files
  while true do
    local active, err = squeue(jobs)
    if not active then
      failing_since = failing_since or os.time()
      if os.time() - failing_since > UNREACHABLE_S then
        local ids = {}
        for j in pairs(jobs) do ids[#ids + 1] = j end
        fail("squeue has failed for %d s; the SLURM controller is unreachable (SLURM_CONF=%s): %s\n" ..
             "the job(s) %s run on; `kernbench sweep --resume` follows them once it is back",
             UNREACHABLE_S, os.getenv("SLURM_CONF") or "default", err, table.concat(ids, ","))
      end
    else
      failing_since = nil
      -- files first: a task that wrote them is done whatever its state
      for _, t in ipairs(pending) do
        if not rep.done(t) and R.task_files_done(ctx.out, t) then rep.report(t, nil) end
      end
      local any = false
      for jid in pairs(jobs) do
        local act = active[jid]
        if act and next(act) then any = true end
        local map = tasks_of[jid]
        if map then
          local states
          for k, t in pairs(map) do
            if not rep.done(t) and not (act and act[k]) then
              -- left squeue without all its exit files
              states = states or final_states(jid)
              local st = states[k] or "ended (its state is no longer known to sacct or scontrol)"
              ended_at[t] = ended_at[t] or os.time()
              if not st:match("^COMPLETED") or os.time() - ended_at[t] >= LATE_FILES_S then
                rep.report(t, nil, ("SLURM task %s_%d %s without the exit files of all its points; see %s/slurm/%s_%d.out")
                  :format(jid, k, st, ctx.out, jid, k))
              else
                any = true -- COMPLETED: its files may still be on their way
              end
            end
          end
        end
      end
      if not any then return end
    end
    ctx.progress()
    pool.sleep(POLL_S)
  end
end

function M.run(ctx)
  local dir = ctx.out .. "/slurm"
  local tasks_file = dir .. "/tasks.txt"
  local script_file = dir .. "/sweep.sbatch"
  local jobs_file = dir .. "/jobs.txt"
  local opts = ctx.opts or {}
  local max_running = R.int_opt(opts, "max_running", "--max-running", WHO)
  local rep = R.reporter(ctx)

  if ctx.dry_run then
    R.tasks_text(ctx.tasks, WHO) -- the same checks
    io.write(("# %s: would write %d task line(s) to %s and submit %s:\n"):format(WHO, #ctx.tasks, tasks_file,
      script_file))
    io.write(script(ctx, math.max(#ctx.tasks, 1), tasks_file, max_running))
    return
  end
  if not R.have("sbatch") then
    fail("sbatch is not installed: the slurm backend needs SLURM's client commands (Debian package `slurm-wlm`) " ..
         "and a cluster to submit to")
  end
  for _, prog in ipairs({ "squeue", "scontrol" }) do
    if not R.have(prog) then fail("%s is not installed (Debian package `slurm-wlm`)", prog) end
  end
  R.mkdir(dir)

  -- jobs of earlier runs still pending or running: follow them first
  local earlier, ids = {}, {}
  for _, j in ipairs(read_jobs(jobs_file)) do earlier[j.id] = true; ids[#ids + 1] = j.id end
  if next(earlier) then
    local active, err = squeue(earlier)
    if not active then fail("cannot query SLURM (squeue): %s", err) end
    local live = {}
    for jid in pairs(active) do live[jid] = true end
    if next(live) then
      local l = {}
      for jid in pairs(live) do l[#l + 1] = jid end
      table.sort(l)
      if not ctx.resume then
        fail("SLURM job(s) %s of an earlier run of this sweep are still pending or running in %s: --resume " ..
             "follows them, or `scancel %s` cancels them", table.concat(l, ","), ctx.out, table.concat(l, " "))
      end
      io.stderr:write(("%s: following SLURM job(s) %s of an earlier run\n"):format(WHO, table.concat(l, ",")))
      follow(ctx, rep, live, {}, ctx.tasks)
    end
  end

  local todo = {}
  for _, t in ipairs(ctx.tasks) do
    if not rep.done(t) then
      if R.task_files_done(ctx.out, t) then rep.report(t, nil) else todo[#todo + 1] = t end
    end
  end
  if #todo == 0 then return end

  R.write(tasks_file, R.tasks_text(todo, WHO))
  local chunk = max_array_size()
  R.write(script_file, script(ctx, math.min(#todo, chunk), tasks_file, max_running))
  local jobs, tasks_of = {}, {}
  for offset = 0, #todo - 1, chunk do
    local n = math.min(chunk, #todo - offset)
    local argv = { "sbatch", "--parsable" }
    if offset > 0 then
      argv[#argv + 1] = ("--array=0-%d%s"):format(n - 1, max_running and ("%" .. max_running) or "")
    end
    argv[#argv + 1] = "--export=ALL,KB_SWEEP_OFFSET=" .. offset
    if dir:find("[%s\"'\\]") then argv[#argv + 1] = "--output=" .. dir .. "/%A_%a.out" end
    argv[#argv + 1] = script_file
    local out, code = R.capture(R.join(argv))
    local jid = code == 0 and out:match("^(%d+)")
    if not jid then
      if unreachable(out) then
        fail("sbatch cannot reach the SLURM controller (SLURM_CONF=%s): %s", os.getenv("SLURM_CONF") or "default", out)
      end
      fail("sbatch refused the job array (exit status %d): %s\n(script %s)", code, out, script_file)
    end
    local f = assert(io.open(jobs_file, "a"))
    f:write(("%s %d %d %d\n"):format(jid, n, offset, os.time()))
    f:close()
    jobs[jid] = true
    local map = {}
    for k = 0, n - 1 do map[k] = todo[offset + k + 1] end
    tasks_of[jid] = map
    io.stderr:write(("%s: submitted SLURM job %s (%d array task(s)); it runs on if this command stops: " ..
      "--resume follows it, `scancel %s` cancels it\n"):format(WHO, jid, n, jid))
  end
  follow(ctx, rep, jobs, tasks_of, todo)
end

return M
