--- IPCQ ring pass with forwarding: every rank of a ring_1d plan contributes
-- a vector, and in n-1 rounds each rank sends what it holds to E, receives
-- from W and adds it, so that every rank ends with the sum of all
-- contributions (an all-reduce by forwarding; n*(n-1) messages in all).
--
--   kernbench [--param sips=1] [--param cubes=2] [--param pes=4] [--param n_elem=64]
--             [--param n_slots=2] [--param buffer_kind=hbm] [--results-json FILE]
--             run ipcq-ring [--data]
--
-- The ranks are PEs 0..pes-1 of cubes 0..cubes-1 of SIPs 0..sips-1, SIP-major
-- then cube-major (default: all 256 PEs of the default topology's 2 SIPs);
-- rank r sits between r-1 (W) and r+1 (E), the last SIP's last PE wrapping to
-- rank 0. One launch per SIP (launch_async), all waited.
--
-- Contributions: rank + 1 in f32, so the total is n(n+1)/2 (exact in f32 up
-- to far more ranks than any topology has). With dtype f16 or bf16 every rank
-- contributes 1 instead, so that every partial sum (at most n <= 256) is an
-- exact integer there; the check then still sees a lost or doubled message,
-- not a misrouted one.
--
-- With --data every rank's result (all n_elem elements) is compared with the
-- exact total and the bench fails on any difference; "verified" is printed
-- only then (--verify-data also lists it as a torch.verify check). Without
-- --data the run is timing only, and says so.
--
-- Prints the world size, the simulated time (latency_ns: the latest kernel
-- end minus the earliest start over every PE; equal to the launches'
-- pe_exec_ns when the SIPs' start barriers coincide, as on the default
-- topology) and the messages sent; returns
-- {ranks, n_elem, latency_ns, messages}.

local json = require "kernbench.json"

return {
  name = "ipcq-ring",
  description = "ring pass with forwarding over N ranks (all-reduce by IPCQ send/recv), checked with --data",
  params = {
    sips = { default = 2, min = 1, help = "SIPs taking part (1 .. the topology's)" },
    cubes = { default = 0, min = 0, help = "cubes per SIP taking part (0: all)" },
    pes = { default = 0, min = 0, help = "PEs per cube taking part (0: all)" },
    n_elem = { default = 16, min = 1, help = "elements per message" },
    dtype = { default = "f32", choices = { "f32", "f16", "bf16" }, help = "element type of the messages" },
    n_slots = { default = 4, min = 1, help = "IPCQ slots per ring" },
    buffer_kind = { default = "tcm", choices = { "tcm", "sram", "hbm" }, help = "IPCQ receive ring memory" },
  },
  run = function(torch, o)
    local P = torch.spec
    if o.sips > P.sips then
      error(("ipcq-ring: sips = %d, but the topology %s has %d SIP(s)"):format(o.sips, torch.topology.name, P.sips), 0)
    end
    local cubes = o.cubes == 0 and P.cubes_per_sip or o.cubes
    local npe = o.pes == 0 and P.pes_per_cube or o.pes
    if cubes > P.cubes_per_sip or npe > P.pes_per_cube then
      error(("ipcq-ring: %d cubes x %d PEs per SIP asked, the topology has %d x %d"):format(cubes, npe,
        P.cubes_per_sip, P.pes_per_cube), 0)
    end
    local pes = {}
    for s = 0, o.sips - 1 do
      for c = 0, cubes - 1 do
        for p = 0, npe - 1 do pes[#pes + 1] = { sip = s, cube = c, pe = p } end
      end
    end
    local n, m, dtype = #pes, o.n_elem, o.dtype
    if n < 2 then error("ipcq-ring: a ring needs at least 2 ranks", 0) end
    local itemsize = dtype == "f32" and 4 or 2
    local slot = math.max(16, (m * itemsize + 15) // 16 * 16)
    torch.install_ipcq { topology = "ring_1d", pes = pes, buffer_kind = o.buffer_kind, n_slots = o.n_slots,
                         slot_size = slot }
    local exact = dtype == "f32"
    local expected = exact and n * (n + 1) / 2 or n
    local accs = {} -- data mode: rank -> its result
    local data = torch.data
    local kernel = { name = "ipcq_ring", fn = function(tl)
      local r, world = tl.ipcq_rank(), tl.ipcq_world_size()
      local acc = tl.full({ m }, exact and r + 1 or 1, dtype)
      local cur = acc
      for _ = 1, world - 1 do
        tl.send("E", cur)
        cur = tl.recv("W", { m }, dtype)
        acc = acc + cur
      end
      if data then accs[r] = acc:tolist() end
    end }
    local hs = {}
    for s = 0, o.sips - 1 do
      torch.ahbm.set_device(s)
      hs[#hs + 1] = torch.launch_async(kernel, { pes = npe, cubes = cubes })
    end
    local t0, t1, pe_exec = math.huge, -math.huge, 0
    for _, h in ipairs(hs) do
      local v = torch.wait(h).event:value()
      pe_exec = math.max(pe_exec, v.pe_exec_ns)
      for _, pr in ipairs(v.pes) do t0, t1 = math.min(t0, pr.start_ns), math.max(t1, pr.end_ns) end
    end
    torch.uninstall_ipcq()
    local latency = t1 - t0
    local messages = n * (n - 1)
    print(("ipcq-ring: world %d (%d SIP(s) x %d cubes x %d PEs), %d x %s per message (%d bytes), %s rings of %d x %d bytes"):format(
      n, o.sips, cubes, npe, m, dtype, m * itemsize, o.buffer_kind, o.n_slots, slot))
    print(("ipcq-ring: simulated %s (%.3f ns; max pe_exec_ns over the launches %.3f ns), %d messages sent (n*(n-1)), %d rounds"):format(
      kb.format_ns(latency), latency, pe_exec, messages, n - 1))
    if data then
      local bad, checked = {}, 0
      for r = 0, n - 1 do
        local got = accs[r]
        if not got then
          bad[#bad + 1] = ("rank %d returned no result"):format(r)
        else
          checked = checked + 1
          for i = 1, m do
            if got[i] ~= expected then
              bad[#bad + 1] = ("rank %d element %d: %s, expected %s"):format(r, i - 1, tostring(got[i]), tostring(expected))
              break
            end
          end
        end
      end
      if #bad > 0 then
        error(("ipcq-ring: %d rank(s) wrong: %s"):format(#bad, table.concat(bad, "; ", 1, math.min(#bad, 8))), 0)
      end
      -- the same through torch.verify, so that --verify-data lists it
      local flat = {}
      for r = 0, n - 1 do for i = 1, m do flat[#flat + 1] = accs[r][i] end end
      torch.verify(("ipcq-ring totals of %d ranks"):format(n), torch.tensor(flat, { dtype = dtype }),
        torch.full({ n * m }, expected, { dtype = dtype }))
      print(("ipcq-ring: verified: all %d ranks hold %s in each of their %d elements (the exact sum of %s)"):format(
        checked, tostring(expected), m, exact and "rank + 1 over the ranks" or "one per rank"))
    else
      print("ipcq-ring: timing only (run with --data to verify)")
    end
    return json.obj({ "ranks", n }, { "n_elem", m }, { "latency_ns", latency }, { "messages", messages })
  end,
}
