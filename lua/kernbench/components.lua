--- Components written in Lua (docs/extending.md).
--
-- A topology component may name a Lua implementation instead of a builtin:
--   impl: lua:models.zero_router        -- a module on the Lua path
--   impl: my_router                      -- a name registered before loading:
--   kb.components.register("my_router", { attrs = {...}, run = function(self) ... end })
--
-- A definition is a table:
--   attrs       = { overhead_ns = 2.0, ... }  -- the attributes a topology may set, with defaults
--   flit_aware  = true | false               -- receive every flit, or whole transactions
--   kinds       = "noc_router,..."           -- node kinds it may serve (default: any)
--   messages    = { "Ping", ... }            -- message kinds it defines and may send
--   doc         = "one line"
--   run         = function(self) ... end     -- the component's process
-- `run` loops: `local m = self:receive()` (blocks; `self:receive(ns)`
-- returns nil if nothing comes within ns; `self:poll()` never blocks),
-- spends time with `self:sleep(ns)`, then `m:forward()` (to the next node
-- of its path) or `m:finish()` (at the end of its path); `self:send{kind =
-- "Ping", dst = id, nbytes = 0, view = "data", tag = 0}` starts a new message
-- of a declared kind (m.kind, m.tag where it arrives). self.id,
-- self.attrs, self.impl, self.queued, self.held, self.current, self:now(),
-- self:params() (the topology's), self:busy(start_ns, end_ns),
-- self:span(name, start_ns, end_ns).
local M = {}

local registered = {}   -- name -> definition
local resolved = {}     -- "lua:MODULE" -> definition

--- Registers definition `def` under `name` (usable as `impl: name`).
function M.register(name, def)
  if type(name) ~= "string" or name:match("^builtin%.") or name:match("^lua:") then
    error("kb.components.register: the name must be a string not starting with builtin. or lua:", 2)
  end
  if type(def) ~= "table" or type(def.run) ~= "function" then
    error(("kb.components.register(%s): the definition needs a run(self) function"):format(name), 2)
  end
  require("kernbench.topology_c").register_impl(name, def)
  registered[name] = def
end

--- The definition of `impl: lua:MODULE`, loaded with the topology's
-- directory first on the path (called while a topology loads).
function M.resolve(name, dir)
  if resolved[name] then return resolved[name] end
  local module = name:sub(5)
  local saved = package.path
  package.path = ("%s/?.lua;%s/?/init.lua;%s"):format(dir, dir, saved)
  local ok, def = pcall(require, module)
  package.path = saved
  if not ok then error(("implementation %s does not load: %s"):format(name, tostring(def)), 0) end
  if type(def) ~= "table" or type(def.run) ~= "function" then
    error(("implementation %s: module '%s' must return a table with a run(self) function"):format(name, module), 0)
  end
  resolved[name] = def
  return def
end

local function definition(impl)
  return registered[impl] or resolved[impl] or error("no Lua definition for " .. impl)
end

--- Starts the process of one Lua component (called when a simulation is
-- built): `self` is the component, `methods` its shared method table.
function M.start(s, self, impl, methods)
  if not methods.sleep then
    function methods.sleep(_, ns) s:sleep(ns) end
    function methods.now() return s:now() end
    local P = s:topology():params()
    function methods.params() return P end
  end
  local def = definition(impl)
  s:spawn { name = ("component %s (%s)"):format(self.id, impl), daemon = true, fn = function()
    local ok, err = xpcall(def.run, function(e)
      local handling = self.current ~= "" and (" while handling " .. self.current) or ""
      return debug.traceback(("component %s (%s) at t=%s ns%s: %s"):format(self.id, impl, s:now(), handling,
        tostring(e)), 2)
    end, self)
    if not ok then error(err, 0) end
    error(("component %s (%s): run(self) returned; a component serves until the simulation ends")
      :format(self.id, impl), 0)
  end }
end

return M
