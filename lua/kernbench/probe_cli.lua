--- kernbench probe's output and command line: the text report and the JSON
-- form of a result of probe.lua's run, and `kernbench probe`'s arguments
-- (usage, parse, main). probe.lua re-exports all of them: require
-- "kernbench.probe" is the API, this file is where they live.
local M = {}

-- The probe module (cases, run, passed), found when called rather than when
-- this file loads: probe.lua requires this file while it is loading itself.
local function probe() return require "kernbench.probe" end
local cli_opts = require "kernbench.cli_opts"

-- ---------------------------------------------------------------------------
-- Text report.

local function target_str(tg)
  return ("sip%d.cube%d.pe%d"):format(tg.sip, tg.cube, tg.pe)
end

local function bw_str(bw) return bw and ("%g"):format(bw) or "-" end

function M.report(res)
  local out = {}
  local function w(...) out[#out + 1] = table.concat({ ... }) end
  w(("kernbench probe: topology %s, %d B per case, %d case(s) run, %d skipped"):format(
    res.topology, res.nbytes, #res.cases, #res.skipped))
  w("")
  local hdr = "%-24s %-7s %11s %9s %9s %8s %6s %7s %9s %8s %7s"
  w(hdr:format("Case", "Cat", "Actual(ns)", "Ovhd(ns)", "Drain(ns)", "Wire(ns)", "Ovhd%", "Drain%",
    "Eff.BW", "BN.BW", "Util%"))
  for _, r in ipairs(res.cases) do
    local a = r.actual_ns
    w(("%-24s %-7s %11.2f %9.2f %9.2f %8.3f %6.1f %7.1f %9.2f %8s %7.1f"):format(r.name, r.category,
      a, r.overhead_ns, r.drain_ns, r.wire_ns, a > 0 and r.overhead_ns / a * 100 or 0,
      a > 0 and r.drain_ns / a * 100 or 0, r.eff_bw_gbs, bw_str(r.bottleneck_bw_gbs), r.util_pct))
  end
  w("(BW in GB/s; Ovhd, Wire and Drain count every leg: D2H command + data, PE DMA data + ack)")
  for _, s in ipairs(res.skipped) do
    w(("skipped %s: %s"):format(s.name, s.reason))
  end

  if #res.cases > 0 then
    w("")
    w("Route detail (first-flit arrival at each hop, ns after the start)")
    for _, r in ipairs(res.cases) do
      w("")
      w(("%s: %s to %s, actual %.2f ns, formula %.2f ns"):format(r.name, r.kind,
        target_str(r.target), r.actual_ns, r.formula_ns))
      for _, leg in ipairs(r.legs) do
        w(("  %s leg, %d hops:"):format(leg.label, #leg.nodes - 1))
        for i, id in ipairs(leg.nodes) do
          local ts = leg.first[i] and ("+%.3f"):format(leg.first[i]) or "(start)"
          local notes = {}
          if leg.bn_hop == i then
            notes[#notes + 1] = ("<BN:%sGB/s>"):format(bw_str(leg.edges[i].bw_gbs))
          end
          if i == #leg.nodes then
            if leg.data then notes[#notes + 1] = ("drain:%.2fns"):format(r.drain_ns) end
            if leg.last[i] then notes[#notes + 1] = ("last flit +%.3f"):format(leg.last[i]) end
          end
          w(("    %12s  %s%s"):format(ts, id, #notes > 0 and ("  " .. table.concat(notes, " ")) or ""))
        end
      end
    end

    w("")
    w("Utilisation sweep (formula only: total = ovhd + wire + nbytes / BN.BW)")
    w(("%-24s %6s %10s %11s %9s %7s"):format("Case", "Size", "Drain(ns)", "Total(ns)", "Eff.BW", "Util%"))
    local last
    for _, s in ipairs(res.sweep) do
      w(("%-24s %6s %10.2f %11.2f %9.2f %7.1f"):format(s.case ~= last and s.case or "", s.size,
        s.drain_ns, s.total_ns, s.eff_bw_gbs, s.util_pct))
      last = s.case
    end
  end

  w("")
  w("Invariants")
  for _, i in ipairs(res.invariants) do
    if i.pass then
      w(("[v] PASS %s (%s)"):format(i.name, i.detail))
    else
      w(("[x] FAIL %s (%s)"):format(i.name, i.detail))
    end
  end
  for _, s in ipairs(res.skipped_checks) do
    w(("[-] SKIP %s (%s)"):format(s.name, s.reason))
  end
  for _, s in ipairs(res.info) do
    w(("[i] INFO %s"):format(s))
  end
  local failed = 0
  for _, i in ipairs(res.invariants) do if not i.pass then failed = failed + 1 end end
  w(("%d invariant(s) checked, %d failed, %d skipped"):format(#res.invariants, failed,
    #res.skipped_checks))
  return table.concat(out, "\n") .. "\n"
end

-- ---------------------------------------------------------------------------
-- JSON (keys in a fixed order).

local json = require "kernbench.json"
local enc = json.encode
M.json_encode = enc

local function obj(...) return { __obj = { ... } } end

function M.to_json(res)
  local cases, sweep_rows, invs, skipped, checks = {}, {}, {}, {}, {}
  for i, r in ipairs(res.cases) do
    cases[i] = obj({ "name", r.name }, { "category", r.category }, { "actual_ns", r.actual_ns },
      { "overhead_ns", r.overhead_ns }, { "drain_ns", r.drain_ns }, { "wire_ns", r.wire_ns },
      { "formula_ns", r.formula_ns }, { "eff_bw_gbs", r.eff_bw_gbs },
      { "bottleneck_bw_gbs", r.bottleneck_bw_gbs }, { "util_pct", r.util_pct }, { "path", r.path })
  end
  for i, s in ipairs(res.sweep) do
    sweep_rows[i] = obj({ "case", s.case }, { "size", s.size }, { "nbytes", s.nbytes },
      { "overhead_ns", s.overhead_ns }, { "wire_ns", s.wire_ns }, { "drain_ns", s.drain_ns },
      { "total_ns", s.total_ns }, { "eff_bw_gbs", s.eff_bw_gbs },
      { "bottleneck_bw_gbs", s.bottleneck_bw_gbs }, { "util_pct", s.util_pct })
  end
  for i, v in ipairs(res.invariants) do
    invs[i] = obj({ "name", v.name }, { "pass", v.pass }, { "detail", v.detail })
  end
  for i, s in ipairs(res.skipped) do skipped[i] = obj({ "name", s.name }, { "reason", s.reason }) end
  for i, s in ipairs(res.skipped_checks) do checks[i] = obj({ "name", s.name }, { "reason", s.reason }) end
  return enc(obj({ "topology", res.topology }, { "nbytes", res.nbytes }, { "cases", cases },
    { "skipped", skipped }, { "sweep", sweep_rows }, { "invariants", invs },
    { "skipped_checks", checks }))
end

-- ---------------------------------------------------------------------------
-- Command line.

local function usage()
  return table.concat({
    "usage: kernbench [-t T] [--set K=V] probe [--case NAME] [--json] [-o FILE] [--topology T] [--set K=V]",
    "",
    "Runs single-flow " .. probe().NBYTES .. " B reference transfers, each on a fresh simulation,",
    "reports latency, overhead, drain, effective and bottleneck bandwidth, a",
    "formula-only utilisation sweep, and checks the latency invariants.",
    "",
    "options:",
    "  --topology T   topology file or shipped name (default: the global",
    "                 --topology, else \"default\")",
    "  --set K=V      override a topology field, on top of the global --set ones",
    "                 (repeatable)",
    "  --case NAME    run only this case (exact name; default: all)",
    "  --json         print one JSON object instead of the report",
    "  -o, --output FILE  write that JSON object to FILE instead (written",
    "                 beside it and renamed when complete; a sweep's point)",
    "  -h, --help     print this help and exit",
    "",
    "cases: " .. table.concat(probe().case_names(), ", "),
    "",
    "exit status: 0 every invariant holds, 1 an invariant failed, 2 usage error",
    "(unknown option or case, topology that cannot be loaded)",
    "",
  }, "\n")
end
M.usage = usage

-- A usage error of `kernbench probe`: raised, reported by the command line
-- (kernbench.usage: one line, the hint, exit status 2).
local function usage_error(msg)
  require("kernbench.usage").raise(msg, "probe", "try 'kernbench probe --help'")
end

--- Parses args (a list of strings) into opts, or returns nil, message.
function M.parse(args)
  local opts = { sets = {} }
  local i = 1
  while i <= #args do
    local a = args[i]
    local key, inline = a:match("^(%-%-[%w-]+)=(.*)$")
    if key then a = key end
    local function arg_of(flag) -- the option's value: --flag=V or --flag V
      if inline then return inline end
      i = i + 1
      if args[i] == nil then error({ usage = ("option '%s' needs an argument"):format(flag) }) end
      return args[i]
    end
    if a == "-h" or a == "--help" then
      opts.help = true
    elseif a == "--json" and not inline then
      opts.json = true
    elseif a == "--output" or a == "-o" then
      opts.output = arg_of(a)
    elseif a == "--case" then
      opts.case = arg_of(a)
    elseif a == "--topology" or a == "-t" then
      opts.topology = arg_of(a)
    elseif a == "--set" then
      cli_opts.add_set(opts.sets, arg_of(a))
    elseif a == "--profile" then
      cli_opts.add_profile(opts.sets, arg_of(a))
    else
      cli_opts.reject(a, args[i])
    end
    i = i + 1
  end
  return opts
end

function M.main(args)
  local P = probe() -- through its table: callers may replace its functions (tests stub run)
  args = args or {}
  local ok, opts = pcall(P.parse, args)
  if not ok then
    if type(opts) == "table" and opts.usage then return usage_error(opts.usage) end
    error(opts, 0)
  end
  if opts.help then
    io.write(usage())
    return 0
  end
  if opts.case and opts.case ~= "all" and not P.find_case(opts.case) then
    return usage_error(("unknown case '%s'; cases: %s"):format(opts.case,
      table.concat(P.case_names(), ", ")))
  end
  local lok, topo = pcall(P.load_topology, opts)
  if not lok then return usage_error(tostring(topo)) end
  opts.topology = topo
  local out -- opened first: a bad path fails before anything runs
  if opts.output then
    local ook, o = pcall(kb.open_output, opts.output)
    if not ook then return usage_error(tostring(o)) end
    out = o
  end
  local res = P.run { topology = opts.topology, sets = opts.sets, case = opts.case } -- the library's options
  if out then
    out:write(P.to_json(res), "\n"):close()
  elseif opts.json then
    io.write(P.to_json(res), "\n")
  else
    io.write(P.report(res))
  end
  return P.passed(res) and 0 or 1
end

return M
