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


return M
