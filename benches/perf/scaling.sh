#!/usr/bin/env bash
# The scaling benchmarks over trays of N SIPs (docs/scaling.md; `make perf-scale`).
#
#   scaling.sh KERNBENCH [N...]        (default N: 2 4 8 16 32 64)
#
# Runs cross_sip.lua and collective_scale.lua at each N, then
# pending_flits.lua and window_sync (built beside KERNBENCH) once, and
# prints their result lines and a table. A tray
# the loader refuses (more SIPs than it accepts) is reported and skipped;
# any other failure makes the exit status 1. KB_SCALE_ARGS_CROSS,
# KB_SCALE_ARGS_COLL and KB_SCALE_ARGS_PENDING give the benchmarks' size
# arguments (after N for the first two). Table columns: x = cross_sip,
# c = collective_scale; ns/ev is wall time per event, cpu/ev CPU time per event.
set -uo pipefail

kb=${1:-}
if [[ -z $kb ]]; then
  echo "usage: $0 KERNBENCH [N...]" >&2
  exit 2
fi
shift
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(2 4 8 16 32 64)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

# shellcheck source=benches/perf/fields.sh
source "$here/fields.sh"

failed=0
# bench SCRIPT N EXTRA...: the result line, or "" (and why, on stderr); a
# failure other than the loader's SIP limit sets failed.
bench() {
  local script=$1 n=$2 out err
  shift 2
  err=$(mktemp)
  out=$("$kb" -q "$here/$script" "$n" "$@" 2>"$err")
  local rc=$?
  if [[ $rc -ne 0 ]]; then
    if grep -q "system.sips.count: .* is out of range" "$err"; then
      echo "$script N=$n: skipped: $(head -1 "$err")" >&2
    else
      echo "$script N=$n: FAILED (exit $rc): $(cat "$err")" >&2
      failed=1
    fi
    out=""
  fi
  rm -f "$err"
  echo "$out"
}

declare -A cross coll
for n in "${sizes[@]}"; do
  # (not in $(...): bench must set failed in this shell)
  # shellcheck disable=SC2086
  bench cross_sip.lua "$n" ${KB_SCALE_ARGS_CROSS:-} >"$tmp"
  cross[$n]=$(cat "$tmp")
  [[ -n ${cross[$n]} ]] && echo "${cross[$n]}"
  # shellcheck disable=SC2086
  bench collective_scale.lua "$n" ${KB_SCALE_ARGS_COLL:-} >"$tmp"
  coll[$n]=$(cat "$tmp")
  [[ -n ${coll[$n]} ]] && echo "${coll[$n]}"
done
# shellcheck disable=SC2086
pending=$("$kb" -q "$here/pending_flits.lua" ${KB_SCALE_ARGS_PENDING:-}) || failed=1
echo "$pending"
# The cost of a synchronisation window between threads (docs/scaling.md),
# built beside kernbench (CMake target window_sync).
sync=$(dirname "$kb")/window_sync
if [[ -x $sync ]]; then
  "$sync" 2 "${KB_SCALE_SYNC_WINDOWS:-20000}" || failed=1
else
  echo "window_sync: not built beside $kb (CMake target window_sync)" >&2
  failed=1
fi

echo
printf '%-5s | %-10s %-9s %-8s %-8s %-8s %-8s | %-10s %-8s %-8s %-8s %-8s\n' \
  N "x events" "x topo_s" "x issue" "x run_s" "x ns/ev" "x cpu/ev" "c events" "c setup" "c wall" "c ns/ev" "c cpu/ev"
base_nse=""
for n in "${sizes[@]}"; do
  x=${cross[$n]} c=${coll[$n]}
  if [[ -z $x && -z $c ]]; then
    printf '%-5s | (not loaded)\n' "$n"
    continue
  fi
  printf '%-5s | %-10s %-9s %-8s %-8s %-8s %-8s | %-10s %-8s %-8s %-8s %-8s\n' "$n" \
    "$(field events "$x")" "$(field topo_s "$x")" "$(field issue_s "$x")" "$(field run_s "$x")" \
    "$(field ns_per_event "$x")" "$(field cpu_ns_per_event "$x")" \
    "$(field events "$c")" "$(field setup_s "$c")" "$(field wall_s "$c")" "$(field ns_per_event "$c")" \
    "$(field cpu_ns_per_event "$c")"
  nse=$(field ns_per_event "$x") cpe=$(field cpu_ns_per_event "$x")
  [[ -z $base_nse && -n $nse ]] && base_nse=$nse base_cpe=$cpe base_n=$n
  last_nse=$nse last_cpe=$cpe last_n=$n
done
if [[ -n $base_nse && -n ${last_nse:-} ]]; then
  awk -v a="$base_nse" -v b="$last_nse" -v ca="$base_cpe" -v cb="$last_cpe" -v na="$base_n" -v nb="$last_n" \
    'BEGIN { printf "cross_sip ns per event, N=%s over N=%s: %.2fx wall, %.2fx CPU (target: at most 1.5x from 2 to 64)\n",
             nb, na, b / a, cb / ca }'
fi
echo "pending flits: $(field flits "$pending") flits, peak $(field peak_mib "$pending") MiB," \
  "$(field bytes_per_flit "$pending") bytes per flit (target: at most 50 MiB)"
exit $failed
