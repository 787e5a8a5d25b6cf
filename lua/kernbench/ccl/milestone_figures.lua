--- The CCL milestone's figures (benches/milestone_ccl.lua): the gnuplot
-- scripts of its PNGs and the Graphviz diagram of its SIP topologies, from
-- a result (the "result" of its results.json). new(spec) takes the bench's
-- tables (TOPOLOGIES, ALGORITHMS, ALGO_ORDER, KINDS, MARK_N) and returns
-- {index, sizes_of, gnuplot_script, compare_script, topology_dot}.
local M = {}

function M.new(spec)
  local TOPOLOGIES, ALGORITHMS, ALGO_ORDER, KINDS, MARK_N = spec.TOPOLOGIES, spec.ALGORITHMS, spec.ALGO_ORDER,
    spec.KINDS, spec.MARK_N

  -- A lookup: find(algo_module, topology, kind, root, n) -> point.
  local function index(r)
    local by = {}
    for _, p in ipairs(r.points) do by[table.concat({ p.algorithm, p.topology, p.buffer_kind, p.root, p.n_elem }, "|")] = p end
    return function(algo, topo, kind, root, n)
      return by[table.concat({ ALGORITHMS[algo], topo, kind, root, n }, "|")]
    end
  end

  local function sizes_of(r)
    local seen, list = {}, {}
    for _, p in ipairs(r.points) do
      if not seen[p.n_elem] then seen[p.n_elem] = true; list[#list + 1] = p.n_elem end
    end
    table.sort(list)
    return list
  end

  -- gnuplot: a data block per series (only those with points), us against
  -- bytes per PE.
  local function series(gp, name, pts, field)
    if #pts == 0 then return nil end
    gp[#gp + 1] = ("$%s << EOD"):format(name)
    for _, p in ipairs(pts) do gp[#gp + 1] = ("%d %.6f"):format(p.bytes_per_pe, p[field] / 1000) end
    gp[#gp + 1] = "EOD"
    return "$" .. name
  end

  local function collect(r, algo, topo, kind, root)
    local find, out = index(r), {}
    for _, n in ipairs(sizes_of(r)) do out[#out + 1] = find(algo, topo, kind, root, n) end
    return out
  end

  local AXES = {
    "set logscale xy", "set grid xtics ytics mxtics mytics", "set key top left",
    "set xlabel \"bytes per PE (f16 elements x 2)\"", "set ylabel \"crit_ns (us)\"",
    "set xtics (\"16 B\" 16, \"64 B\" 64, \"256 B\" 256, \"1 KiB\" 1024, \"4 KiB\" 4096, \"16 KiB\" 16384, " ..
    "\"96 KiB\" 98304)", "set xrange [10:160000]", "set format y \"%g\"",
  }

  local function marker(gp, at)
    gp[#gp + 1] = "unset label\nunset arrow"
    gp[#gp + 1] = "set arrow from 98304, graph 0 to 98304, graph 1 nohead dashtype 3 linecolor rgb \"#808080\""
    if at then gp[#gp + 1] = ("set label %q at graph 0.02, graph 0.70 left font \",9\""):format(at) end
  end

  local function plot_line(parts, ds, title, style)
    if ds then parts[#parts + 1] = ("%s using 1:2 %s title %q"):format(ds, style, title) end
  end

  local function gnuplot_script(r, outs)
    local gp = { "set terminal pngcairo noenhanced size 900,600 font \",10\"", "set termoption noenhanced" }
    for _, a in ipairs(AXES) do gp[#gp + 1] = a end
    local find = index(r)
    local k = 0
    for i, t in ipairs(TOPOLOGIES) do
      local c = collect(r, "lrab", t.key, "tcm", "center")
      local corner = collect(r, "lrab", t.key, "tcm", "corner")
      local parts = {}
      plot_line(parts, series(gp, "sim" .. i, c, "crit_ns"), "LRAB, centre root (simulated)", "with linespoints pt 7 lw 2")
      plot_line(parts, series(gp, "corner" .. i, corner, "crit_ns"), "LRAB, corner root (simulated)",
        "with linespoints pt 5 lw 1")
      plot_line(parts, series(gp, "pred" .. i, c, "predicted_ns"), "LRAB, centre root (analytic, kb.ccl.predict)",
        "with linespoints pt 6 dashtype 2 lw 1")
      local m = find("lrab", t.key, "tcm", "center", MARK_N)
      marker(gp, m and ("96 KiB per PE: %.1f us simulated, %.1f us predicted"):format(m.crit_ns / 1000,
        m.predicted_ns / 1000))
      k = k + 1
      gp[#gp + 1] = ("set output %q"):format(outs[k]:temp())
      gp[#gp + 1] = ("set title \"All-reduce latency on %s (LRAB, tcm rings, 16 cubes per SIP)\""):format(t.label)
      gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
    end
    -- buffer kinds on torus_2d: the times, and each against the tcm rings'
    gp[#gp + 1] = "set terminal pngcairo noenhanced size 1400,600 font \",10\""
    gp[#gp + 1] = ("set output %q"):format(outs[4]:temp())
    gp[#gp + 1] = "set multiplot layout 1,2 title \"All-reduce by ring buffer kind (LRAB, torus_2d 2x3, centre root)\""
    local parts, ratios = {}, {}
    local tcm = {}
    for _, p in ipairs(collect(r, "lrab", "torus_2d", "tcm", "center")) do tcm[p.n_elem] = p.crit_ns end
    for j, kind in ipairs(KINDS) do
      local c = collect(r, "lrab", "torus_2d", kind, "center")
      plot_line(parts, series(gp, "bk" .. j, c, "crit_ns"), kind .. " rings (simulated)",
        ("with linespoints pt 7 lw 2 linecolor %d"):format(j))
      plot_line(parts, series(gp, "bkp" .. j, c, "predicted_ns"), kind .. " rings (analytic)",
        ("with linespoints pt 6 ps 0.7 dashtype 2 lw 1 linecolor %d"):format(j))
      local rel = {}
      for _, p in ipairs(c) do
        if tcm[p.n_elem] then rel[#rel + 1] = { bytes_per_pe = p.bytes_per_pe, ratio = p.crit_ns / tcm[p.n_elem] * 1000 } end
      end
      plot_line(ratios, series(gp, "bkr" .. j, rel, "ratio"), kind .. " / tcm",
        ("with linespoints pt 7 lw 2 linecolor %d"):format(j))
    end
    marker(gp, nil)
    gp[#gp + 1] = "set title \"crit_ns\""
    gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
    gp[#gp + 1] = "unset logscale y\nset ylabel \"crit_ns / crit_ns with tcm rings\"\nset title \"against tcm rings\""
    gp[#gp + 1] = "set format y \"%.2f\""
    gp[#gp + 1] = #ratios > 0 and ("plot " .. table.concat(ratios, ", ")) or "plot 1/0 notitle"
    gp[#gp + 1] = "unset multiplot"
    gp[#gp + 1] = "set logscale y\nset ylabel \"crit_ns (us)\"\nset format y \"%g\""
    -- algorithms: a panel per topology
    gp[#gp + 1] = "set terminal pngcairo noenhanced size 1500,550 font \",10\""
    parts = {}
    gp[#gp + 1] = ("set output %q"):format(outs[5]:temp())
    gp[#gp + 1] = "set multiplot layout 1,3 title \"All-reduce: LRAB vs ring vs tree (tcm rings; solid simulated, " ..
                  "dashed analytic)\""
    for i, t in ipairs(TOPOLOGIES) do
      parts = {}
      for j, a in ipairs(ALGO_ORDER) do
        local c = collect(r, a, t.key, "tcm", "center")
        plot_line(parts, series(gp, ("al%d%d"):format(i, j), c, "crit_ns"), a, ("with linespoints pt 7 lw 2 linecolor %d"):format(j))
        plot_line(parts, series(gp, ("alp%d%d"):format(i, j), c, "predicted_ns"), a .. " (analytic)",
          ("with linespoints pt 6 ps 0.7 dashtype 2 lw 1 linecolor %d"):format(j))
      end
      marker(gp, nil)
      gp[#gp + 1] = ("set title %q"):format(t.label)
      gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
    end
    gp[#gp + 1] = "unset multiplot"
    return table.concat(gp, "\n") .. "\n"
  end

  -- profiles.png: LRAB (centre root, tcm rings) on each SIP topology and the
  -- buffer kinds on torus_2d, this run's and another's side by side.
  local function compare_script(r, other, labels, out)
    local gp = { "set terminal pngcairo noenhanced size 1500,1000 font \",10\"", "set termoption noenhanced" }
    for _, a in ipairs(AXES) do gp[#gp + 1] = a end
    gp[#gp + 1] = ("set output %q"):format(out:temp())
    gp[#gp + 1] = ("set multiplot layout 2,2 title \"All-reduce, profile %s (solid) against profile %s (dashed)\""):format(
      labels[1], labels[2])
    marker(gp, nil)
    local panels = {}
    for _, t in ipairs(TOPOLOGIES) do panels[#panels + 1] = { t.label .. " (LRAB, tcm rings, centre root)", t.key, { "tcm" } } end
    panels[#panels + 1] = { "buffer kinds, torus_2d 2x3 (LRAB, centre root)", "torus_2d", KINDS }
    for i, pn in ipairs(panels) do
      local parts = {}
      for j, kind in ipairs(pn[3]) do
        for k, run in ipairs { r, other } do
          plot_line(parts, series(gp, ("cmp%d%d%d"):format(i, j, k), collect(run, "lrab", pn[2], kind, "center"), "crit_ns"),
            ("%s, %s"):format(kind, labels[k]),
            ("with linespoints pt 7 lw 2 linecolor %d%s"):format(j, k == 2 and " dashtype 2" or ""))
        end
      end
      gp[#gp + 1] = ("set title %q"):format(pn[1])
      gp[#gp + 1] = #parts > 0 and ("plot " .. table.concat(parts, ", ")) or "plot 1/0 notitle"
    end
    gp[#gp + 1] = "unset multiplot"
    return table.concat(gp, "\n") .. "\n"
  end

  -- The topology diagram as DOT (neato, pinned positions), four panels: the
  -- SIP topologies as LRAB's phase 3 uses them (ring_1d, torus_2d 2x3 with
  -- its wrap-around links, mesh_2d_no_wrap 2x3), and the cube-level
  -- reduction (phases 1 and 2) inside SIP 0 towards the centre root cube.
  local function q(s) return '"' .. s:gsub('"', '\\"') .. '"' end

  local function topology_dot(r)
    local info = {}
    for _, t in ipairs(r.topologies) do info[t.key] = t end
    local any = r.topologies[1]
    local cw, ch = any.cube_w, any.cube_h
    local d = { "graph milestone_ccl_topology {",
      "  graph [splines=false, outputorder=edgesfirst, bgcolor=white, pad=0.3];",
      "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#e8f0fe\", fontname=\"Helvetica\", fontsize=11, " ..
      "width=1.1, height=0.45, fixedsize=true];",
      "  edge [fontname=\"Helvetica\", fontsize=9];" }
    local function text(id, x, y, label, size)
      d[#d + 1] = ("  %s [shape=plaintext, style=\"\", fixedsize=false, fontsize=%d, label=%s, pos=\"%.2f,%.2f!\"];")
        :format(id, size or 13, q(label), x, y)
    end
    local function node(id, x, y, label, extra)
      d[#d + 1] = ("  %s [label=%s, pos=\"%.2f,%.2f!\"%s];"):format(id, q(label), x, y, extra or "")
    end
    local function edge(a, b, attrs) d[#d + 1] = ("  %s -- %s [%s];"):format(a, b, attrs) end
    local bends = 0
    -- a wrap-around link drawn as a bracket beside the grid, through two bend points
    local function bracket(a, b, ax, ay, bx, by, off_x, off_y, attrs)
      bends = bends + 1
      local p1, p2 = "bend" .. bends .. "a", "bend" .. bends .. "b"
      for _, pt in ipairs { { p1, ax + off_x, ay + off_y }, { p2, bx + off_x, by + off_y } } do
        d[#d + 1] = ("  %s [shape=point, width=0.01, label=\"\", pos=\"%.2f,%.2f!\"];"):format(pt[1], pt[2], pt[3])
      end
      edge(a, p1, attrs)
      edge(p1, p2, attrs)
      edge(p2, b, attrs)
    end
    local blue, red = "color=\"#1a73e8\", penwidth=2", "color=\"#d93025\", penwidth=2"
    -- (a) ring_1d
    local n = (info.ring_1d or any).sips
    text("t_a", 3.0, 11.0, ("(a) ring_1d, %d SIPs: global_E / global_W"):format(n))
    for s = 0, n - 1 do
      local a = math.pi / 2 - 2 * math.pi * s / n
      node("a" .. s, 3.0 + 1.5 * math.cos(a), 8.7 + 1.5 * math.sin(a), "SIP " .. s)
    end
    for s = 0, n - 1 do edge("a" .. s, "a" .. (s + 1) % n, blue) end
    -- (b), (c): the 2-D SIP grids (rank r at (r % w, r // w))
    local function grid(key, tag, x0, ytop, wrap)
      local t = info[key]
      local w, h = t and t.sip_w or 2, t and t.sip_h or 3
      local dx, dy = 1.8, 1.3
      text("t_" .. tag, x0 + dx * (w - 1) / 2, ytop + 0.8, ("(%s) %s %dx%d (w %d, h %d)%s"):format(tag, key, w, h, w, h,
        wrap and ": wrap-around" or ": no wrap"))
      local function id(x, y) return ("%s%d_%d"):format(tag, x, y) end
      local function X(x) return x0 + dx * x end
      local function Y(y) return ytop - dy * y end
      for y = 0, h - 1 do
        for x = 0, w - 1 do node(id(x, y), X(x), Y(y), ("SIP %d (%d,%d)"):format(y * w + x, x, y)) end
      end
      for y = 0, h - 1 do
        for x = 0, w - 2 do edge(id(x, y), id(x + 1, y), blue .. ", label=\"E/W\"") end
      end
      for x = 0, w - 1 do
        for y = 0, h - 2 do edge(id(x, y), id(x, y + 1), red .. ", label=\"N/S\"") end
      end
      if wrap then
        if w > 2 then
          for y = 0, h - 1 do
            bracket(id(w - 1, y), id(0, y), X(w - 1), Y(y), X(0), Y(y), 0, 0.35, blue .. ", style=dashed")
          end
        end
        if h > 2 then
          for x = 0, w - 1 do
            local side = x < w / 2 and -0.85 or 0.85
            bracket(id(x, h - 1), id(x, 0), X(x), Y(h - 1), X(x), Y(0), side, 0, red .. ", style=dashed")
          end
        end
        text("n_" .. tag, x0 + dx * (w - 1) / 2, Y(h - 1) - 0.75, "dashed: the wrap-around links" ..
          (w == 2 and " (with w = 2 the E/W wrap joins the same pair)" or ""), 10)
      end
    end
    grid("torus_2d", "b", 8.6, 10.2, true)
    grid("mesh_2d_no_wrap", "c", 2.1, 5.0, false)
    -- (d) cube-level reduction inside SIP 0
    local rx, ry = cw // 2, ch // 2
    local x0, ytop, dx, dy = 7.4, 5.0, 1.25, 0.95
    text("t_d", x0 + dx * (cw - 1) / 2, ytop + 0.8, ("(d) SIP 0, %dx%d cubes (PE 0 each): LRAB's reduce to the centre "
      .. "root, cube %d"):format(cw, ch, ry * cw + rx))
    for y = 0, ch - 1 do
      for x = 0, cw - 1 do
        local c = y * cw + x
        node("c" .. c, x0 + dx * x, ytop - dy * y, "cube " .. c,
          ", width=0.8" .. ((x == rx and y == ry) and ", fillcolor=\"#fce8b2\", penwidth=2" or ""))
      end
    end
    for y = 0, ch - 1 do
      for x = 0, cw - 1 do
        local c = y * cw + x
        if x < rx then edge("c" .. c, "c" .. (c + 1), "dir=forward, " .. blue) end
        if x > rx then edge("c" .. c, "c" .. (c - 1), "dir=forward, " .. blue) end
      end
    end
    for y = 0, ch - 1 do
      local c = y * cw + rx
      if y < ry then edge("c" .. c, "c" .. (c + cw), "dir=forward, " .. red) end
      if y > ry then edge("c" .. c, "c" .. (c - cw), "dir=forward, " .. red) end
    end
    text("legend", x0 + dx * (cw - 1) / 2, ytop - dy * (ch - 1) - 0.9, "blue: phase 1, each row reduces towards the " ..
      "root column; red: phase 2, that column reduces to the root.\\nPhase 3: the SIPs' root cubes combine over (a), "
      .. "(b) or (c); phases 4 and 5 broadcast the sum back the same way.", 10)
    d[#d + 1] = "}"
    return table.concat(d, "\n") .. "\n"
  end


  return { index = index, sizes_of = sizes_of, gnuplot_script = gnuplot_script, compare_script = compare_script,
           topology_dot = topology_dot }
end

return M
