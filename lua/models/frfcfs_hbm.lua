--- An HBM controller with FR-FCFS scheduling, in Lua (an example of a
-- whole component written in Lua, docs/extending.md; scheduling policies
-- other than in-order are not builtin). It serves the node of a per-PE HBM
-- controller in place of builtin.hbm_ctrl:
--
--   --set cube.components.hbm_ctrl.impl=lua:models.frfcfs_hbm
--
-- Each transaction (a write's data, or a read command; whole transactions:
-- this controller is not flit-aware) is cut into bursts; a burst goes to
-- pseudo-channel (addr >> log2(burst_bytes)) & (channels - 1), as the
-- builtin's. Each channel has an open row; a burst to another row pays
-- row_miss_ns, and a read/write turn pays switch_penalty_ns. When a channel
-- is free it serves, first-ready first-come-first-served, the oldest queued
-- burst hitting its open row, else the oldest. A transaction is finished
-- (its data moved, its answer sent) when its last burst has committed.
local M = {
  doc = "per-PE HBM controller with FR-FCFS scheduling over open rows (Lua)",
  kinds = "hbm_ctrl",
  flit_aware = false,
  -- the builtin's attributes, so it can stand in its topology block, and its own
  attrs = { burst_bytes = 256, switch_penalty_ns = 0, efficiency = 1, overhead_ns = 0,
            row_bytes = 2048, row_miss_ns = 15 },
}

-- Times are kept in integer picoseconds, as the simulator keeps them, so
-- that "free by now" comparisons are exact.
local function ps(ns) return math.floor(ns * 1000 + 0.5) end

function M.run(self)
  local a, P = self.attrs, self:params()
  local nch = P.hbm_channels_per_pe
  local chunk = ps(a.burst_bytes / (P.hbm_channel_bw_gbs * a.efficiency)) -- per burst
  local miss, turn = ps(a.row_miss_ns), ps(a.switch_penalty_ns)
  local function now() return ps(self:now()) end
  local queue, free, row, dir = {}, {}, {}, {}
  for c = 0, nch - 1 do queue[c], free[c], row[c], dir[c] = {}, 0, -1, -1 end
  local pending = {} -- transactions with bursts not yet committed, in arrival order
  local seq = 0

  local function accept(m)
    self:sleep(a.overhead_ns)
    local bytes = m.write and m.nbytes or m.req_bytes
    local t = { msg = m, left = 0, done_at = now() }
    for off = 0, math.max(bytes, 1) - 1, a.burst_bytes do
      local addr = m.addr + off
      local c = (addr // a.burst_bytes) % nch
      seq = seq + 1
      table.insert(queue[c], { seq = seq, row = addr // a.row_bytes, write = m.write, txn = t })
      t.left = t.left + 1
    end
    pending[#pending + 1] = t
  end

  -- serve one burst on channel c (free now): FR-FCFS
  local function serve(c)
    local q, pick = queue[c], 1
    for i, b in ipairs(q) do
      if b.row == row[c] then pick = i break end
    end
    local b = table.remove(q, pick)
    local start = math.max(now(), free[c])
    if b.row ~= row[c] then start = start + miss end
    local d = b.write and 1 or 0
    if dir[c] >= 0 and dir[c] ~= d then start = start + turn end
    free[c], row[c], dir[c] = start + chunk, b.row, d
    self:busy(start / 1000, (start + chunk) / 1000)
    b.txn.left = b.txn.left - 1
    b.txn.done_at = math.max(b.txn.done_at, free[c])
  end

  while true do
    local m = self:poll()
    while m do accept(m) m = self:poll() end
    -- serve every channel that is free now
    local t_now, next_t = now(), math.huge
    for c = 0, nch - 1 do
      while #queue[c] > 0 and free[c] <= t_now do serve(c) end
      if #queue[c] > 0 then next_t = math.min(next_t, free[c]) end
    end
    -- finish the transactions whose last burst has committed
    local i = 1
    while i <= #pending do
      local t = pending[i]
      if t.left == 0 and t.done_at <= t_now then
        t.msg:finish()
        table.remove(pending, i)
      else
        if t.left == 0 then next_t = math.min(next_t, t.done_at) end
        i = i + 1
      end
    end
    -- wait for work, or until the next channel frees or transaction ends;
    -- an arrival in the meantime is taken at once
    local m2 = self:receive(next_t < math.huge and (next_t - t_now) / 1000 or nil)
    if m2 then accept(m2) end
  end
end

return M
