#!/usr/bin/env bash
# The chain benchmark against its hand-specialised limit (chain_limit.c).
#
#   chain_limit.sh check KERNBENCH CHAIN_LIMIT
#       small configurations; fails unless finish_ns and events are equal
#       (the ctest case perf.chain_limit)
#   chain_limit.sh ratio KERNBENCH CHAIN_LIMIT F...
#       each F: both lines, then kernbench's in-run time over the limit's
#       (make perf); also fails on a finish or event count that differs
set -euo pipefail

mode=${1:-}
kb=${2:-}
lim=${3:-}
if [[ -z $mode || -z $kb || -z $lim ]]; then
  echo "usage: $0 check|ratio KERNBENCH CHAIN_LIMIT [F...]" >&2
  exit 2
fi
shift 3
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=benches/perf/fields.sh
source "$here/fields.sh"

# run F "kernbench --set options" "chain_limit options": prints both lines,
# compares; sets KB_WALL and LIM_WALL.
run() {
  local f=$1 sets=$2 opts=$3 a b
  # shellcheck disable=SC2086
  a=$("$kb" -q $sets "$here/chain.lua" "$f")
  # shellcheck disable=SC2086
  b=$("$lim" "$f" $opts)
  echo "$a"
  echo "$b"
  local fa fb ea eb
  fa=$(field finish_ns "$a"); fb=$(field finish_ns "$b")
  ea=$(field events "$a"); eb=$(field events "$b")
  if [[ -z $fa || $fa != "$fb" || $ea != "$eb" ]]; then
    echo "MISMATCH at F=$f [$sets]: kernbench finish_ns=$fa events=$ea, chain_limit finish_ns=$fb events=$eb" >&2
    return 1
  fi
  KB_WALL=$(field wall_s "$a")
  LIM_WALL=$(field wall_s "$b")
}

case $mode in
check)
  run 1 "" ""
  run 37 "" ""
  run 5 "--set graph.line.count=3" "--nodes 3"
  run 9 "--set graph.line.node.attrs.overhead_ns=50" "--overhead-ns 50"
  run 7 "--set graph.line.count=5 --set graph.line.link.bw_gbs=100 --set graph.line.link.mm=2.5
         --set system.ns_per_mm=0.7 --set system.flit_bytes=128 --set graph.line.node.attrs.overhead_ns=3.3" \
      "--nodes 5 --bw-gbs 100 --mm 2.5 --ns-per-mm 0.7 --flit-bytes 128 --overhead-ns 3.3"
  echo "chain_limit: finish times and event counts equal kernbench's"
  ;;
ratio)
  [[ $# -gt 0 ]] || set -- 1024 4096
  for f in "$@"; do
    run "$f" "" ""
    awk -v f="$f" -v a="$KB_WALL" -v b="$LIM_WALL" \
      'BEGIN { printf "chain vs limit: F=%s kernbench in-run %.4f s, limit %.6f s, ratio %.2fx\n", f, a, b, (b > 0 ? a / b : 0) }'
  done
  ;;
*)
  echo "unknown mode '$mode' (check or ratio)" >&2
  exit 2
  ;;
esac
