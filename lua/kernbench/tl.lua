--- The `tl` table a kernel receives: the Triton-like kernel language bound
-- to one kernel instance on one PE. Blocking calls (load, store, dot, math,
-- cycles) run on the PE's modelled engines and return when they complete;
-- metadata calls (program_id, ref, zeros, full, arange, trans, cdiv) take
-- no simulated time. Reference: docs/tl.md.
local pe_c = require "kernbench.pe_c"

local M = {}

local Ref = {}
Ref.__index = Ref
Ref.__name = "tl.ref"
function Ref:__tostring()
  return ("tl.ref(0x%x, shape={%s}, dtype=%s)"):format(self.ptr, table.concat(self.shape, ", "), self.dtype)
end

--- Whether v is a tl.ref handle (a reference to memory, not yet loaded).
function M.is_ref(v) return getmetatable(v) == Ref end

local UNARY = { "exp", "log", "sqrt", "abs", "sigmoid", "cos", "sin", "relu" }
local BINARY = { "add", "sub", "mul", "div", "maximum", "minimum" }

local function not_yet(what, issue)
  return function()
    error(("%s: not implemented yet (%s)"):format(what, issue), 2)
  end
end

--- A tl table for context `ctx` (kernbench.pe_c) with info:
-- pe, cube, num_pes, num_cubes (the launch grid).
function M.new(ctx, info)
  local tl = {}

  local function check_axis(call, axis)
    axis = axis or 0
    if axis ~= 0 and axis ~= 1 then
      error(("tl.%s: axis must be 0 (the PE within its cube) or 1 (the cube), got %s"):format(call,
        tostring(axis)), 3)
    end
    return axis
  end

  function tl.program_id(axis)
    return check_axis("program_id", axis) == 1 and info.cube or info.pe
  end

  function tl.num_programs(axis)
    return check_axis("num_programs", axis) == 1 and info.num_cubes or info.num_pes
  end

  --- load(ptr, shape, dtype="f16") or load(ref): DMA into the PE's TCM;
  -- store(ptr, handle): DMA from TCM to memory. Both translate ptr through
  -- the PE's MMU (C closures bound to this kernel instance).
  tl.load, tl.store = ctx:tl_functions()

  --- ref(ptr, shape, dtype="f16"): names memory without moving it.
  function tl.ref(ptr, shape, dtype)
    if math.type(ptr) ~= "integer" then error("tl.ref: the pointer must be an integer address", 2) end
    if type(shape) ~= "table" then error("tl.ref: shape must be a table of sizes", 2) end
    return setmetatable({ ptr = ptr, shape = shape, dtype = dtype or "f16" }, Ref)
  end

  local function operand(call, i, x)
    if M.is_ref(x) then
      error(("%s: operand %d is a tl.ref (memory not loaded): load it with tl.load first "
             .. "(tl.ref operands stream through tl.composite)"):format(call, i), 3)
    end
    return x
  end

  --- dot(a, b[, {out_dtype=}]): [M, K] x [K, N] on PE_GEMM.
  function tl.dot(a, b, opts)
    return ctx:dot(operand("tl.dot", 1, a), operand("tl.dot", 2, b), opts and opts.out_dtype)
  end

  for _, name in ipairs(UNARY) do
    tl[name] = function(x) return ctx:math(name, nil, operand("tl." .. name, 1, x)) end
  end
  for _, name in ipairs(BINARY) do
    tl[name] = function(a, b)
      return ctx:math(name, nil, operand("tl." .. name, 1, a), operand("tl." .. name, 2, b))
    end
  end
  function tl.fma(a, b, c) return ctx:math("fma", nil, a, b, c) end
  function tl.clamp(x, lo, hi) return ctx:math("clamp", nil, x, lo, hi) end
  function tl.where(cond, a, b) return ctx:math("where", nil, cond, a, b) end
  function tl.softmax(x, axis) return ctx:math("softmax", axis or -1, operand("tl.softmax", 1, x)) end
  function tl.sum(x, axis) return ctx:math("sum", axis, operand("tl.sum", 1, x)) end
  function tl.max(x, axis) return ctx:math("max", axis, operand("tl.max", 1, x)) end
  function tl.min(x, axis) return ctx:math("min", axis, operand("tl.min", 1, x)) end

  function tl.zeros(shape, dtype) return ctx:full(shape, dtype or "f16", 0) end
  function tl.full(shape, value, dtype) return ctx:full(shape, dtype or "f16", value) end
  function tl.arange(start, stop, dtype) return ctx:arange(start, stop, dtype or "i32") end
  function tl.trans(x) return ctx:trans(operand("tl.trans", 1, x)) end

  function tl.cdiv(a, b)
    if math.type(a) ~= "integer" or math.type(b) ~= "integer" or b == 0 then
      error("tl.cdiv: needs two integers, the second non-zero", 2)
    end
    return -(-a // b)
  end

  --- cycles(n): the PE_CPU is busy for n cycles (scalar work).
  function tl.cycles(n)
    if math.type(n) ~= "integer" then error("tl.cycles: the count must be an integer", 2) end
    ctx:cycles(n)
  end

  --- wait([h]): every tl call so far has completed when it returns (this
  -- kernel language has no asynchronous handle yet), so it returns at once.
  function tl.wait(h)
    if h ~= nil and not pe_c.is_tensor(h) then
      error(("tl.wait: expected a handle, got %s"):format(type(h)), 2)
    end
    return h
  end

  tl.composite = not_yet("tl.composite", "composite commands come with the PE pipeline")
  for _, name in ipairs { "send", "recv", "recv_async", "recv_no_consume" } do
    tl[name] = not_yet("tl." .. name, "PE-to-PE queues (IPCQ) come with collectives")
  end
  tl.is_data = function() return ctx:is_data() end
  return tl
end

return M
