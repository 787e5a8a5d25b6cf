#!/usr/bin/env bash
# The Lua process benchmark against its floor (lua_floor.c): the same
# process bodies on Lua alone, with no simulator around them.
#
#   lua_floor.sh check KERNBENCH LUA_FLOOR
#       small configurations; fails unless the resume counts are equal
#       (the ctest case perf.lua_floor)
#   lua_floor.sh ratio KERNBENCH LUA_FLOOR [pairs sleepers rounds]
#       both lines, then kernbench's in-run resumes/s over the floor's
#       (make perf); also fails on resume counts that differ
set -euo pipefail

mode=${1:-}
kb=${2:-}
floor=${3:-}
if [[ -z $mode || -z $kb || -z $floor ]]; then
  echo "usage: $0 check|ratio KERNBENCH LUA_FLOOR [pairs sleepers rounds]" >&2
  exit 2
fi
shift 3
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=benches/perf/fields.sh
source "$here/fields.sh"

# run PAIRS SLEEPERS ROUNDS: prints both lines, compares the resume counts;
# sets KB_RATE and FLOOR_RATE.
run() {
  local a b ra rb
  a=$("$kb" -q "$here/lua_processes.lua" "$@")
  b=$("$floor" "$@")
  echo "$a"
  echo "$b"
  ra=$(field resumes "$a"); rb=$(field resumes "$b")
  if [[ -z $ra || $ra != "$rb" ]]; then
    echo "MISMATCH at [$*]: kernbench resumes=$ra, lua_floor resumes=$rb" >&2
    return 1
  fi
  KB_RATE=$(field resumes_per_s "$a")
  FLOOR_RATE=$(field resumes_per_s "$b")
}

case $mode in
check)
  # Sizes with no pair or at least two: with a single pair kernbench's
  # shortcut (docs/decisions.md, "SimPy's order within one instant") skips
  # a resume at the end, which the floor does not model.
  run 2 0 5
  run 3 2 17
  run 0 5 9
  run 7 0 40
  echo "lua_floor: resume counts equal kernbench's"
  ;;
ratio)
  [[ $# -gt 0 ]] || set -- 100 100 10000
  run "$@"
  awk -v a="$KB_RATE" -v b="$FLOOR_RATE" \
    'BEGIN { printf "lua processes vs floor: kernbench %.2f M resumes/s, floor %.2f M, kernbench at %.2f of the floor\n", a / 1e6, b / 1e6, (b > 0 ? a / b : 0) }'
  ;;
*)
  echo "unknown mode '$mode' (check or ratio)" >&2
  exit 2
  ;;
esac
