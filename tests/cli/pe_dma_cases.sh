#!/usr/bin/env bash
# Command-line cases of the PE DMA perf harness, benches/perf/pe_dma.lua
# (spec topology-fabric-latency.md §5.1; docs/fidelity.md ("The PE DMA perf harness")): --verify
# on the shipped profiles and on a broken one, the output directory and its
# atomic PNGs, the arguments (sourced by tests/cli/cli_test.sh; uses its
# helpers).

pe_dma_cases=(pe_dma_verify_passes pe_dma_verify_small_topologies pe_dma_verify_fails_on_a_broken_profile
              pe_dma_figures_are_atomic pe_dma_arguments)

harness=benches/perf/pe_dma.lua

# fake_gnuplot DIR: a gnuplot that writes "PNG" to every `set output` of its
# script, and refuses a name that is not a kb.open_output temporary name
fake_gnuplot() {
  mkdir -p "$1"
  cat >"$1/gnuplot" <<'SH'
#!/bin/sh
cp "$1" "$(dirname "$0")/script.seen"
for out in $(sed -n 's/^set output "\(.*\)"$/\1/p' "$1"); do
  case "$out" in */.*.png.partial.*) printf 'PNG' >"$out" ;; *) echo "gnuplot: not a temporary name: $out" >&2; exit 1 ;; esac
done
SH
  chmod +x "$1/gnuplot"
}

pe_dma_verify_passes() {
  fake_gnuplot "$tmp/bin"
  # the default topology: every invariant checked, none skipped
  PATH="$tmp/bin:$PATH" run -q $harness --out "$tmp/d" --verify; expect_status 0
  expect_out "[v] PASS V1 effective BW non-increasing with distance"
  expect_out "[v] PASS V1 effective BW remote_sip <= remote_cube_best"
  expect_out "[v] PASS V4 formula <= actual: same_cube_local (formula 68.00 ns, actual 79.00 ns)"
  expect_out "[v] PASS V6 makespan monotonic in issuers"; expect_out "[v] PASS B7 ucie_eastbound"
  expect_out " failed, 0 skipped"; grep -q ', 0 failed, 0 skipped$' "$tmp/out" || fail "a failure: $(cat "$tmp/out")"
  ! grep -q '^\[x\]' "$tmp/out" || fail "a FAIL line: $(grep '^\[x\]' "$tmp/out")"
  # the original system's compatibility profile (PE DMA setup 0, unpaced UCIe bridges,
  # ports as buses): every invariant but the two that bus routing breaks (B5 on the
  # SIP-wide hotspot, B7 on the eastbound flows; docs/fidelity.md)
  PATH="$tmp/bin:$PATH" run -q -t original $harness --out "$tmp/o"; expect_status 0
  expect_out "pe_dma perf: topology original"; expect_out "same_cube_local             1      77.00"
  grep -q ', 2 failed, 0 skipped$' "$tmp/out" || fail "not exactly B5 and B7 on original: $(grep -E '^\[x\]|failed' "$tmp/out")"
  [ "$(grep -c '^\[x\] FAIL B[57] ' "$tmp/out")" = 2 ] || fail "original: the failures are not B5 and B7: $(grep -E '^\[x\]' "$tmp/out")"
}

pe_dma_verify_small_topologies() {
  # scenarios and invariants the topology is too small for are skipped, with the reason
  run -q -t small_2x2 $harness --out "$tmp/a" --verify; expect_status 0
  expect_out "skipped remote_sip: one SIP"
  expect_out "[-] SKIP V1 effective BW remote_sip <= remote_cube_best (needs 2 SIPs and 2 cubes per SIP)"
  grep -q ', 0 failed, 1 skipped$' "$tmp/out" || fail "$(grep -E '^\[x\]|failed' "$tmp/out")"
  run -q -t small_1cube_8pe $harness --out "$tmp/b" --verify; expect_status 0
  expect_out "skipped remote_cube_best: one cube per SIP"; expect_out "skipped ucie_eastbound: one cube per SIP"
  expect_out "[-] SKIP B7 ucie_eastbound"
  grep -q ', 0 failed, 2 skipped$' "$tmp/out" || fail "$(grep -E '^\[x\]|failed' "$tmp/out")"
}

pe_dma_verify_fails_on_a_broken_profile() {
  # A UCIe crossing as fast as a NoC link and with no PHY overhead makes the
  # next cube's pe0 (13 mm) nearer than the own cube's farthest PE (23 mm):
  # remote_cube_best (145.30 GB/s) beats same_cube_remote_worst (126.56):
  # distance monotonicity (V1) fails, and only it.
  local broken=(--set cube.links.router_to_ucie_conn_bw_gbs=256 --set cube.links.ucie_conn_to_port_bw_gbs=256
                --set cube.components.ucie.attrs.overhead_ns=0)
  run -q "${broken[@]}" $harness --out "$tmp/x" --verify; expect_status 1
  expect_out "[x] FAIL V1 effective BW non-increasing with distance"; expect_out "remote_cube_best=145.30"
  expect_out "1 failed, 0 skipped"
  expect_err "kernbench: pe_dma.lua: 1 invariant(s) failed"
  ! grep -q "stack traceback" "$tmp/err" || fail "a traceback: $(cat "$tmp/err")"
  [ -s "$tmp/x/summary.csv" ] || fail "no summary.csv after a failed verify"
  # without --verify the same failure is reported, the exit status stays 0
  run -q "${broken[@]}" $harness --out "$tmp/x"; expect_status 0
  expect_out "[x] FAIL V1"; expect_out "pe_dma.lua: 1 invariant(s) failed (the exit status stays 0 without --verify)"
}

