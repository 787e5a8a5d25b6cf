--- All-reduce across every SIP of the tray, written the PyTorch way (the
-- spec's bench rule: init_process_group, then spawn one rank per SIP, each
-- calling all_reduce): each rank's [cubes, n_elem] f16 tensor, a row per
-- cube on PE 0, holds rank + 1; afterwards every row holds the sum. The
-- metric is crit_ns, the largest pe_exec_ns over the ranks' launches.
-- With --data every rank's result is checked against the exact sum.
--
--   kernbench [--param n_elem=49152] [--param root=corner] [--param buffer_kind=sram]
--             -t torus_2d_6sip_2x3 run ccl-allreduce [--data]
local bench_params = require "kernbench.bench_params"

-- The algorithm modules (kernbench.ccl.algorithms.NAME) the Lua path
-- holds: a name that is none of them is the user's mistake.
local function check_algorithm(name)
  local prefix = "kernbench.ccl.algorithms."
  if name:match("^[%w_]+$") and package.searchpath(prefix .. name, package.path) then return end
  local known = {}
  local shipped = package.searchpath(prefix .. "ring_allreduce", package.path)
  local dir = shipped and shipped:match("^(.*)/[^/]*$")
  if dir then
    local ls = io.popen(("ls %q 2>/dev/null"):format(dir))
    for f in ls:lines() do known[#known + 1] = f:match("^([%w_]+)%.lua$") end
    ls:close()
  end
  bench_params.invalid("algorithm", name, ("no algorithm module %s%s on the Lua path (known: %s)"):format(
    prefix, name, table.concat(known, ", ")))
end

return {
  name = "ccl-allreduce",
  description = "all-reduce across every SIP (spawn + init_process_group + all_reduce), crit_ns, verified with --data",
  params = {
    algorithm = { default = "lrab_hierarchical_allreduce", help = "the algorithm module (docs/ccl.md)" },
    n_elem = { default = 4096, min = 1, help = "f16 elements per cube (49152 = 96 KiB per PE)" },
    buffer_kind = { default = "tcm", choices = { "tcm", "sram", "hbm" }, help = "where the receive rings live" },
    root = { default = "center", help = "the root cube: center, corner or a cube index" },
    n_slots = { default = 4, min = 1, max = 1024, help = "slots per receive ring" },
    slot_size = { default = 4096, min = 16, multiple = 16, help = "bytes per slot (a message; larger payloads go in chunks)" },
  },
  run = function(torch, p)
    local dist = torch.distributed
    local P = torch.spec
    check_algorithm(p.algorithm)
    local root
    if p.root == "corner" then
      root = P.cube_w * P.cube_h - 1
    elseif p.root ~= "center" then
      root = math.tointeger(tonumber(p.root))
      if not root or root < 0 or root >= P.cubes_per_sip then
        bench_params.invalid("root", p.root, ("expected center, corner or a cube index 0 .. %d"):format(
          P.cubes_per_sip - 1))
      end
    end
    dist.init_process_group { backend = "kernbench", algorithm = p.algorithm, buffer_kind = p.buffer_kind,
                              n_slots = p.n_slots, slot_size = p.slot_size, root = root }
    local world = dist.get_world_size()
    if world ~= P.sips then
      error(("ccl-allreduce: the world size (%d) must be the SIP count (%d): a rank is a SIP"):format(world, P.sips), 0)
    end
    local n = p.n_elem
    local dp = torch.DPPolicy { cube = "row_wise", pe = "replicate", num_pes = 1 }
    local exec, results = {}, {}
    torch.multiprocessing.spawn(function(rank)
      torch.ahbm.set_device(rank)
      local t = torch.full({ P.cubes_per_sip, n }, rank + 1, { dtype = "f16", dp = dp, name = "x" .. rank })
      local h = dist.all_reduce(t)
      exec[rank] = h.event:value().pe_exec_ns
      if torch.data then results[rank] = t:cpu() end
    end, {}, world)
    local crit = 0
    for r = 0, world - 1 do crit = math.max(crit, exec[r]) end
    local expect = P.cubes_per_sip * world * (world + 1) / 2
    if torch.data then
      for r = 0, world - 1 do
        torch.verify(("rank %d's all-reduce"):format(r), results[r],
          torch.full({ P.cubes_per_sip, n }, expect, { dtype = "f16" }))
      end
    end
    -- an algorithm without a model (a user's own) gets no prediction, and says so
    local ok, est = pcall(kb.ccl.predict, { algorithm = p.algorithm, topology = torch.topology, nbytes = 2 * n,
                                            buffer_kind = p.buffer_kind, slot_size = p.slot_size, root = root })
    local pred = ok and est.predicted_ns or nil
    local root_name = root and tostring(root) or "center"
    print(("ccl-allreduce: %s on %s (%d SIPs x %d cubes), %d f16 per cube (%d bytes per PE), %s rings, root %s: "
      .. "crit_ns %.3f, predicted %s%s"):format(p.algorithm, P.sip_topology, world, P.cubes_per_sip, n, 2 * n,
      p.buffer_kind, root_name, crit, pred and ("%.3f"):format(pred) or "(no model for this algorithm)", torch.data and (", verified: every row holds %g"):format(expect)
        or " (timing only; run with --data to verify)"))
    return { algorithm = p.algorithm, sip_topology = P.sip_topology, n_sips = world, n_elem = n,
             bytes_per_pe = 2 * n, buffer_kind = p.buffer_kind, root = root_name, crit_ns = crit, predicted_ns = pred }
  end,
}
