--- Named arguments of the collective algorithms and their kernels
-- (lua/kernbench/ccl/args.lua, docs/ccl.md): packing in the declared order
-- with defaults, a missing or an unknown name is an error naming the
-- algorithm and the argument, and every shipped algorithm declares its
-- names in the order its kernel takes them.
local lu = require "luaunit"
local args = require "kernbench.ccl.args"

TestCclArgs = {}

local DECL = args.declare("demo", { "n_elem", "chunk", { "op", default = 0 }, "dtype", { "root", default = -1 } })

function TestCclArgs:test_packs_in_the_declared_order_with_the_defaults()
  local a = args.pack(DECL, { dtype = 2, chunk = 32, n_elem = 64 })
  lu.assertEquals({ args.values(a) }, { 64, 32, 0, 2, -1 })
  lu.assertEquals({ a.n_elem, a.chunk, a.op, a.dtype, a.root }, { 64, 32, 0, 2, -1 })
  -- a given optional wins over its default; false is a value
  a = args.pack(DECL, { n_elem = 1, chunk = 2, op = 1, dtype = 0, root = false })
  lu.assertEquals(table.pack(args.values(a)), { 1, 2, 1, 0, false, n = 5 })
  -- several packed tables go one after the other (an algorithm's, then the SIP group)
  local g = args.pack(args.SIP_GROUP, { sip_rank = 3, sip_topo_kind = 1, sip_topo_w = 2, sip_topo_h = 3 })
  lu.assertEquals({ args.values(a, g) }, { 1, 2, 1, 0, false, 3, 1, 2, 3 })
  lu.assertIs(args.declaration_of(a), DECL)
  lu.assertNil(args.declaration_of({ 1, 2, 3 }))
end

function TestCclArgs:test_a_missing_name_names_the_algorithm_the_argument_and_the_expected_ones()
  local ok, err = pcall(args.pack, DECL, { n_elem = 64, dtype = 0 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "demo: missing argument 'chunk'")
  lu.assertStrContains(err, "expected: n_elem, chunk, op (optional), dtype, root (optional)")
end

function TestCclArgs:test_an_unknown_name_is_an_error()
  local ok, err = pcall(args.pack, DECL, { n_elem = 64, chunk = 32, dtype = 0, chunks = 4 })
  lu.assertFalse(ok)
  lu.assertStrContains(err, "demo: unknown argument 'chunks'")
  lu.assertStrContains(err, "expected: n_elem, chunk")
  -- reading or setting a name the declaration lacks is one too
  local a = args.pack(DECL, { n_elem = 64, chunk = 32, dtype = 0 })
  lu.assertErrorMsgContains("demo has no argument 'group'", function() return a.group end)
  lu.assertErrorMsgContains("demo has no argument 'chunks' to set", function() a.chunks = 1 end)
  lu.assertErrorMsgContains("not packed arguments", args.values, { 64, 32 })
  lu.assertErrorMsgContains("expected a table of named arguments", args.pack, DECL, 64)
end

function TestCclArgs:test_a_declaration_is_checked()
  lu.assertErrorMsgContains("'chunk' is declared twice", args.declare, "x", { "chunk", "chunk" })
  lu.assertErrorMsgContains("optional argument 'op' needs a default", args.declare, "x", { { "op" } })
  lu.assertErrorMsgContains("argument 2 must be a name", args.declare, "x", { "a", 3 })
  lu.assertErrorMsgContains("expected a list of argument names", args.declare, "x", {})
end

-- The names of fn's parameters after the first `skip`.
local function params(fn, skip)
  local out, i = {}, skip + 1
  while true do
    local name = debug.getlocal(fn, i)
    if not name then return out end
    out[#out + 1] = name
    i = i + 1
  end
end

local function names(decl)
  local out = {}
  for i, n in ipairs(decl.names) do out[i] = n end
  return out
end

-- The shipped algorithms: every module under lua/kernbench/ccl/algorithms.
local function shipped()
  local one = assert(package.searchpath("kernbench.ccl.algorithms.lrab_hierarchical_allreduce", package.path))
  local dir = one:match("^(.*)/[^/]*$")
  local p = assert(io.popen("ls " .. dir))
  local out = {}
  for f in p:lines() do
    local m = f:match("^([%w_]+)%.lua$")
    if m then out[#out + 1] = m end
  end
  p:close()
  table.sort(out)
  return out
end

function TestCclArgs:test_every_shipped_algorithm_declares_its_names_in_its_kernels_order()
  local run = require "kernbench.ccl.run"
  local list = shipped()
  lu.assertTrue(#list >= 3)
  local sip_group = names(args.SIP_GROUP)
  for _, name in ipairs(list) do
    local algo = run.algorithm(name)
    lu.assertTrue(args.is_declaration(algo.ARGS), name .. " declares M.ARGS")
    lu.assertEquals(algo.ARGS.algorithm, name)
    -- the kernel takes tl, the tensor, the declared names, then (if at all) the SIP group
    local want = names(algo.ARGS)
    local got = params(algo.kernel, 2)
    if #got > #want then
      for _, n in ipairs(sip_group) do want[#want + 1] = n end
    end
    lu.assertEquals(got, want, name)
    -- kernel_args packs them by that declaration
    local a = algo.kernel_args(2, 64, { cube_w = 4, cube_h = 4, cubes = 16, cubes_per_sip = 16, dtype = "f16" })
    lu.assertIs(args.declaration_of(a), algo.ARGS, name)
    lu.assertEquals(a.n_elem, 64)
  end
  -- the line collectives' kernels too
  local coll = require "kernbench.ccl.lrab_collectives"
  for _, k in ipairs { "broadcast", "reduce", "copy" } do
    lu.assertTrue(args.is_declaration(coll.ARGS[k]), k)
    lu.assertEquals(params(coll[k], 2), names(coll.ARGS[k]), k)
  end
end

function TestCclArgs:test_an_algorithm_whose_kernel_args_are_not_packed_is_refused()
  local torchmod = require "kernbench.torch"
  local run = require "kernbench.ccl.run"
  local lrab = require "kernbench.ccl.algorithms.lrab_hierarchical_allreduce"
  package.loaded["kernbench.ccl.algorithms.test_positional"] = {
    kernel = lrab.kernel,
    kernel_args = function(world, n) return n, 4, 4, world, -1, 2048, 0, 1, 0 end,
  }
  local torch = torchmod.new { topology = kb.topology.load("default") }
  local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
  local ts = {}
  for s = 0, torch.spec.sips - 1 do
    torch.ahbm.set_device(s)
    ts[s + 1] = torch.zeros({ torch.spec.cubes_per_sip, 8 }, { dtype = "f16", dp = dp })
  end
  torch.ahbm.set_device(nil)
  lu.assertErrorMsgContains("algorithm 'test_positional': kernel_args must return its named arguments packed",
    run.allreduce, torch, "test_positional", ts)
  package.loaded["kernbench.ccl.algorithms.test_positional"] = nil
  torch.close()
end

os.exit(lu.LuaUnit.run())