pe_dma_figures_are_atomic() {
  fake_gnuplot "$tmp/bin"
  # --out is created; the CSV and the four PNGs appear under their names, no temporary left
  PATH="$tmp/bin:$PATH" run -q -t small_1cube_8pe $harness 4096 --out "$tmp/new/dir"; expect_status 0
  for f in summary.csv no_congestion.png congestion.png breakdown_no_congestion.png breakdown_congestion.png; do
    [ -s "$tmp/new/dir/$f" ] || fail "$f missing: $(ls -a "$tmp/new/dir")"
  done
  [ "$(cat "$tmp/new/dir/congestion.png")" = PNG ] || fail "congestion.png not written by gnuplot"
  expect_out "wrote $tmp/new/dir/{no_congestion,congestion,breakdown_no_congestion,breakdown_congestion}.png"
  head -1 "$tmp/new/dir/summary.csv" | grep -q '^name,n_issuers,nbytes,latency_ns,.*,util_aggregate_pct,pe_setup_ns,.*,contention_ns$' \
    || fail "summary.csv header: $(head -1 "$tmp/new/dir/summary.csv")"
  grep -q '^same_cube_local,1,4096,' "$tmp/new/dir/summary.csv" || fail "summary.csv: $(cat "$tmp/new/dir/summary.csv")"
  ! ls -a "$tmp/new/dir" | grep -q partial || fail "temporary files left: $(ls -a "$tmp/new/dir")"
  # labels are printed literally (gnuplot's enhanced text would subscript "_local")
  local gp=$tmp/bin/script.seen
  grep -qx 'set termoption noenhanced' "$gp" || fail "the script lacks 'set termoption noenhanced': $(cat "$gp")"
  [ "$(grep -n -m1 '^set termoption noenhanced' "$gp" | cut -d: -f1)" -lt "$(grep -n -m1 '^set output' "$gp" | cut -d: -f1)" ] ||
    fail "noenhanced must come before the first plot"
  grep -qF '"same_cube_local\nN=1" 1' "$gp" || fail "x labels: $(grep xtics "$gp")"
  [ "$(grep -c '^set output' "$gp")" -eq 4 ] || fail "not 4 figures: $(grep '^set output' "$gp")"
  if command -v gnuplot >/dev/null 2>&1; then # the real one writes PNGs
    run -q -t small_1cube_8pe $harness 4096 --out "$tmp/real"; expect_status 0
    local png
    for png in no_congestion congestion breakdown_no_congestion breakdown_congestion; do
      [ "$(head -c 4 "$tmp/real/$png.png" | od -An -c | tr -d ' ')" = '211PNG' ] ||
        fail "$png.png is not a PNG: $(cat "$tmp/out" "$tmp/err")"
    done
  fi
  # KB_OUT_DIR is the default of --out
  mkdir -p "$tmp/env"
  PATH="$tmp/bin:$PATH" KB_OUT_DIR="$tmp/env" run -q -t small_1cube_8pe $harness 4096; expect_status 0
  [ -s "$tmp/env/summary.csv" ] && [ -s "$tmp/env/congestion.png" ] || fail "KB_OUT_DIR ignored: $(ls -a "$tmp/env")"
  # a failing gnuplot leaves no PNG (the CSV is still written)
  printf '#!/bin/sh\nexit 1\n' >"$tmp/bin/gnuplot"; rm -rf "$tmp/new/dir"
  PATH="$tmp/bin:$PATH" run -q -t small_1cube_8pe $harness 4096 --out "$tmp/new/dir"; expect_status 0
  expect_out "pe_dma.lua: gnuplot failed: no PNG figures"
  [ -s "$tmp/new/dir/summary.csv" ] || fail "no summary.csv"
  ! ls -a "$tmp/new/dir" | grep -qE 'png|partial' || fail "PNG or temporary files left: $(ls -a "$tmp/new/dir")"
  # without gnuplot: one line naming the package, no PNG (mkdir stays on the PATH)
  mkdir -p "$tmp/nognu"; ln -s "$(command -v mkdir)" "$tmp/nognu/mkdir"; rm -rf "$tmp/new/dir"
  PATH="$tmp/nognu" run -q -t small_1cube_8pe $harness 4096 --out "$tmp/new/dir"; expect_status 0
  [ "$(grep -c gnuplot "$tmp/out")" -eq 1 ] || fail "not one gnuplot line: $(grep gnuplot "$tmp/out")"
  expect_out "pe_dma.lua: gnuplot is not installed: no PNG figures (apt-get install gnuplot-nox)"
  [ -s "$tmp/new/dir/summary.csv" ] || fail "no summary.csv"
  ! ls -a "$tmp/new/dir" | grep -qE 'png|partial' || fail "PNG or temporary files left: $(ls -a "$tmp/new/dir")"
  # an --out that cannot be written fails before any simulation
  printf 'x' >"$tmp/file"
  run -q -t small_1cube_8pe $harness --out "$tmp/file"; expect_status 1
  expect_err "$tmp/file/summary.csv"; expect_empty out
}

pe_dma_arguments() {
  run -q $harness --frobnicate; expect_status 2; expect_empty out
  expect_err "kernbench: pe_dma.lua: unknown argument '--frobnicate'"
  expect_err "usage: kernbench [-t T] [--set K=V] benches/perf/pe_dma.lua [nbytes] [--out DIR] [--verify]"
  run -q $harness 0; expect_status 2; expect_err "nbytes must be a whole number from 1 to 2^40, got '0'"
  run -q $harness 4096 8192; expect_status 2; expect_err "nbytes given twice ('4096', then '8192')"
  run -q $harness --out; expect_status 2; expect_err "--out needs a directory"
  run -q $harness --out=; expect_status 2; expect_err "--out needs a directory"
  run -q $harness --help; expect_status 0; expect_out "usage: kernbench [-t T]"; expect_out "--verify"
}
