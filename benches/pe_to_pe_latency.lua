--- PE-to-PE latency: one message from a sender PE to a receiver PE, per hop
-- type, message size and transport, measured as the simulated time of the
-- launch that carries it.
--
--   kernbench [--param hops=h1,h3] [--param modes=ipcq,dma] [--param sizes=128,4096]
--             [--param quick=1] [--param plot=0] [--param out=DIR] [--results-json FILE]
--             run pe-to-pe-latency [--data]
--
-- Hops (sender -> receiver; on the default topology):
--   h1 intra-cube horizontal  sip0.cube0.pe0 -> sip0.cube0.pe1
--   h2 intra-cube vertical    sip0.cube0.pe0 -> sip0.cube0.pe4
--   h3 inter-cube horizontal  sip0.cube0.pe0 -> sip0.cube1.pe0
--   h4 inter-cube vertical    sip0.cube0.pe0 -> sip0.cube4.pe0
--   h5 inter-SIP              sip0.cube0.pe0 -> sip1.cube0.pe0
-- The intra-cube receivers are chosen from the PE positions of the loaded
-- topology (node pos_mm of pe_dma): the horizontal one is the nearest PE on
-- pe0's row (same y), the vertical one the nearest PE on pe0's column (same
-- x). On the default layout that is pe1 (4.0, 1.5 mm vs 1.5, 1.5 mm) and pe4
-- (1.5, 10.0 mm). The cubes are the 4x4 mesh's row * w + col: cube 1 is the
-- east neighbour of cube 0 (ucie-E -> cube1.ucie-W) and cube w (4) the south
-- one (ucie-S -> cube4.ucie-N). A hop the topology cannot hold (one SIP, one
-- cube row or column) is skipped with the reason.
--
-- Modes:
--   ipcq             the sender tl.send("E", h), the receiver tl.recv("W", ...)
--                    (a two-rank ring_1d plan {sender, receiver}: rank 0's E
--                    pairs with rank 1's W)
--   ipcq_no_consume  the same, the receiver tl.recv_no_consume (no slot-read cost)
--   dma              raw DMA: the sender tl.store(h) into a tensor shard on the
--                    receiver PE's HBM slice; the receiver does nothing
-- The payload h is, with src=hbm (default), tl.load of nbytes from a tensor
-- shard on the sender's own HBM slice in every mode (so the modes pay the same
-- read); with src=full it is tl.full (made in TCM, no HBM read).
-- The receiver's shard is a row of a tensor split row-wise over cubes
-- 0..cube and PEs 0..pe of its SIP (DPPolicy num_cubes/num_pes), so one row
-- lands on exactly that PE; the runtime maps it for every PE holding a row,
-- the sender included when on the same SIP. For h5 the receiver's tensor
-- lives on SIP 1 and its shard is also mapped into the sender's page table
-- with one s:mmu_map message (the runtime maps a tensor on its own SIP only).
--
-- Metric (latency_ns): the launch's pe_exec_ns, the largest kernel execution
-- time over the launched PEs (every PE starts at one barrier). The launch
-- covers the grid of PEs 0..max pe of cubes 0..max cube; the PEs not in the
-- pair return at once. h5 needs one launch per SIP (launch_async); its
-- latency is max end_ns - min start_ns over the two launches' PEs (both
-- SIPs' barriers fall on the same time on the default topology; a skew is
-- printed if not).
--
-- Reading the numbers (default topology, tcm rings): tl.store returns at the
-- write's acknowledgement, after the HBM controller has committed the bytes
-- (a 32 GB/s pseudo-channel); tl.recv returns when the message has been
-- written into and read from its TCM slot (PE_TCM's 512 GB/s port, twice)
-- and the 16-byte credit is back at the sender. So small messages are
-- cheaper by IPCQ (about 4.5 ns at 128 B: no HBM commit) and from about
-- 2 KiB dearer (the two slot accesses); with buffer_kind=hbm every IPCQ
-- size costs at least the DMA write (the spec's h3/h4 observation, checked
-- by tests/cli/ipcq_cases.sh).
--
-- Sizes default to 128 .. 10240 bytes (f16 tensors of nbytes/2 elements; each
-- even); the plan's slot_size is the largest size rounded up to 16 bytes.
-- quick=1: sizes 128 and 4096 only (for tests). With --data every received
-- message (ipcq modes) and every stored row (dma) is checked against the
-- sent values (torch.verify); without it the run is timing only.
--
-- Outputs: a table on stdout per hop; the rows {hop, mode, nbytes,
-- latency_ns} are returned (--results-json FILE); in the `out` directory
-- (default out/pe_to_pe_latency, as milestone-gemm's out/milestone_gemm)
-- latency.csv and, with gnuplot installed, latency.png (latency vs nbytes,
-- log x, one line per hop x mode). plot=0 writes no file.

local json = require "kernbench.json"

local ALL_HOPS = { "h1", "h2", "h3", "h4", "h5" }
local ALL_MODES = { "ipcq", "ipcq_no_consume", "dma" }
local QUICK_SIZES = { 128, 4096 }

local function split(s)
  local out = {}
  for w in s:gmatch("[^,%s]+") do out[#out + 1] = w end
  return out
end

local function fail(fmt, ...) error("pe-to-pe-latency: " .. fmt:format(...), 0) end

local function pe_name(pe) return ("sip%d.cube%d.pe%d"):format(pe.sip, pe.cube, pe.pe) end

-- The pe_dma position of a PE of sip 0, cube 0.
local function pos(topo, pe)
  local id = topo:node_at { kind = "pe_dma", sip = 0, cube = 0, pe = pe }
  local p = id and topo:node(id).pos_mm
  if not p then fail("the topology has no pe_dma position for sip0.cube0.pe%d", pe) end
  return p[1], p[2]
end

-- The nearest PE of cube 0 on pe0's row (axis 2: same y) or column (axis 1:
-- same x), or nil.
local function nearest_on_line(topo, P, axis)
  local x0, y0 = pos(topo, 0)
  local best, best_d
  for pe = 1, P.pes_per_cube - 1 do
    local x, y = pos(topo, pe)
    local same = axis == 2 and math.abs(y - y0) < 1e-9 or axis == 1 and math.abs(x - x0) < 1e-9
    local d = math.abs(x - x0) + math.abs(y - y0)
    if same and (not best_d or d < best_d) then best, best_d = pe, d end
  end
  return best
end

-- hop -> {name, what, from, to} or {name, what, skipped = reason}.
local function hop_pairs(topo, P)
  local A = { sip = 0, cube = 0, pe = 0 }
  local out = {}
  local hx = nearest_on_line(topo, P, 2)
  out.h1 = hx and { what = "intra-cube horizontal", from = A, to = { sip = 0, cube = 0, pe = hx } }
    or { what = "intra-cube horizontal", skipped = "no other PE on pe0's row" }
  local vy = nearest_on_line(topo, P, 1)
  out.h2 = vy and { what = "intra-cube vertical", from = A, to = { sip = 0, cube = 0, pe = vy } }
    or { what = "intra-cube vertical", skipped = "no other PE on pe0's column" }
  local w, h = P.cube_w or P.cubes_per_sip, P.cube_h or 1
  out.h3 = w >= 2 and { what = "inter-cube horizontal", from = A, to = { sip = 0, cube = 1, pe = 0 } }
    or { what = "inter-cube horizontal", skipped = "the cube mesh has one column" }
  out.h4 = h >= 2 and { what = "inter-cube vertical", from = A, to = { sip = 0, cube = w, pe = 0 } }
    or { what = "inter-cube vertical", skipped = "the cube mesh has one row" }
  out.h5 = P.sips >= 2 and { what = "inter-SIP", from = A, to = { sip = 1, cube = 0, pe = 0 } }
    or { what = "inter-SIP", skipped = "the topology has one SIP" }
  for k, v in pairs(out) do v.name = k end
  return out
end

-- A [rows, cols] f16 tensor split row-wise over cubes 0..pe.cube and PEs
-- 0..pe.pe of pe.sip (one row per PE), from host tensor `host` (or empty),
-- and its shard on `pe`.
local function tensor_on(torch, pe, cols, name, host)
  local dp = torch.DPPolicy { cube = "row_wise", pe = "row_wise", num_cubes = pe.cube + 1, num_pes = pe.pe + 1 }
  local rows = (pe.cube + 1) * (pe.pe + 1)
  local saved = torch.ahbm.current_device()
  torch.ahbm.set_device(pe.sip)
  local d
  if host then
    -- pe's row is the last one (cube-major, then PE order)
    local full = host:reshape { 1, cols }
    if rows > 1 then full = torch.cat({ torch.zeros({ rows - 1, cols }, { dtype = "f16" }), full }, 0) end
    d = torch.to_device(full, dp, { name = name })
  else
    d = torch.empty({ rows, cols }, { dtype = "f16", dp = dp, name = name })
  end
  if saved then torch.ahbm.set_device(saved) end
  for _, sh in ipairs(d.shards) do
    if sh.sip == pe.sip and sh.cube == pe.cube and sh.pe == pe.pe then return d, sh end
  end
  fail("no shard of %s on %s", name, pe_name(pe))
end

return {
  name = "pe-to-pe-latency",
  description = "one PE-to-PE message per hop type (intra/inter-cube, inter-SIP) and size: IPCQ vs raw DMA",
  params = {
    hops = { default = "h1,h2,h3,h4,h5", help = "comma-separated hop types among h1..h5" },
    modes = { default = "ipcq,ipcq_no_consume,dma", help = "comma-separated: ipcq, ipcq_no_consume, dma" },
    sizes = { default = "128,256,512,1024,2048,4096,8192,10240", help = "message sizes in bytes (even), comma-separated" },
    quick = { default = false, env = "PE_TO_PE_QUICK", help = "sizes 128 and 4096 only (for tests)" },
    src = { default = "hbm", choices = { "hbm", "full" },
            help = "payload: tl.load from the sender's HBM slice, or tl.full in TCM" },
    buffer_kind = { default = "tcm", choices = { "tcm", "sram", "hbm" }, help = "IPCQ receive ring memory" },
    n_slots = { default = 4, min = 1, help = "IPCQ slots per ring" },
    plot = { default = true, help = "write latency.csv and latency.png (0: no file)" },
    out = { default = "out/pe_to_pe_latency", help = "directory of latency.csv and latency.png (created)" },
  },
  run = function(torch, o)
    local P = torch.spec
    local pairs_of = hop_pairs(torch.topology, P)
    local hops, modes = {}, {}
    for _, h in ipairs(split(o.hops)) do
      if not pairs_of[h] then fail("unknown hop '%s' (h1 .. h5)", h) end
      hops[#hops + 1] = h
    end
    for _, m in ipairs(split(o.modes)) do
      local ok = false
      for _, k in ipairs(ALL_MODES) do ok = ok or k == m end
      if not ok then fail("unknown mode '%s' (%s)", m, table.concat(ALL_MODES, ", ")) end
      modes[#modes + 1] = m
    end
    if #hops == 0 or #modes == 0 then fail("no hop or no mode selected") end
    local sizes = {}
    if o.quick then
      sizes = QUICK_SIZES
    else
      for _, s in ipairs(split(o.sizes)) do
        local n = math.tointeger(tonumber(s))
        if not n or n < 2 or n % 2 ~= 0 then fail("size '%s' is not an even number of bytes >= 2", s) end
        sizes[#sizes + 1] = n
      end
      table.sort(sizes)
      if #sizes == 0 then fail("no size given") end
    end
    local maxb = sizes[#sizes]
    local slot = (maxb + 15) // 16 * 16
    local cols = maxb // 2

    torch.manual_seed(11)
    local rows, lat = {}, {} -- lat[hop][mode][nbytes]
    local npoints, k = 0, 0
    for _, h in ipairs(hops) do if not pairs_of[h].skipped then npoints = npoints + #modes * #sizes end end
    if npoints == 0 then
      local why = {}
      for _, h in ipairs(hops) do why[#why + 1] = ("%s: %s"):format(h, pairs_of[h].skipped) end
      fail("the topology %s holds none of the selected hops (%s)", torch.topology.name, table.concat(why, "; "))
    end
    -- outputs opened before any launch, so that a bad directory fails at once
    local outs
    if o.plot then
      require("kernbench.bench_params").out_dir("out", o.out)
      outs = { csv = kb.open_output(o.out .. "/latency.csv") }
      if os.execute("command -v gnuplot >/dev/null 2>&1") then outs.png = kb.open_output(o.out .. "/latency.png") end
    end

    print(("pe-to-pe-latency: %s; payload %s; IPCQ %s rings of %d x %d bytes; %s"):format(
      table.concat(hops, ","), o.src == "hbm" and "tl.load from the sender's HBM" or "tl.full", o.buffer_kind,
      o.n_slots, slot, torch.data and "data mode: every message is checked" or "timing only (run with --data to verify)"))
    for _, hname in ipairs(hops) do
      local hp = pairs_of[hname]
      lat[hname] = {}
      if hp.skipped then
        print(("%s %s: skipped: %s"):format(hname, hp.what, hp.skipped))
      else
        local A, B = hp.from, hp.to
        local host = torch.randn({ cols }, { dtype = "f16" })
        local src, ssh = tensor_on(torch, A, cols, hname .. "_src", host)
        local dst, dsh = tensor_on(torch, B, cols, hname .. "_dst")
        local sva, dva = src.va_base + ssh.offset_bytes, dst.va_base + dsh.offset_bytes
        if A.sip ~= B.sip then
          -- the runtime maps a tensor on its own SIP only: map the receiver's row for the sender too
          torch.wait(torch.sim:mmu_map { targets = { { sip = A.sip, cube = A.cube, pe = A.pe } },
            entries = { { va = dva, pa = dsh.pa, size = dsh.nbytes } }, label = ("tensor '%s' row on %s"):format(
              dst.name, pe_name(B)) })
        end
        -- the launch grids: PEs 0..max pe of cubes 0..max cube, one per SIP
        local grids = A.sip == B.sip
          and { { sip = A.sip, pes = math.max(A.pe, B.pe) + 1, cubes = math.max(A.cube, B.cube) + 1 } }
          or { { sip = A.sip, pes = A.pe + 1, cubes = A.cube + 1 }, { sip = B.sip, pes = B.pe + 1, cubes = B.cube + 1 } }
        torch.install_ipcq { topology = "ring_1d", pes = { A, B }, buffer_kind = o.buffer_kind,
                             n_slots = o.n_slots, slot_size = slot }
        for _, mode in ipairs(modes) do
          lat[hname][mode] = {}
          for _, nb in ipairs(sizes) do
            k = k + 1
            kb.progress(k, npoints, ("%s %s %d B"):format(hname, mode, nb))
            local n = nb // 2
            if torch.data and mode == "dma" then torch.wait(dst:copy_(torch.zeros(dst.shape, { dtype = "f16" }))) end
            local got
            -- one function for every launch of the point (a kernel is named after its
            -- function's file and line, and the last launch of a name wins); the SIP
            -- is an argument. The role comes from the PE's coordinates, not from
            -- tl.ipcq_rank(): a PE of an earlier plan that the new one leaves out
            -- keeps its old rank (an install replaces only the PEs it names).
            local kernel = { name = ("p2p_%s_%s_%d"):format(hname, mode, nb), fn = function(tl, s, d, sip)
              local cube, pe = tl.program_id(1), tl.program_id(0)
              local r = (sip == A.sip and cube == A.cube and pe == A.pe) and 0
                or (sip == B.sip and cube == B.cube and pe == B.pe) and 1 or nil
              if r == 0 then
                local x = o.src == "hbm" and tl.load(s, { n }, "f16") or tl.full({ n }, 1.0, "f16")
                if mode == "dma" then tl.store(d, x) else tl.send("E", x) end
              elseif r == 1 and mode ~= "dma" then
                local x = mode == "ipcq" and tl.recv("W", { n }, "f16") or tl.recv_no_consume("W", { n }, "f16")
                if torch.data then got = x:tolist() end
              end
            end }
            local hs = {}
            for _, g in ipairs(grids) do
              torch.ahbm.set_device(g.sip)
              hs[#hs + 1] = torch.launch_async(kernel, { pes = g.pes, cubes = g.cubes }, sva, dva, g.sip)
            end
            torch.ahbm.set_device(A.sip)
            local t0, t1, starts = math.huge, -math.huge, {}
            local latency
            for _, hd in ipairs(hs) do
              local v = torch.wait(hd).event:value()
              for _, pr in ipairs(v.pes) do
                t0, t1 = math.min(t0, pr.start_ns), math.max(t1, pr.end_ns)
                starts[pr.start_ns] = true
              end
              latency = #hs == 1 and v.pe_exec_ns or nil
            end
            latency = latency or (t1 - t0)
            if #hs > 1 then
              local nstarts = 0
              for _ in pairs(starts) do nstarts = nstarts + 1 end
              if nstarts > 1 then print(("  note: %s %s %d B: the SIPs' launch barriers differ"):format(hname, mode, nb)) end
            end
            if torch.data then
              local want = o.src == "hbm" and host:narrow(0, 0, n) or torch.full({ n }, 1.0, { dtype = "f16" })
              local name = ("%s %s %d B"):format(hname, mode, nb)
              if mode == "dma" then
                torch.verify(name, dst:cpu():narrow(0, dsh.row0, 1):reshape { cols }:narrow(0, 0, n), want)
              else
                if not got then fail("%s: the receiver got nothing", name) end
                torch.verify(name, torch.tensor(got, { dtype = "f16" }), want)
              end
            end
            lat[hname][mode][nb] = latency
            rows[#rows + 1] = json.obj({ "hop", hname }, { "mode", mode }, { "nbytes", nb }, { "latency_ns", latency })
          end
        end
        torch.uninstall_ipcq()
        src:free()
        dst:free()
      end
    end

    -- the table: per hop, one line per size, one column per mode
    local head = { ("%-4s %-22s %-34s %8s"):format("hop", "type", "sender -> receiver", "nbytes") }
    for _, m in ipairs(modes) do head[#head + 1] = ("%16s"):format(m .. " ns") end
    print(table.concat(head, " "))
    for _, hname in ipairs(hops) do
      local hp = pairs_of[hname]
      if not hp.skipped then
        for _, nb in ipairs(sizes) do
          local line = { ("%-4s %-22s %-34s %8d"):format(hname, hp.what,
            pe_name(hp.from) .. " -> " .. pe_name(hp.to), nb) }
          for _, m in ipairs(modes) do line[#line + 1] = ("%16.3f"):format(lat[hname][m][nb]) end
          print(table.concat(line, " "))
        end
      end
    end
    if torch.data then
      print(("pe-to-pe-latency: verified %d message(s) against the values sent"):format(#rows))
    else
      print("pe-to-pe-latency: timing only (run with --data to verify)")
    end

    if outs then
      local csv = { "hop,type,sender,receiver,mode,nbytes,latency_ns" }
      for _, hname in ipairs(hops) do
        local hp = pairs_of[hname]
        if not hp.skipped then
          for _, m in ipairs(modes) do
            for _, nb in ipairs(sizes) do
              csv[#csv + 1] = ("%s,%s,%s,%s,%s,%d,%.3f"):format(hname, hp.what, pe_name(hp.from), pe_name(hp.to), m,
                nb, lat[hname][m][nb])
            end
          end
        end
      end
      outs.csv:write(table.concat(csv, "\n") .. "\n"):close()
      print(("pe-to-pe-latency: %s/latency.csv"):format(o.out))
      if not outs.png then
        print("pe-to-pe-latency: gnuplot is not installed: no PNG (apt-get install gnuplot-nox); the CSV holds every figure")
      else
        local COLOURS = { h1 = "#1f77b4", h2 = "#ff7f0e", h3 = "#2ca02c", h4 = "#d62728", h5 = "#9467bd" }
        local DASH = { ipcq = 1, ipcq_no_consume = 2, dma = 3 }
        local PT = { ipcq = 7, ipcq_no_consume = 6, dma = 5 }
        local L = { "set terminal pngcairo size 1200,760 font \",11\"", "set termoption noenhanced",
                    ("set output \"%s\""):format(outs.png:temp()),
                    "set title \"PE-to-PE message latency (simulated, pe_exec_ns of the launch)\"",
                    "set xlabel \"message size (bytes)\"", "set ylabel \"latency (ns)\"", "set logscale x 2",
                    "set grid", "set key outside right top", "set yrange [0:*]", "set autoscale xfix",
                    "set offsets graph 0.03, graph 0.03, 0, 0" }
        local plots = {}
        for _, hname in ipairs(hops) do
          local hp = pairs_of[hname]
          if not hp.skipped then
            for _, m in ipairs(modes) do
              local blk = ("$%s_%s"):format(hname, m)
              L[#L + 1] = blk .. " << EOD"
              for _, nb in ipairs(sizes) do L[#L + 1] = ("%d %.3f"):format(nb, lat[hname][m][nb]) end
              L[#L + 1] = "EOD"
              plots[#plots + 1] = ("%s using 1:2 with linespoints lc rgb \"%s\" dt %d pt %d title \"%s %s (%s)\""):format(
                blk, COLOURS[hname], DASH[m], PT[m], hname, m, hp.what)
            end
          end
        end
        L[#L + 1] = "plot " .. table.concat(plots, ", \\\n  ")
        local script = os.tmpname()
        kb.write_file(script, table.concat(L, "\n") .. "\n")
        local ok = #plots > 0 and os.execute(("gnuplot '%s'"):format(script))
        os.remove(script)
        if ok then
          outs.png:close()
          print(("pe-to-pe-latency: plot %s/latency.png"):format(o.out))
        else
          outs.png:abort()
          print("pe-to-pe-latency: gnuplot failed (or nothing to plot): no PNG; the CSV holds every figure")
        end
      end
    end
    return rows
  end,
}
