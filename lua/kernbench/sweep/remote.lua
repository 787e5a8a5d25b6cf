--- Shell and file helpers of the sweep: the coordinator (init.lua) and the
-- backends that run the tasks' shell lines outside it (backend_parallel.lua,
-- backend_slurm.lua): shell quoting, running a command and capturing its
-- output, the tasks file, and which tasks have all their points' exit files
-- in OUT/points (docs/sweeps.md, "Backends").
local pool = require "kernbench.procpool"

local M = {}

--- s quoted for POSIX sh.
function M.quote(s)
  s = tostring(s)
  if s ~= "" and not s:find("[^%w%-%./_=:,+@%%]") then return s end
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

--- argv as one sh command line.
function M.join(argv)
  local t = {}
  for i, a in ipairs(argv) do t[i] = M.quote(a) end
  return table.concat(t, " ")
end

--- Runs the sh command line cmd; returns its output (stdout and stderr
-- together, trailing newlines removed) and its exit code.
function M.capture(cmd)
  local p = assert(io.popen(cmd .. " 2>&1", "r"))
  local out = p:read("a") or ""
  local ok, how, code = p:close()
  if how == "signal" then code = 128 + code elseif ok then code = 0 end
  return (out:gsub("%s+$", "")), code
end

--- True if the program name is found in PATH.
function M.have(prog)
  local _, code = M.capture("command -v " .. M.quote(prog) .. " >/dev/null")
  return code == 0
end

function M.exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

function M.read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

--- Writes text to path atomically (a temporary file renamed over it).
function M.write(path, text)
  local tmp = path .. ".tmp"
  local f, err = io.open(tmp, "wb")
  if not f then error(err, 0) end
  f:write(text)
  f:close()
  local ok, rerr = os.rename(tmp, path)
  if not ok then error(rerr, 0) end
end

function M.mkdir(path)
  local out, code = M.capture("mkdir -p " .. M.quote(path))
  if code ~= 0 then error(("cannot create %s: %s"):format(path, out), 0) end
end

--- path made absolute against dir.
function M.absolute(path, dir)
  if path:sub(1, 1) == "/" then return path end
  return dir .. "/" .. path
end

--- The tasks file's text: one task's shell line per line, in order. A line
-- may not hold a newline (both backends select a task by its line).
function M.tasks_text(tasks, who)
  local lines = {}
  for i, t in ipairs(tasks) do
    if type(t.shell) ~= "string" or t.shell == "" or t.shell:find("[\n\r]") then
      error(("%s: task %d's shell line is empty or holds a newline"):format(who, t.index or i - 1), 0)
    end
    lines[i] = t.shell
  end
  return table.concat(lines, "\n") .. (#lines > 0 and "\n" or "")
end

--- True when every point of task has its OUT/points/ID.exit (the task's
-- shell line writes them last, atomically).
function M.task_files_done(out, task)
  for _, id in ipairs(task.ids) do
    if not M.exists(out .. "/points/" .. id .. ".exit") then return false end
  end
  return true
end

--- The start time of process pid (field 22 of /proc/PID/stat), or nil if
-- there is no such process: with the pid it names one process for good.
function M.start_time(pid)
  local s = M.read("/proc/" .. math.tointeger(pid) .. "/stat")
  if not s then return nil end
  local rest = s:match("^%d+ %b() (.*)$")
  if not rest then return nil end
  local i = 3 -- rest starts with field 3 (the state)
  for field in rest:gmatch("%S+") do
    if i == 22 then return field end
    i = i + 1
  end
  return nil
end

--- The done-once reporter: report(task, code, why) calls ctx.on_done once
-- per task; count() is how many were reported.
function M.reporter(ctx)
  local reported, n = {}, 0
  local r = {}
  function r.report(task, code, why)
    if reported[task] then return end
    reported[task] = true
    n = n + 1
    ctx.on_done(task, code, why)
  end
  function r.done(task) return reported[task] == true end
  function r.count() return n end
  return r
end

--- A list option of ctx.opts, under either of its names: a string alone is
-- a list of one.
function M.list_opt(opts, a, b)
  local v = opts[a]
  if v == nil and b then v = opts[b] end
  if v == nil then return {} end
  if type(v) == "string" then return { v } end
  return v
end

--- A positive integer option of ctx.opts (a string or a number), or nil.
function M.int_opt(opts, key, flag, who)
  local v = opts[key]
  if v == nil then return nil end
  local n = math.tointeger(tonumber(v))
  if not n or n < 1 then error(("%s: %s must be a positive integer, got %s"):format(who, flag, tostring(v)), 0) end
  return n
end

M.sleep = pool.sleep

return M
