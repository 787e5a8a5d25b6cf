--- IPCQ receive-ring memory: one neighbour exchange of 64 KiB per PE with
-- the rings in each buffer kind (tcm, hbm, sram).
--
--   kernbench [--param nbytes=16384] [--param kinds=tcm,sram] [--results-json FILE]
--             run ipcq-buffer-kinds [--data]
--
-- The 8 PEs of sip0.cube0 form a ring_1d plan (rank = PE index); each PE
-- makes an nbytes f16 tensor in TCM (tl.full, value rank + 1), sends it to E,
-- then receives nbytes from W. The plan has slot_size = nbytes and n_slots = 2:
-- with the default 64 KiB that is 2 directions x 2 slots x 64 KiB = 256 KiB
-- per PE, exactly the PE's TCM IPCQ window, so the tcm install just fits (an
-- install that fails is reported as such, with its error, and that kind is
-- skipped). One install and one launch per kind.
--
-- Metric (latency_ns): the launch's pe_exec_ns (the slowest of the 8 PEs).
-- Expected: tcm < hbm < sram (the ring in the PE's own TCM costs nothing
-- more; the HBM slice is the PE's own; the SRAM is shared by the cube's 8
-- PEs). The bench prints whether the ordering holds but does not fail on it.
-- With --data each PE checks that it received its W neighbour's values.
-- Returns rows {buffer_kind, nbytes, latency_ns}.

local json = require "kernbench.json"

local ALL = { "tcm", "hbm", "sram" }

return {
  name = "ipcq-buffer-kinds",
  description = "one 64 KiB IPCQ neighbour exchange on the 8 PEs of a cube, rings in tcm, hbm and sram",
  params = {
    nbytes = { default = 65536, min = 16, help = "bytes each PE sends (a multiple of 16)" },
    kinds = { default = "tcm,hbm,sram", help = "comma-separated buffer kinds among tcm, hbm, sram" },
  },
  run = function(torch, o)
    local P = torch.spec
    local nb = o.nbytes
    if nb % 16 ~= 0 then error(("ipcq-buffer-kinds: nbytes = %d is not a multiple of 16"):format(nb), 0) end
    local kinds = {}
    for k in o.kinds:gmatch("[^,%s]+") do
      local ok = false
      for _, a in ipairs(ALL) do ok = ok or a == k end
      if not ok then error(("ipcq-buffer-kinds: unknown buffer kind '%s' (tcm, hbm, sram)"):format(k), 0) end
      kinds[#kinds + 1] = k
    end
    local npe = P.pes_per_cube
    if npe < 2 then
      error(("ipcq-buffer-kinds: the topology %s has %d PE per cube; the exchange needs at least 2"):format(
        torch.topology.name, npe), 0)
    end
    local n = nb // 2
    local pes = {}
    for p = 0, npe - 1 do pes[#pes + 1] = { sip = 0, cube = 0, pe = p } end
    torch.ahbm.set_device(0)
    local rows, lat = {}, {}
    print(("ipcq-buffer-kinds: %d PEs of sip0.cube0 in a ring, each sends %d bytes to E and receives %d from W; "
      .. "rings of 2 x %d bytes; %s"):format(npe, nb, nb, nb,
      torch.data and "data mode: every PE checks what it received" or "timing only (run with --data to verify)"))
    for _, kind in ipairs(kinds) do
      local ok, err = pcall(torch.install_ipcq, { topology = "ring_1d", pes = pes, buffer_kind = kind, n_slots = 2,
                                                  slot_size = nb })
      if not ok then
        print(("%-5s install failed: %s"):format(kind, tostring(err)))
      else
        local got = {}
        local data = torch.data
        local h = torch.launch({ name = "ipcq_buffer_" .. kind, fn = function(tl)
          local r = tl.ipcq_rank()
          tl.send("E", tl.full({ n }, r + 1, "f16"))
          local x = tl.recv("W", { n }, "f16")
          if data then got[r] = x:tolist() end
        end }, { pes = npe, cubes = 1 })
        torch.uninstall_ipcq()
        if data then
          for r = 0, npe - 1 do
            local want = (r - 1) % npe + 1
            torch.verify(("%s: rank %d's message from W"):format(kind, r), torch.tensor(got[r], { dtype = "f16" }),
              torch.full({ n }, want, { dtype = "f16" }))
          end
        end
        lat[kind] = h.result.pe_exec_ns
        rows[#rows + 1] = json.obj({ "buffer_kind", kind }, { "nbytes", nb }, { "latency_ns", lat[kind] })
      end
    end
    print(("%-11s %10s %14s %12s"):format("buffer_kind", "nbytes", "latency_ns", "GB/s per PE"))
    for _, kind in ipairs(kinds) do
      if lat[kind] then print(("%-11s %10d %14.3f %12.2f"):format(kind, nb, lat[kind], nb / lat[kind])) end
    end
    if lat.tcm and lat.hbm and lat.sram then
      local holds = lat.tcm < lat.hbm and lat.hbm < lat.sram
      print(("ipcq-buffer-kinds: expected ordering tcm < hbm < sram %s (tcm %.3f, hbm %.3f, sram %.3f ns)"):format(
        holds and "holds" or "does NOT hold", lat.tcm, lat.hbm, lat.sram))
    else
      print("ipcq-buffer-kinds: ordering tcm < hbm < sram not checked (a kind was skipped or failed)")
    end
    if torch.data then print(("ipcq-buffer-kinds: verified %d PE(s) per kind"):format(npe)) end
    return rows
  end,
}
