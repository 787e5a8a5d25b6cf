--- File helpers shared by the Lua tests (run.lua puts this directory on
-- package.path): a temporary directory per test, reading whole files.
local M = {}

-- A new empty directory /tmp/<prefix>.XXXXXX.
function M.tempdir(prefix)
  local p = assert(io.popen(("mktemp -d /tmp/%s.XXXXXX"):format(prefix)))
  local dir = p:read("l")
  p:close()
  assert(dir and dir ~= "", "mktemp -d failed")
  return dir
end

-- Removes a directory made by tempdir (nil: nothing to remove).
function M.remove(dir)
  if dir then os.execute(("rm -rf %q"):format(dir)) end
end

-- The whole content of a file, which must exist.
function M.read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function M.exists(path)
  local f = io.open(path)
  if f then f:close() end
  return f ~= nil
end

return M
