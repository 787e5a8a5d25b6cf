#!/usr/bin/env bash
# kernbench draw (docs/draw.md; sourced by tests/cli/cli_test.sh, uses its
# helpers): every shipped topology at every view renders SVG, PNG has its
# magic bytes and is refused on a terminal, usage errors exit 2 naming the
# argument, --stats and --route reach the drawing, renderings are cached by
# topology digest and options, a missing Graphviz is named.

draw_cases=(draw_every_topology_and_view_renders_svg draw_png draw_png_to_a_terminal_is_refused
            draw_usage_errors draw_stats_and_route draw_cache draw_missing_graphviz draw_help_and_docs)

# Renderings go to a cache of the case's own.
draw() { XDG_CACHE_HOME="$tmp/cache" run "$@"; }

draw_every_topology_and_view_renders_svg() {
  local f name view n=0
  for f in topologies/*.yaml; do
    name=$(basename "$f" .yaml)
    for view in system sip cube pe; do
      draw -t "$name" draw --view "$view"; expect_status 0
      head -n 12 "$tmp/out" | grep -q "^<svg" || fail "$name $view: not SVG: $(head -c 300 "$tmp/out")"
      tail -c 20 "$tmp/out" | grep -q "</svg>" || fail "$name $view: SVG not complete"
      grep -q 'class="edge link' "$tmp/out" || fail "$name $view: no link drawn"
      expect_empty err
      n=$((n + 1))
    done
  done
  [ "$n" -ge 36 ] || fail "only $n topology x view drawings"
  # the global -t and the subcommand's own -t are the same
  draw -t small_2x2 draw --view sip --format dot; expect_status 0; cp "$tmp/out" "$tmp/a.dot"
  draw draw -t small_2x2 --view sip --format dot; expect_status 0
  cmp -s "$tmp/a.dot" "$tmp/out" || fail "-t before and after draw differ"
  expect_out 'id="sip0.cube3"'
  # --set reaches the topology drawn
  draw --set sip.cube_mesh="{w: 3, h: 1}" -t small_2x2 draw --view sip --format dot; expect_status 0
  expect_out 'id="sip0.cube2"'; grep -q 'id="sip0.cube3"' "$tmp/out" && fail "--set not applied"
  true
}

draw_png() {
  draw draw --view cube -o "$tmp/c.png"; expect_status 0; expect_empty out
  [ "$(head -c 8 "$tmp/c.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG magic"
  # to a pipe or a file (not a terminal) standard output is fine; the format from -o's extension
  draw draw --view pe --format png; expect_status 0
  [ "$(head -c 8 "$tmp/out" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "no PNG magic on stdout"
  draw draw -o "$tmp/s.dot"; expect_status 0; grep -q '^digraph' "$tmp/s.dot" || fail "-o x.dot is not DOT"
  draw draw --format svg -o "$tmp/s.png"; expect_status 0; grep -q '<svg' "$tmp/s.png" || fail "--format beats the extension"
  ls -a "$tmp" | grep -q partial && fail "a partial file was left: $(ls -a "$tmp")"
  # the same drawing twice is the same bytes (rendered again, without the cache)
  draw draw --view cube --no-cache -o "$tmp/d.png"; expect_status 0
  cmp -s "$tmp/c.png" "$tmp/d.png" || fail "PNG not deterministic"
}

draw_png_to_a_terminal_is_refused() {
  local drive=${KB_PTY_DRIVE:-$(dirname "$KB")/pty_drive}
  printf '%s\n' 'expect refusing to write PNG to a terminal' >"$tmp/steps"
  XDG_CACHE_HOME="$tmp/cache" "$drive" 60 "$tmp/steps" "$KB" draw --format png >"$tmp/out" 2>"$tmp/err"
  status=$?
  expect_status 2
  expect_out "give -o FILE.png or redirect the output"
  grep -q PNG "$tmp/out" || fail "$(cat "$tmp/out")"
}

draw_usage_errors() {
  draw draw --view tray; expect_status 2; expect_err "kernbench draw: --view 'tray': expected one of system, sip, cube, pe"
  expect_err "usage: kernbench [-t T] [--set K=V] draw"; expect_empty out
  draw draw --sip 2; expect_status 2; expect_err "--sip 2 is out of range: topology default has 2 SIP(s) (0 .. 1)"
  draw draw --view cube --cube 16; expect_status 2; expect_err "--cube 16 is out of range: topology default has 16 cube(s) per SIP (0 .. 15)"
  draw -t small_1cube_1pe draw --pe 1; expect_status 2; expect_err "(0 .. 0)"
  draw draw --cube x; expect_status 2; expect_err "--cube 'x': expected a whole number >= 0"
  draw draw --view sip --pe 1; expect_status 2; expect_err "--pe does not apply to --view sip"
  draw draw --format jpg; expect_status 2; expect_err "--format 'jpg': expected one of svg, png, dot"
  draw draw --route sip0.cube0.pe0.pe_dam sip0.cube0.sram; expect_status 2
  expect_err "--route source: no node 'sip0.cube0.pe0.pe_dam' in topology default; did you mean sip0.cube0.pe0.pe_dma"
  draw draw --route sip0.cube0.sram; expect_status 2; expect_err "--route needs two node ids: --route SRC DST"
  draw draw --stats "$tmp/none.json"; expect_status 2; expect_err "--stats $tmp/none.json: No such file or directory"
  printf '{"x": 1}' >"$tmp/bad.json"
  draw draw --stats "$tmp/bad.json"; expect_status 2; expect_err "not a statistics file of kernbench --stats-json"
  printf '{"x": ' >"$tmp/bad.json"
  draw draw --stats "$tmp/bad.json"; expect_status 2; expect_err "--stats $tmp/bad.json: JSON:"
  draw draw -o "$tmp/nodir/x.svg"; expect_status 2; expect_err "-o $tmp/nodir/x.svg: directory $tmp/nodir does not exist"
  draw draw --bogus; expect_status 2; expect_err "unknown option '--bogus'"
  draw draw extra; expect_status 2; expect_err "unexpected argument 'extra'"
  draw draw --view; expect_status 2; expect_err "option '--view' needs an argument"
  draw draw --sip 0 --sip 1; expect_status 2; expect_err "option '--sip' given twice"
  draw draw -t nope; expect_status 2; expect_err "no topology file 'nope'"
  draw --param x=1 draw; expect_status 2; expect_err "--param and --results-json need a bench"
  [ ! -d "$tmp/cache" ] || [ -z "$(ls "$tmp/cache/kernbench/draw" 2>/dev/null)" ] || fail "a usage error rendered"
}

draw_stats_and_route() {
  run -q --stats-json "$tmp/s.json" probe --case h2d-2hop; expect_status 0
  draw draw --view sip --format dot --stats "$tmp/s.json"; expect_status 0
  expect_out 'id="legend"'; expect_out "link utilisation"; expect_out "util up to"
  # the probe's busiest link, io_noc -> its UCIe connection (0.76), is inside the IO chiplet; the
  # chiplet -> cube 0 link carried every flit too
  grep 'id="sip0.cube0->sip0.io0"' "$tmp/out" | grep -q 'color="#' || fail "no colour on the IO link"
  grep 'id="sip0.cube2->sip0.cube3"' "$tmp/out" | grep -q 'color="#bdbdbd"' || fail "an idle link is not grey"
  draw draw --view cube --cube 4 --format dot --route sip0.io0.pcie_ep sip0.cube4.hbm_ctrl.pe0; expect_status 0
  expect_out 'class="link route"'; expect_out "route sip0.io0.pcie_ep -> sip0.cube4.hbm_ctrl.pe0"
  grep 'class="link route"' "$tmp/out" | grep -q 'id="sip0.cube4.hbm_ctrl.pe0->sip0.cube4.r' \
    || fail "the route does not end at the controller"
  draw draw --view cube --cube 4 --stats "$tmp/s.json" --route sip0.io0.pcie_ep sip0.cube4.hbm_ctrl.pe0 \
    -o "$tmp/r.svg"
  expect_status 0; grep -q 'class="edge link route"' "$tmp/r.svg" || fail "no route in the SVG"
}

draw_cache() {
  local dir="$tmp/cache/kernbench/draw"
  draw draw --view cube --cube 3; expect_status 0; cp "$tmp/out" "$tmp/first.svg"
  [ "$(ls "$dir" | wc -l)" -eq 1 ] || fail "expected one cached file: $(ls "$dir")"
  local file digest
  file=$(ls "$dir")
  digest=$("$KB" -q -e 'print((require("kernbench.results").topology_digest(kb.topology.load()):gsub("fnv1a64:", "")))')
  case $file in "$digest"-cube-sip0-cube3-*.svg) ;; *) fail "cache file $file not named by digest and view" ;; esac
  cmp -s "$dir/$file" "$tmp/first.svg" || fail "the cached file is not the drawing"
  ls -a "$dir" | grep -q partial && fail "a partial file left in the cache"
  # a hit: the same bytes, read from the cache (a marked copy proves it), no new file
  draw draw --view cube --cube 3; expect_status 0
  cmp -s "$tmp/out" "$tmp/first.svg" || fail "a cache hit gave other bytes"
  printf '<svg>cached</svg>\n' >"$dir/$file"
  draw draw --view cube --cube 3; expect_status 0; expect_out "<svg>cached</svg>"
  draw draw --view cube --cube 3 --no-cache; expect_status 0
  cmp -s "$tmp/out" "$tmp/first.svg" || fail "--no-cache did not render"
  [ "$(ls "$dir" | wc -l)" -eq 1 ] || fail "--no-cache wrote the cache"
  # other options, another file; PNG apart from SVG; another topology apart
  draw draw --view cube --cube 2; expect_status 0
  draw draw --view cube --cube 3 --format png -o "$tmp/x.png"; expect_status 0
  draw -t small_2x2 draw --view cube --cube 3; expect_status 0
  [ "$(ls "$dir" | wc -l)" -eq 4 ] || fail "expected 4 cached files: $(ls "$dir")"
  # without XDG_CACHE_HOME: ~/.cache
  (unset XDG_CACHE_HOME; HOME="$tmp/home" "$KB" draw --view sip >/dev/null 2>"$tmp/err"); status=$?
  expect_status 0
  [ "$(ls "$tmp/home/.cache/kernbench/draw" | wc -l)" -eq 1 ] || fail "nothing cached under HOME"
  # a cache that cannot be written is no error
  : >"$tmp/notadir"
  XDG_CACHE_HOME="$tmp/notadir" run draw --view sip; expect_status 0; expect_out "<svg"
}

draw_missing_graphviz() {
  XDG_CACHE_HOME="$tmp/cache" PATH=/nonexistent run draw --view sip; expect_status 1
  expect_err "kernbench draw: Graphviz's 'dot' program was not found on PATH: install the Debian package graphviz"
  expect_empty out
  # DOT needs no Graphviz
  XDG_CACHE_HOME="$tmp/cache" PATH=/nonexistent run draw --view sip --format dot; expect_status 0
  expect_out "digraph"
}

draw_help_and_docs() {
  run draw --help; expect_status 0
  for o in --view --sip --cube --pe --format --stats --route --output --no-cache --topology --set; do
    grep -qE -- "^  (-[a-z], )?$o" "$tmp/out" || fail "draw --help lacks $o"
  done
  expect_out "kernbench/draw/"
  run --help; expect_status 0; expect_out "  draw "
  grep -q '^## `kernbench draw`' docs/cli.md || fail "docs/cli.md has no draw section"
  for o in --view --sip --cube --pe --format --stats --route --output --no-cache; do
    grep -qF -- "\`$o" docs/cli.md || fail "docs/cli.md does not document $o"
  done
  grep -q 'draw' docs/kernbench.1 || fail "the man page does not mention draw"
  # the completion: the subcommand, its options and their values
  local got
  got=$(bash -c 'source tools/kernbench.bash || exit 1; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
                 COMPREPLY=(); _kernbench; printf "%s\n" "${COMPREPLY[@]}"' _ "$KB" draw --view "" | sort | tr '\n' ' ')
  [ "$got" = "cube pe sip system " ] || fail "draw --view completes to: $got"
  got=$(bash -c 'source tools/kernbench.bash || exit 1; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
                 COMPREPLY=(); _kernbench; printf "%s\n" "${COMPREPLY[@]}"' _ "$KB" -t small_2x2 draw --ro)
  [ "$got" = "--route" ] || fail "draw --ro completes to: $got"
  got=$(bash -c 'source tools/kernbench.bash || exit 1; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
                 COMPREPLY=(); _kernbench; printf "%s\n" "${COMPREPLY[@]}"' _ "$KB" dra)
  [ "$got" = "draw" ] || fail "dra completes to: $got"
  grep -q '^## Topology diagrams (kernbench draw)' docs/decisions.md || fail "no decisions section"
}
