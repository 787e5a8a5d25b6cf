--- `kernbench sweep FILE`: the coordinator (docs/sweeps.md). Loads and
-- expands the sweep file (kernbench.sweep.file), reads the journal
-- (kernbench.sweep.journal), adopts points that finished unjournaled, hands
-- the points to run to a backend (kernbench.sweep.backend_NAME) as tasks,
-- journals each point as its task ends, then writes results.csv,
-- results.json and the plots (kernbench.sweep.outputs).
local sfile = require "kernbench.sweep.file"
local journal = require "kernbench.sweep.journal"
local json = require "kernbench.json"

local remote = require "kernbench.sweep.remote"
local M = {}

--- Wall-clock seconds (monotonic enough for estimates).
function M.wall()
  return require("kernbench.progress_c").wall()
end

local HELP = [[
usage: kernbench [-q] [-j N] sweep FILE [--out DIR] [--resume] [--retry-failed] [--dry-run]
                 [--backend local|parallel|slurm] [backend options]

Runs the points of the sweep file FILE (sweeps/*.lua; docs/sweeps.md), each
as a separate kernbench process, journals every finished point in
DIR/journal.jsonl and writes DIR/results.csv, DIR/results.json and the
file's plots.

options:
  --out DIR        the output directory (default: out/sweep-NAME; created)
  --resume         continue the sweep in DIR: skip the points in its journal,
                   adopt the points that finished without being journaled
  --retry-failed   run again the points journaled as failed (implies --resume)
  --dry-run        list the points (id and parameters) and run nothing
  --backend B      local (default: a process pool), parallel (GNU parallel)
                   or slurm (an sbatch job array)
  -j N, --jobs N   points at once (default: the core count; also before sweep)
  --points-per-task K  points per backend task (default 1)
  --sshlogin X, --joblog F, --parallel-opt X   for --backend parallel
  --slurm-opt X, --max-running M               for --backend slurm
  -h, --help       print this help

exit status: 0 every point ok, 1 a point failed or is missing (the results
are written), 2 usage error (a bad option or sweep file)
]]

-- A usage error of `kernbench sweep`: raised, reported by the command line
-- (kernbench.usage: one line, the hint, exit status 2).
local function usage_error(msg)
  require("kernbench.usage").raise(msg, "sweep", "try 'kernbench sweep --help'")
end

local LIST_OPTS = { ["--sshlogin"] = "sshlogin", ["--parallel-opt"] = "parallel_opt", ["--slurm-opt"] = "slurm_opt" }
local STRING_OPTS = { ["--joblog"] = "joblog", ["--points-per-task"] = "points_per_task",
                      ["--max-running"] = "max_running", ["--out"] = "out", ["--backend"] = "backend" }

--- Parses the arguments after `sweep`; raises {usage = message}.
function M.parse(args)
  local o = { backend_opts = {} }
  local i = 1
  local function bad(fmt, ...) error({ usage = fmt:format(...) }) end
  while i <= #args do
    local a = args[i]
    local key, inline = a:match("^(%-%-[%w-]+)=(.*)$")
    if key then a = key end
    local function value()
      if inline then return inline end
      i = i + 1
      if args[i] == nil then bad("option '%s' needs an argument", a) end
      return args[i]
    end
    if a == "-h" or a == "--help" then o.help = true
    elseif a == "--resume" and not inline then o.resume = true
    elseif a == "--retry-failed" and not inline then o.retry_failed = true
    elseif a == "--dry-run" and not inline then o.dry_run = true
    elseif a == "-j" or a == "--jobs" or a:match("^%-j%d+$") then
      local v = a:match("^%-j(%d+)$") or value()
      if o.jobs then bad("option '-j' given twice") end
      o.jobs = math.tointeger(tonumber(v))
      if not o.jobs or not tostring(v):match("^%d+$") or o.jobs < 1 or o.jobs > 1024 then
        bad("-j %s: expected a whole number from 1 to 1024", tostring(v))
      end
    elseif LIST_OPTS[a] then
      local k = LIST_OPTS[a]
      o.backend_opts[k] = o.backend_opts[k] or {}
      table.insert(o.backend_opts[k], value())
    elseif STRING_OPTS[a] then
      local k = STRING_OPTS[a]
      local v = value()
      local target = (k == "out" or k == "backend") and o or o.backend_opts
      if target[k] ~= nil then bad("option '%s' given twice", a) end
      target[k] = v
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      bad("unknown option '%s'", args[i])
    else
      if o.file then bad("unexpected argument '%s' (one sweep file)", a) end
      o.file = a
    end
    i = i + 1
  end
  local ppt = o.backend_opts.points_per_task
  if ppt and not (ppt:match("^%d+$") and tonumber(ppt) >= 1) then
    bad("--points-per-task %s: expected a whole number >= 1", ppt)
  end
  local mr = o.backend_opts.max_running
  if mr and not (mr:match("^%d+$") and tonumber(mr) >= 1) then
    bad("--max-running %s: expected a whole number >= 1", mr)
  end
  o.backend = o.backend or "local"
  if not o.backend:match("^[%a_][%w_]*$") then bad("--backend %s: expected local, parallel or slurm", o.backend) end
  if o.retry_failed then o.resume = true end
  return o
end

local shell_quote = remote.quote -- POSIX sh
M.shell_quote = shell_quote

local read_file = remote.read -- nil when the file is not there

local function tail(text, nlines, nbytes)
  if not text or text == "" then return nil end
  if #text > nbytes then text = text:sub(-nbytes) end
  local lines = {}
  for l in text:gmatch("[^\n]+") do lines[#lines + 1] = l end
  return table.concat(lines, "\n", math.max(1, #lines - nlines + 1))
end

local function getcwd()
  local p = io.popen("pwd -P 2>/dev/null")
  local d = p and p:read("l")
  if p then p:close() end
  return d or os.getenv("PWD") or "."
end

local function absolute(path, cwd)
  if path:sub(1, 1) == "/" then return path end
  path = path:gsub("^%./", "")
  return (cwd .. "/" .. path):gsub("/+$", "")
end

-- The params object of a journal line: the point's axis values by column.
local function params_of(S, p)
  local t = {}
  for _, c in ipairs(S.columns) do t[c.name] = p.values[c.name] end
  return t
end

--- The journal entry of point p from its files in DIR: exit code from
-- points/ID.exit (else `code`), metrics from points/ID.json, the log's
-- tail as the error of a failed point.
function M.entry_of(S, dir, p, code, wall_s, why)
  local exit_text = read_file(("%s/points/%s.exit"):format(dir, p.id))
  local exit = exit_text and math.tointeger(tonumber(exit_text:match("^%s*(%-?%d+)%s*$") or ""))
  if exit == nil then exit = code end
  local doc_text = read_file(("%s/points/%s.json"):format(dir, p.id))
  local doc, doc_err
  if doc_text then
    local ok, v = pcall(json.decode, doc_text)
    if ok and type(v) == "table" then doc = v else doc_err = ok and "not an object" or tostring(v) end
  end
  if exit == nil and doc then exit = (doc.status == nil or doc.status == "ok") and 0 or 1 end
  local status, err = "ok", nil
  if exit ~= 0 then
    status = "failed"
    err = tail(read_file(("%s/logs/%s.log"):format(dir, p.id)), 12, 4000) or
      (exit == nil and (why or "no exit code was recorded") or ("exit status %d, nothing logged"):format(exit))
    if exit == nil and why then err = why .. "\n" .. err end
  elseif not doc then
    status = "failed"
    err = doc_err and ("points/%s.json: %s"):format(p.id, doc_err) or
      ("exit status 0 but no results file points/%s.json"):format(p.id)
  end
  local metrics = {}
  for i, m in ipairs(S.metrics) do
    local v = doc and sfile.extract(doc, m.parts)
    metrics[i] = { m.name, v }
  end
  return { id = p.id, params = params_of(S, p), status = status, exit_code = exit, error = err, metrics = metrics,
           wall_s = wall_s and math.floor(wall_s * 1000 + 0.5) / 1000 }
end

local function progress(k, n, failed, label)
  local txt = failed > 0 and ("%d failed"):format(failed) or label or ""
  if failed > 0 and label then txt = txt .. ", " .. label end
  pcall(kb.progress, k, n, txt)
end

local function dry_run_listing(S, by_id, dir)
  local names = {}
  for _, c in ipairs(S.columns) do names[#names + 1] = c.name end
  print(("sweep %s: %d point(s)%s; id, state, %s"):format(S.name, #S.points,
    S.probe and " of probe cases" or (" of bench " .. S.bench), table.concat(names, ", ")))
  for _, p in ipairs(S.points) do
    local e = by_id[p.id]
    local parts = {}
    for _, c in ipairs(S.columns) do
      local v = p.values[c.name]
      if v ~= nil then parts[#parts + 1] = c.name .. "=" .. sfile.text(v) end
    end
    print(("%s  %-7s %s"):format(p.id, e and e.status or "to-run", table.concat(parts, " ")))
  end
  print(("(dry run: nothing run; output directory %s)"):format(dir))
end

--- `kernbench sweep ...`: returns the exit status.
function M.main(args)
  local ok, o = pcall(M.parse, args or {})
  if not ok then
    if type(o) == "table" and o.usage then return usage_error(o.usage) end
    error(o, 0)
  end
  if o.help then
    io.write(HELP)
    return 0
  end
  if not o.file then return usage_error("which sweep file? (kernbench sweep FILE; sweeps/*.lua)") end
  if kb.jobs and o.jobs then return usage_error("-j given both before and after 'sweep'") end
  if #(kb.topology.default_overrides or {}) > 0 or kb.topology.default_path then
    return usage_error("-t/--topology and --set do not apply to a sweep: put them in the sweep file " ..
      "(topology =, set = {...}) or in its axes")
  end
  if kb.data_mode then
    return usage_error("--data and --verify-data do not apply to a sweep: put data = true or verify = true " ..
      "in the sweep file")
  end
  local bok, backend = pcall(require, "kernbench.sweep.backend_" .. o.backend)
  if not bok then
    if tostring(backend):find("module 'kernbench.sweep.backend_" .. o.backend .. "' not found", 1, true) then
      return usage_error(("--backend %s: not implemented (local%s)"):format(o.backend,
        ", parallel, slurm when installed"))
    end
    error(backend, 0)
  end
  -- a shipped sweep by name (allreduce, gemm_shapes.lua) when no such file
  local given = io.open(o.file, "r")
  if given then given:close() end
  if not given and not o.file:find("/", 1, true) and kb.lua_dir then
    local shipped = ("%s/sweeps/%s"):format(kb.lua_dir:gsub("/lua$", ""), o.file:gsub("%.lua$", "") .. ".lua")
    local f = io.open(shipped, "r")
    if f then
      f:close()
      o.file = shipped
    end
  end
  local lok, S = pcall(sfile.load, o.file)
  if not lok then
    if sfile.is_error(S) then usage_error(tostring(S)) end
    error(S, 0)
  end
  local pool = require "kernbench.procpool"
  local exe, why = pool.exe()
  if not exe then error("kernbench sweep: cannot find the kernbench executable: " .. tostring(why), 0) end
  local cwd = getcwd()
  local dir = absolute(o.out or ("out/sweep-" .. S.name), cwd)
  local jpath = dir .. "/journal.jsonl"
  local jobs = o.jobs or kb.jobs or pool.cpus()

  local jr, jexists = journal.read(jpath)
  if jexists and not o.resume and not o.dry_run then
    return usage_error(("%s exists (an earlier sweep in %s): pass --resume to continue it, " ..
      "or choose another --out"):format(jpath, dir))
  end
  for _, msg in ipairs(jr.problems) do io.stderr:write("kernbench sweep: ", msg, "\n") end

  -- what is done: the last journal line per id, for the points of this file
  local skip, adopted = {}, 0
  local by_id = jr.by_id
  local function finished(id)
    if not o.resume then return false end
    local e = by_id[id]
    return e and (e.status == "ok" or not o.retry_failed)
  end

  if o.dry_run then
    dry_run_listing(S, o.resume and by_id or {}, dir)
  else
    if not (os.execute(("mkdir -p %s %s"):format(shell_quote(dir .. "/points"), shell_quote(dir .. "/logs")))) then
      error(("kernbench sweep: cannot create %s"):format(dir), 0)
    end
    journal.repair(jpath, jr)
    if not jexists then
      local f, err = io.open(jpath, "a")
      if not f then error("kernbench sweep: " .. tostring(err), 0) end
      f:close()
    end
  end

  local total, done, failed = #S.points, 0, 0
  local to_run = {}
  for _, p in ipairs(S.points) do
    if finished(p.id) then
      skip[#skip + 1] = p
      done = done + 1
      if by_id[p.id].status == "failed" then failed = failed + 1 end
    elseif o.resume and not o.dry_run and not by_id[p.id] and
      (read_file(("%s/points/%s.exit"):format(dir, p.id)) or read_file(("%s/points/%s.json"):format(dir, p.id))) then
      -- finished, but the coordinator was stopped before journaling it
      local e = M.entry_of(S, dir, p, nil, nil)
      journal.append(jpath, e)
      by_id[p.id] = e
      adopted = adopted + 1
      done = done + 1
      if e.status == "failed" then failed = failed + 1 end
    else
      to_run[#to_run + 1] = p
    end
  end

  -- tasks: the points to run in file order, K per task
  local K = tonumber(o.backend_opts.points_per_task or "1")
  local tasks, point_of = {}, {}
  for i, p in ipairs(to_run) do
    point_of[p.id] = p
    local ti = (i - 1) // K + 1
    local task = tasks[ti]
    if not task then
      task = { index = ti - 1, ids = {}, argv = {}, shell = nil }
      tasks[ti] = task
    end
    local argv = sfile.argv(S, p, exe, ("%s/points/%s.json"):format(dir, p.id))
    task.ids[#task.ids + 1] = p.id
    task.argv[#task.argv + 1] = argv
  end
  for _, task in ipairs(tasks) do
    local parts = {}
    for j, id in ipairs(task.ids) do
      local q = {}
      for k, a in ipairs(task.argv[j]) do q[k] = shell_quote(a) end
      local exitf = ("%s/points/%s.exit"):format(dir, id)
      parts[j] = ("cd %s && %s >%s 2>&1; echo $? >%s && mv %s %s"):format(shell_quote(cwd), table.concat(q, " "),
        shell_quote(("%s/logs/%s.log"):format(dir, id)), shell_quote(exitf .. ".tmp"), shell_quote(exitf .. ".tmp"),
        shell_quote(exitf))
    end
    task.shell = table.concat(parts, "; ")
  end

  if not o.dry_run then
    -- a point about to run leaves nothing of an earlier attempt
    for _, p in ipairs(to_run) do
      for _, f in ipairs { "points/%s.json", "points/%s.exit", "points/%s.exit.tmp", "logs/%s.log" } do
        os.remove(dir .. "/" .. f:format(p.id))
      end
    end
    if #skip > 0 or adopted > 0 then
      print(("sweep %s: %d point(s) already journaled, %d adopted (finished, not journaled), %d to run"):format(
        S.name, #skip, adopted, #to_run))
    end
  end

  local reported = {}
  local ctx = {
    tasks = tasks, out = dir, jobs = jobs, exe = exe, cwd = cwd, opts = o.backend_opts,
    resume = o.resume or false, dry_run = o.dry_run or false,
  }
  local warned = {}
  function ctx.on_done(task, code, why)
    if reported[task] then return end
    reported[task] = true
    for _, id in ipairs(task.ids) do
      local p = point_of[id]
      local e = M.entry_of(S, dir, p, code, task.wall_s and task.wall_s[id], why)
      journal.append(jpath, e)
      by_id[id] = e
      done = done + 1
      if e.status == "failed" then failed = failed + 1 end
      if e.status == "ok" then
        for i, m in ipairs(S.metrics) do
          if e.metrics[i][2] == nil and not warned[m.name] then
            warned[m.name] = true
            io.stderr:write(("kernbench sweep: metric %s: point %s's results have nothing at %s\n"):format(m.name, id,
              m.path))
          end
        end
      end
      progress(done, total, failed, id)
    end
  end
  function ctx.progress()
    pcall(require("kernbench.progress_c").redraw)
  end
  if not o.dry_run then
    print(("sweep %s: %d point(s), %d to run with the %s backend, %d at once; output in %s"):format(S.name, total,
      #to_run, o.backend, jobs, dir))
    progress(done, total, failed, nil)
  end
  local t0 = M.wall()
  if #tasks > 0 or o.dry_run then backend.run(ctx) end
  if o.dry_run then return 0 end
  local wall = M.wall() - t0

  -- results from the journal as it is on disk (last line per id wins)
  local final = journal.read(jpath)
  local counts, files, notes = require("kernbench.sweep.outputs").write(S, dir, final.by_id)
  for _, n in ipairs(notes) do io.stderr:write("kernbench sweep: ", n, "\n") end
  print(("sweep %s: %d point(s): %d ok, %d failed, %d missing; ran %d in %.1f s; wrote %s"):format(S.name, total,
    counts.ok, counts.failed, counts.missing, #to_run, wall, table.concat(files, ", ")))
  if counts.failed > 0 then
    print(("sweep %s: failed points are in %s with their error (logs in %s/logs); run again with --retry-failed"):format(
      S.name, jpath, dir))
  end
  return (counts.failed > 0 or counts.missing > 0) and 1 or 0
end

return M
