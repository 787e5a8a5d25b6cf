--- Host-to-PE fan-out of a control message (the IO_CPU and M_CPU roles of
-- ADR-0036 / ADR-0035), as zero-byte messages over the fabric:
--
--   host -> PCIe EP -> IO_CPU --(per cube)--> M_CPU --(per PE)--> leaf
--   leaf [-> M_CPU] ; M_CPU (all PEs answered) -> IO_CPU ;
--   IO_CPU (all cubes answered) -> PCIe EP : the operation is complete.
--
-- Each component pays its overhead once per message it handles: a relay
-- (IO_CPU passing the message on to each cube) does not pay it again.
-- `at_leaf(sip, cube, pe)` runs (in a process of its own, so it may block)
-- when the message reaches the PE's leaf component: the mapping is
-- installed, the kernel runs ... Its return value is the PE's answer.
local M = {}

--- targets: list of {sip, cube, pe}; opts: leaf = "pe_mmu" | "pe_cpu",
-- leaf_responds (the leaf answers its M_CPU with a message; PE_MMU does not,
-- its M_CPU waits for the arrivals), name; optional at_io_cpu(sip) runs
-- when the message has arrived at the SIP's IO_CPU, before its fan-out (the
-- launch barrier stamp); optional merge(a, b) -> a combines two answers
-- (M_CPU merges its PEs', IO_CPU its cubes'). Returns an event that
-- succeeds, when the completion is back at the PCIe endpoint, with the
-- merged answer (true without merge).
function M.send(s, targets, at_leaf, opts)
  local by_cube, cubes_of_sip, sips = {}, {}, {}
  for _, tg in ipairs(targets) do
    local key = tg.sip .. "." .. tg.cube
    if not by_cube[key] then
      by_cube[key] = { sip = tg.sip, cube = tg.cube, pes = {} }
      if not cubes_of_sip[tg.sip] then
        cubes_of_sip[tg.sip] = {}
        sips[#sips + 1] = tg.sip
      end
      table.insert(cubes_of_sip[tg.sip], by_cube[key])
    end
    table.insert(by_cube[key].pes, tg.pe)
  end
  table.sort(sips)
  local function xfer(src, dst, relay)
    return s:transfer { src = src, dst = dst, nbytes = 0, view = "all", relay = relay }
  end
  local function merged(procs)
    local acc
    for _, p in ipairs(procs) do
      local r = p:value()
      if acc == nil or not opts.merge then acc = r else acc = opts.merge(acc, r) end
    end
    return acc
  end
  local done = s:event(opts.name)
  s:spawn { name = opts.name, fn = function()
    local legs = {}
    for _, sip in ipairs(sips) do
      legs[#legs + 1] = s:spawn(function()
        local ep, iocpu = ("sip%d.io0.pcie_ep"):format(sip), ("sip%d.io0.io_cpu"):format(sip)
        xfer(ep, iocpu, false):wait()
        if opts.at_io_cpu then opts.at_io_cpu(sip) end
        local cubes = {}
        for _, c in ipairs(cubes_of_sip[sip]) do
          cubes[#cubes + 1] = s:spawn(function()
            local mcpu = ("sip%d.cube%d.m_cpu"):format(sip, c.cube)
            xfer(iocpu, mcpu, true):wait()
            local pes = {}
            for _, pe in ipairs(c.pes) do
              local leaf = ("sip%d.cube%d.pe%d.%s"):format(sip, c.cube, pe, opts.leaf)
              local ev = xfer(mcpu, leaf, true)
              pes[#pes + 1] = s:spawn(function()
                ev:wait()
                local r = at_leaf(sip, c.cube, pe)
                if opts.leaf_responds then xfer(leaf, mcpu, true):wait() end
                return r
              end)
            end
            s:all_of(pes):wait()
            xfer(mcpu, iocpu, true):wait() -- the cube's aggregate answer
            return merged(pes)
          end)
        end
        s:all_of(cubes):wait()
        xfer(iocpu, ep, true):wait() -- the SIP's aggregate answer to the host
        return merged(cubes)
      end)
    end
    s:all_of(legs):wait()
    local r = merged(legs)
    done:succeed(r == nil and true or r)
  end }
  return done
end

return M
