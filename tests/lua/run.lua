--- Runs one LuaUnit test file under kernbench:
--   kernbench run.lua test_x.lua [LuaUnit options]
-- Debian's lua-unit installs luaunit.lua only in the Lua 5.1 tree; it is
-- pure Lua and runs on 5.4, so that directory is added to the path here.
package.path = package.path .. ";/usr/share/lua/5.1/?.lua"
-- and this directory, for the tests' shared helpers (testfs.lua)
package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path

local file = arg[1]
if not file then
  io.stderr:write("usage: kernbench run.lua test_file.lua [luaunit options]\n")
  os.exit(2)
end
-- LuaUnit reads its options from the global `arg` when it is loaded
arg = { [0] = file, table.unpack(arg, 2) }
local lu = require "luaunit"
dofile(file)
-- close the state on exit, so every simulation is finalised (the sanitizer
-- build checks that for leaks)
os.exit(lu.LuaUnit.run(), true)
