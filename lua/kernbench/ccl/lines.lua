--- Steps collectives are made of (docs/ccl.md): values travelling along a
-- line of PEs (a row of the cube mesh, a line of SIPs) towards a root and
-- back out, and rounds around a ring. `cx` is {op = 0 sum | 1 max | 2 min,
-- dt = the dtype's name}; directions are the installed plan's names.
local M = {}

-- acc combined with x by cx.op (0 sum, 1 max, 2 min).
function M.combine(tl, cx, acc, x)
  if cx.op == 1 then return tl.maximum(acc, x) end
  if cx.op == 2 then return tl.minimum(acc, x) end
  return acc + x
end

-- acc combined with the message from `dir` ([n] of the kernel's dtype).
local function add_from(tl, cx, acc, dir, n)
  return M.combine(tl, cx, acc, tl.recv(dir, { n }, cx.dt))
end

-- Reduces along one line of the mesh towards position `root` (x counts from
-- the `lo` end) with op: lo/hi are the directions to the lower and higher
-- neighbour.
function M.reduce(tl, cx, acc, n, x, len, root, lo, hi)
  if x < root then
    if x > 0 then acc = add_from(tl, cx, acc, lo, n) end
    tl.send(hi, acc)
  elseif x > root then
    if x < len - 1 then acc = add_from(tl, cx, acc, hi, n) end
    tl.send(lo, acc)
  else
    if root > 0 then acc = add_from(tl, cx, acc, lo, n) end
    if root < len - 1 then acc = add_from(tl, cx, acc, hi, n) end
  end
  return acc
end

-- The reverse: the value at `root` travels out to both ends.
function M.broadcast(tl, cx, acc, n, x, len, root, lo, hi)
  if x < root then
    acc = tl.recv(hi, { n }, cx.dt)
    if x > 0 then tl.send(lo, acc) end
  elseif x > root then
    acc = tl.recv(lo, { n }, cx.dt)
    if x < len - 1 then tl.send(hi, acc) end
  else
    if root > 0 then tl.send(lo, acc) end
    if root < len - 1 then tl.send(hi, acc) end
  end
  return acc
end

-- A ring of `len` members: len - 1 rounds, each sending the value received
-- in the round before (its own first) and adding what arrives.
function M.ring(tl, cx, acc, n, len, out, into)
  local cur = acc
  for _ = 1, len - 1 do
    tl.send(out, cur)
    cur = tl.recv(into, { n }, cx.dt)
    acc = M.combine(tl, cx, acc, cur)
  end
  return acc
end


--- Runs phases(each) over a row's chunks, a group at a time: each chunk of
-- at most o.chunk elements is loaded from o.base (if o.load), each(f)
-- replaces every chunk's value v of length n in the group by f(v, n), and
-- each chunk is stored to o.out (default o.base; if o.store). Every phase
-- covers the whole group before the next begins, so along a chain a PE
-- passes chunk k on while its neighbour already works on chunk k - 1.
-- o: base, out, n_elem, chunk, group (chunks per group), dt, item, load,
-- store.
function M.chunked(tl, o, phases)
  local out = o.out or o.base
  local nchunks = (o.n_elem + o.chunk - 1) // o.chunk
  for g0 = 0, nchunks - 1, o.group do
    local last = math.min(g0 + o.group, nchunks) - 1
    local acc, len = {}, {}
    for k = g0, last do
      len[k] = math.min(o.chunk, o.n_elem - k * o.chunk)
      if o.load then acc[k] = tl.load(o.base + k * o.chunk * o.item, { len[k] }, o.dt) end
    end
    phases(function(f)
      for k = g0, last do acc[k] = f(acc[k], len[k]) end
    end)
    if o.store then
      for k = g0, last do tl.store(out + k * o.chunk * o.item, acc[k]) end
    end
  end
end

return M
