--- Each collective timed on every SIP of the tray (docs/ccl.md): all_reduce
-- with each algorithm, broadcast, reduce, barrier, all_gather and
-- reduce_scatter (for these two compositions, the sum of their launches'
-- times), through
-- init_process_group and spawn. Each rank's [cubes, n_elem] tensor, a row per
-- cube on PE 0, holds rank + 1, or where the sum over every cube would not be
-- exact in the dtype (bf16 holds integers exactly up to 256 only, so a sum
-- rounded along a ring drifts: 16 cubes x 6 SIPs give 336), 1 + rank % 2, or
-- 1; where none is exact the check allows the worst rounding of that many
-- additions and says so. crit_ns is the largest pe_exec_ns over the
-- ranks' launches (summed over a composition's launches); elapsed_ns the
-- largest simulated time from a rank's call to its return (the launches'
-- messages and, for compositions, the waits between steps included). Every
-- algorithm gets a runtime of its own (a fresh simulation of the topology). With --data the results are
-- checked.
--
--   kernbench [--param n_elem=4096] [--param dtype=f32] -t torus_2d_6sip_2x3 run ccl-collectives [--data]
local ALGORITHMS = { "lrab_hierarchical_allreduce", "ring_allreduce", "tree_allreduce" }

return {
  name = "ccl-collectives",
  description = "all_reduce (LRAB, ring, tree), broadcast, reduce, barrier, all_gather, reduce_scatter across every SIP",
  params = {
    n_elem = { default = 4096, min = 1, help = "elements per cube" },
    dtype = { default = "f16", choices = { "f16", "bf16", "f32" }, help = "the tensors' element type" },
    buffer_kind = { default = "tcm", choices = { "tcm", "sram", "hbm" }, help = "where the receive rings live" },
  },
  run = function(torch0, p)
    local P = torch0.spec
    local n, dt = p.n_elem, p.dtype
    local rows, checks = {}, 0
    -- each rank's value: the first scheme whose total is exact in the dtype
    local EXACT = { f32 = 2 ^ 24, f16 = 2 ^ 11, bf16 = 2 ^ 8 } -- integers held exactly
    local UNIT = { f32 = 2 ^ -24, f16 = 2 ^ -11, bf16 = 2 ^ -8 } -- unit roundoff
    local SCHEMES = { function(r) return r + 1 end, function(r) return 1 + r % 2 end, function() return 1 end }
    local function total(v)
      local t = 0
      for r = 0, P.sips - 1 do t = t + P.cubes_per_sip * v(r) end
      return t
    end
    local value, tol = SCHEMES[1], nil
    for _, v in ipairs(SCHEMES) do
      if total(v) <= EXACT[dt] then value = v break end
    end
    if total(value) > EXACT[dt] then -- no exact scheme: the worst rounding of the additions
      tol = (P.cubes_per_sip * P.sips - 1) * UNIT[dt]
      if torch0.data then
        print(("ccl-collectives: %d contributions cannot sum exactly in %s; sums checked within %.3g (the worst "
               .. "rounding of that many additions)"):format(P.cubes_per_sip * P.sips, dt, tol))
      end
    end
    local function timed(torch, body)
      local exec = {}
      torch.multiprocessing.spawn(function(rank)
        torch.ahbm.set_device(rank)
        local h, t, t0 = body(torch, rank) -- t0: the simulated time of the call
        exec["e" .. rank] = torch.now_ns() - t0
        local hs = h.event and { h } or h -- a composition returns its launches
        exec[rank] = 0
        for _, x in ipairs(hs) do exec[rank] = exec[rank] + x.event:value().pe_exec_ns end
        if torch.data then exec["t" .. rank] = t:cpu() end
      end, {}, P.sips)
      local crit, elapsed = 0, 0
      for r = 0, P.sips - 1 do crit, elapsed = math.max(crit, exec[r]), math.max(elapsed, exec["e" .. r]) end
      exec.elapsed = elapsed
      return crit, exec
    end
    local function tensor(torch, rank, v)
      local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
      return torch.full({ P.cubes_per_sip, n }, v or value(rank), { dtype = dt, dp = dp })
    end
    local function check(torch, what, got, want, exact)
      if not torch.data then return end
      torch.verify(what, got, torch.full({ P.cubes_per_sip, n }, want, { dtype = dt }), { tol = not exact and tol or nil })
      checks = checks + 1
    end
    local sum = total(value)
    for i, algo in ipairs(ALGORITHMS) do
      local torch = i == 1 and torch0 or kb.torch { topology = torch0.topology, data_mode = torch0.data and "data" }
      torch.distributed.init_process_group { backend = "kernbench", algorithm = algo, buffer_kind = p.buffer_kind }
      local crit, ex = timed(torch, function(t, rank)
        local x = tensor(t, rank)
        t.synchronize()
        local t0 = t.now_ns()
        return t.distributed.all_reduce(x), x, t0
      end)
      for r = 0, P.sips - 1 do check(torch, ("%s rank %d"):format(algo, r), ex["t" .. r], sum) end
      rows[#rows + 1] = { collective = "all_reduce", algorithm = algo, crit_ns = crit, elapsed_ns = ex.elapsed }
      if algo == "lrab_hierarchical_allreduce" then -- the collectives on the LRAB wiring
        crit, ex = timed(torch, function(t, rank)
          local x = tensor(t, rank)
          t.synchronize()
          local t0 = t.now_ns()
          return t.distributed.broadcast(x, 0), x, t0
        end)
        for r = 0, P.sips - 1 do check(torch, ("broadcast rank %d"):format(r), ex["t" .. r], value(0), true) end
        rows[#rows + 1] = { collective = "broadcast", algorithm = algo, crit_ns = crit, elapsed_ns = ex.elapsed }
        crit, ex = timed(torch, function(t, rank)
          local x = tensor(t, rank)
          t.synchronize()
          local t0 = t.now_ns()
          return t.distributed.reduce(x, 0), x, t0
        end)
        check(torch, "reduce at rank 0", ex.t0, sum)
        rows[#rows + 1] = { collective = "reduce", algorithm = algo, crit_ns = crit, elapsed_ns = ex.elapsed }
        crit, ex = timed(torch, function(t, rank)
          local x = tensor(t, rank)
          t.synchronize()
          local t0 = t.now_ns()
          return t.distributed.barrier(), x, t0
        end)
        rows[#rows + 1] = { collective = "barrier", algorithm = algo, crit_ns = crit, elapsed_ns = ex.elapsed }
        crit, ex = timed(torch, function(t, rank)
          local x, list = tensor(t, rank), {}
          for i = 1, P.sips do list[i] = tensor(t, rank, 0) end
          t.synchronize()
          local t0 = t.now_ns()
          return t.distributed.all_gather(list, x), list[P.sips], t0
        end)
        for r = 0, P.sips - 1 do check(torch, ("all_gather rank %d"):format(r), ex["t" .. r], value(P.sips - 1), true) end
        rows[#rows + 1] = { collective = "all_gather", algorithm = algo, crit_ns = crit, elapsed_ns = ex.elapsed }
        crit, ex = timed(torch, function(t, rank)
          local out, list = tensor(t, rank, 0), {}
          for i = 1, P.sips do list[i] = tensor(t, rank) end
          t.synchronize()
          local t0 = t.now_ns()
          return t.distributed.reduce_scatter(out, list), out, t0
        end)
        for r = 0, P.sips - 1 do check(torch, ("reduce_scatter rank %d"):format(r), ex["t" .. r], sum) end
        rows[#rows + 1] = { collective = "reduce_scatter", algorithm = algo, crit_ns = crit, elapsed_ns = ex.elapsed }
      end
      if i > 1 then torch.close() end
    end
    print(("ccl-collectives on %s (%d SIPs x %d cubes), %d %s per cube, %s rings:"):format(P.sip_topology, P.sips,
      P.cubes_per_sip, n, dt, p.buffer_kind))
    print(("%-15s %-28s %14s %14s"):format("collective", "algorithm", "crit_ns", "elapsed_ns"))
    for _, r in ipairs(rows) do
      r.n_sips, r.n_elem, r.dtype, r.buffer_kind, r.sip_topology = P.sips, n, dt, p.buffer_kind, P.sip_topology
      print(("%-15s %-28s %14.3f %14.3f"):format(r.collective, r.algorithm, r.crit_ns, r.elapsed_ns))
    end
    print(torch0.data and ("ccl-collectives: verified %d results"):format(checks)
      or "ccl-collectives: timing only (run with --data to verify)")
    return rows
  end,
}
