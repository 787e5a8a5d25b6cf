--- The sweep's local backend (docs/sweeps.md "Backends"): every point of
-- every task as a child process of a kernbench.procpool, ctx.jobs at once,
-- argv run directly (no shell), stdout and stderr to DIR/logs/ID.log. Each
-- point's exit code (128 + S when killed by signal S) is also written to
-- DIR/points/ID.exit, as the shell form of the other backends does; the
-- coordinator's on_done is called as each task's last point ends.
local M = {}

local function write_exit(out, id, code)
  local tmp = ("%s/points/%s.exit.tmp"):format(out, id)
  local f = io.open(tmp, "w")
  if not f then return end
  f:write(code, "\n")
  f:close()
  os.rename(tmp, ("%s/points/%s.exit"):format(out, id))
end

function M.run(ctx)
  if ctx.dry_run then return end
  local pool = require "kernbench.procpool"
  local cmds, where = {}, {}
  for _, task in ipairs(ctx.tasks) do
    task.remaining = #task.ids
    task.wall_s = task.wall_s or {}
    for j, id in ipairs(task.ids) do
      local log = ("%s/logs/%s.log"):format(ctx.out, id)
      cmds[#cmds + 1] = { argv = task.argv[j], stdout = log, stderr = log }
      where[#cmds] = { task = task, id = id }
    end
  end
  if #cmds == 0 then return end
  local clock = require("kernbench.sweep").wall
  -- procpool starts commands in order, at most jobs at once: a command's
  -- start is when the one `jobs` before it (in completion order) ended
  local started, t_begin = {}, clock()
  local jobs = math.min(ctx.jobs, #cmds)
  for i = 1, jobs do started[i] = t_begin end
  local next_start = jobs + 1
  pool.run(cmds, { jobs = ctx.jobs, on_done = function(i, r)
    local now = clock()
    if next_start <= #cmds then
      started[next_start] = now
      next_start = next_start + 1
    end
    local w = where[i]
    local code = r.status or (128 + (r.signal or 0))
    write_exit(ctx.out, w.id, code)
    w.task.wall_s[w.id] = now - (started[i] or t_begin)
    w.task.codes = w.task.codes or {}
    w.task.codes[w.id] = code
    w.task.remaining = w.task.remaining - 1
    if w.task.remaining == 0 then ctx.on_done(w.task, code) end
  end })
end

return M
