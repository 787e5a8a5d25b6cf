--- ZeroRouter: a cube NoC router with no decode overhead, in Lua (an example
-- of a whole component written in Lua, docs/extending.md). It is flit-aware
-- like builtin.forwarding, so wormhole timing is unchanged: each flit goes
-- on the moment it arrives. Replacing the cube routers with it removes
-- exactly the routers' overheads from every path:
--
--   --set cube.components.router.impl=lua:models.zero_router
--   --set cube.components.router.attrs.overhead_ns=0
--
-- It takes `overhead_ns` so that it can stand in the topology block of a
-- router, and insists on 0: path formulas (the probe's, the launch
-- barrier's) read the attribute, so it must say what the router does.
return {
  doc = "cube NoC router without decode overhead (flit-aware pass-through)",
  kinds = "noc_router",
  flit_aware = true,
  attrs = { overhead_ns = 0 },
  run = function(self)
    if self.attrs.overhead_ns ~= 0 then
      error(("a ZeroRouter has no overhead: set its overhead_ns to 0 (it is %g)"):format(self.attrs.overhead_ns))
    end
    while true do
      self:receive():forward()
    end
  end,
}
