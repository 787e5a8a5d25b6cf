--- The `tl` table a kernel receives: the Triton-like kernel language bound
-- to one kernel instance on one PE. Blocking calls (load, store, dot, math,
-- cycles, send, recv) run on the PE's modelled engines and return when they complete;
-- metadata calls (program_id, ref, zeros, full, arange, trans, cdiv) take
-- no simulated time. Reference: docs/tl.md.
local options = require "kernbench.options"
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

-- Epilogue ops (the spec's four, plus gelu, silu and add): the field each
-- takes (a number or a tensor handle broadcast over the output), if any.
local EPILOGUE = { dequant = "scale", bias = "bias", relu = false, scale = "factor", gelu = false,
                   silu = false, add = "other" }
local SCOPES = { k_tile = true, output_tile = true }

local function bad(level, fmt, ...) error(("tl.composite: " .. fmt):format(...), level + 1) end

-- the fields the checked tables may hold (made once: they are checked per call)
local COMPOSITE_FIELDS = { "op", "a", "b", "out_ptr", "math_op", "epilogue", "acc_dtype", "out_dtype", "tile_shape" }
local SOURCE_FIELDS, RECV_OPTIONS = { "addr", "nbytes" }, { "dst" }

--- Checks a tl.composite table and returns the form the PE context takes;
-- an unknown op, a missing field or a bad scope is an error at the call.
function M.composite_args(spec, level)
  level = level + 1
  if type(spec) ~= "table" then bad(level, "takes one table {op =, a =, b =, out_ptr =, ...}") end
  options.check("tl.composite", spec, COMPOSITE_FIELDS, level, "its fields")
  if spec.op ~= "gemm" and spec.op ~= "math" then
    bad(level, "op must be \"gemm\" or \"math\", got %s", tostring(spec.op))
  end
  local function operand(name, required)
    local v = spec[name]
    if v == nil then
      if required then bad(level + 1, "field '%s' is missing", name) end
      return nil
    end
    if M.is_ref(v) then return { ptr = v.ptr, shape = v.shape, dtype = v.dtype } end
    if pe_c.is_tensor(v) then return v end
    bad(level + 1, "%s must be a tensor handle (tl.load: pinned in TCM) or a tl.ref (streamed), got %s", name, type(v))
  end
  local out = { op = spec.op, a = operand("a", true), b = operand("b", spec.op == "gemm"),
                out_dtype = spec.out_dtype }
  if math.type(spec.out_ptr) ~= "integer" then bad(level, "out_ptr must be an integer address") end
  out.out_ptr = spec.out_ptr
  if spec.acc_dtype ~= nil and spec.acc_dtype ~= "f32" then
    bad(level, "acc_dtype %s: only f32 accumulation is modelled", tostring(spec.acc_dtype))
  end
  if spec.op == "math" then
    if type(spec.math_op) ~= "string" then bad(level, "a math composite needs math_op (\"exp\", \"add\" ...)") end
    if spec.epilogue then bad(level, "epilogues belong to gemm composites") end
    out.math_op = spec.math_op
  elseif spec.math_op then
    bad(level, "math_op is for op = \"math\"")
  end
  if spec.tile_shape ~= nil then
    local t = spec.tile_shape
    if type(t) ~= "table" or #t ~= (spec.op == "gemm" and 3 or 2) then
      bad(level, "tile_shape must be {tm, tk, tn} (gemm) or {tm, tn} (math)")
    end
    out.tile = spec.op == "gemm" and { t[1], t[2], t[3] } or { t[1], nil, t[2] }
  end
  if spec.epilogue ~= nil then
    if type(spec.epilogue) ~= "table" then bad(level, "epilogue must be a list of ops") end
    out.epilogue = {}
    for i, e in ipairs(spec.epilogue) do
      if type(e) ~= "table" then bad(level, "epilogue[%d] must be a table {op = ...}", i) end
      local field = EPILOGUE[e.op]
      if field == nil then
        bad(level, "epilogue[%d]: unknown op '%s' (dequant, bias, relu, scale, gelu, silu, add)", i, tostring(e.op))
      end
      options.check("tl.composite", e, { "op", "scope", field or nil }, level, ("epilogue[%d]'s fields"):format(i))
      local scope = e.scope or "output_tile"
      if scope == "kernel" then
        bad(level, "epilogue[%d]: scope 'kernel' has no place in a tile plan: use k_tile or output_tile", i)
      end
      if not SCOPES[scope] then bad(level, "epilogue[%d]: scope must be k_tile or output_tile, got %s", i, tostring(scope)) end
      local op = { kind = e.op, scope = scope }
      if field then
        local v = e[field]
        if v == nil then bad(level, "epilogue[%d]: %s needs field '%s'", i, e.op, field) end
        if type(v) == "number" then op.value = v
        elseif pe_c.is_tensor(v) then op.view = v
        else bad(level, "epilogue[%d]: %s.%s must be a number or a tensor handle", i, e.op, field) end
      end
      out.epilogue[i] = op
    end
  end
  return out
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
  local on_write = info.on_write -- timing-only runs: what a store writes holds no values
  tl.load, tl.store = ctx:tl_functions(on_write)

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
    if opts ~= nil and type(opts) ~= "table" then
      error(("tl.dot: options must be a table {out_dtype = ...}, got %s"):format(type(opts)), 2)
    end
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
  function tl.cast(x, dtype)
    if type(dtype) ~= "string" then
      error(("tl.cast: the dtype (argument 2) must be a string such as \"f16\", got %s"):format(type(dtype)), 2)
    end
    return ctx:cast(operand("tl.cast", 1, x), dtype)
  end
  function tl.fma(a, b, c) return ctx:math("fma", nil, a, b, c) end
  function tl.clamp(x, lo, hi) return ctx:math("clamp", nil, x, lo, hi) end
  function tl.where(cond, a, b) return ctx:math("where", nil, cond, a, b) end
  function tl.softmax(x, axis) return ctx:math("softmax", axis or -1, operand("tl.softmax", 1, x)) end
  function tl.sum(x, axis) return ctx:math("sum", axis, operand("tl.sum", 1, x)) end
  function tl.max(x, axis) return ctx:math("max", axis, operand("tl.max", 1, x)) end
  function tl.min(x, axis) return ctx:math("min", axis, operand("tl.min", 1, x)) end

  function tl.zeros(shape, dtype) return ctx:full(shape, dtype or "f16", 0, true) end
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
    local c = math.type(n) and math.tointeger(n) -- 2^62 counts, "3" and 2.5 do not
    if not c then
      error(("tl.cycles: the count must be an integer number of cycles, got %s"):format(
        type(n) == "number" and tostring(n) or type(n)), 2)
    end
    ctx:cycles(c)
  end

  --- composite{op = "gemm" | "math", a =, b =, out_ptr =, math_op =,
  -- epilogue = {{op = "bias", bias = h, scope = "output_tile"}, ...},
  -- acc_dtype = "f32", out_dtype =, tile_shape = {tm, tk, tn}}: a pipelined
  -- command; returns a handle at once (docs/tl.md).
  function tl.composite(spec)
    local args = M.composite_args(spec, 2)
    if on_write then on_write(args.out_ptr) end
    return ctx:composite(args)
  end

  --- wait(h): until composite h is done; wait(): until every composite of
  -- this kernel is. Other tl calls complete before they return.
  function tl.wait(h)
    if h ~= nil and pe_c.is_tensor(h) then return h end -- a tensor is complete already
    if h ~= nil and not pe_c.is_composite(h) then
      error(("tl.wait: expected a composite handle (from tl.composite), a tensor handle or nothing, got %s"):format(
        type(h)), 2)
    end
    ctx:wait(h)
    return h
  end
  -- ---- PE-to-PE queues (docs/ipcq.md) ----
  local Future = {}
  Future.__index = Future
  Future.__name = "tl.recv_future"

  local function dir_arg(call, dir, any_ok)
    if dir == nil and any_ok then return nil end
    if type(dir) ~= "string" then
      error(("%s: the direction must be a string (\"E\", \"global_W\" ...)%s, got %s"):format(call,
        any_ok and " or nil (any direction)" or "", type(dir)), 3)
    end
    return dir
  end

  --- send(dir, h) or send(dir, {addr =, nbytes =}): the message leaves for
  -- the neighbour in direction dir; blocks only while its ring is full.
  function tl.send(dir, src)
    dir = dir_arg("tl.send", dir, false)
    if type(src) == "table" and not M.is_ref(src) then
      options.check("tl.send", src, SOURCE_FIELDS, 2, "a memory source's fields")
      if math.type(src.addr) ~= "integer" or math.type(src.nbytes) ~= "integer" or src.nbytes < 1 then
        error("tl.send: a memory source is {addr = integer address, nbytes = integer >= 1}", 2)
      end
      src = tl.load(src.addr, { src.nbytes }, "u8") -- the DMA engine reads the bytes into TCM first
    elseif not pe_c.is_tensor(src) then
      error(("tl.send: the source must be a tensor handle (tl.load, a computation, tl.recv) or "
             .. "{addr =, nbytes =}, got %s"):format(M.is_ref(src) and "a tl.ref" or type(src)), 2)
    end
    ctx:send(dir, src)
  end

  --- recv(dir, shape, dtype="f16"[, {dst = addr}]) -> h, dir: the next
  -- message from dir (nil: any direction), as a [shape] dtype tensor; with
  -- dst, also stored to memory at that address.
  function tl.recv(dir, shape, dtype, opts)
    dir = dir_arg("tl.recv", dir, true)
    options.check("tl.recv", opts, RECV_OPTIONS, 2)
    if opts ~= nil and (type(opts) ~= "table" or math.type(opts.dst) ~= "integer") then
      error("tl.recv: options must be {dst = integer address}", 2)
    end
    local h = ctx:recv(dir, shape, dtype or "f16", true)
    local from = ctx:recv_dir()
    if opts then tl.store(opts.dst, h) end
    return h, from
  end

  --- recv_no_consume(dir, shape, dtype): diagnostic; waits for the message
  -- but charges no slot read (docs/ipcq.md).
  function tl.recv_no_consume(dir, shape, dtype)
    dir = dir_arg("tl.recv_no_consume", dir, true)
    local h = ctx:recv(dir, shape, dtype or "f16", false)
    return h, ctx:recv_dir()
  end

  --- recv_async(dir, shape, dtype) -> future: claims the next message of dir
  -- now (later recvs get the ones after it); tl.wait(future) receives it.
  function tl.recv_async(dir, shape, dtype)
    dir = dir_arg("tl.recv_async", dir, true)
    local seq = dir and ctx:recv_claim(dir)
    return setmetatable({ dir = dir, shape = shape, dtype = dtype or "f16", seq = seq }, Future)
  end

  function tl.ipcq_rank() local i = ctx:ipcq(); return i and i.rank end
  function tl.ipcq_world_size() local i = ctx:ipcq(); return i and i.world end
  function tl.ipcq_neighbors() local i = ctx:ipcq(); return i and i.neighbors end

  local wait = tl.wait
  --- wait(future) also receives a tl.recv_async future: -> h, dir.
  function tl.wait(h)
    if getmetatable(h) == Future then
      if h.value then error("tl.wait: this recv future was waited already", 2) end
      h.value = ctx:recv(h.dir, h.shape, h.dtype, true, h.seq)
      h.from = ctx:recv_dir()
      return h.value, h.from
    end
    return wait(h)
  end
  tl.is_data = function() return ctx:is_data() end
  return tl
end

return M
