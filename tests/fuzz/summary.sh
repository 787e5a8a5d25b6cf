#!/usr/bin/env bash
# Summarises the runs of run.sh from their libFuzzer logs: per harness the
# executions, executions per second, coverage (libFuzzer's cov: edges and
# ft: features) and corpus size at the end, and the findings with the
# command that reproduces each. Exit status 1 if there is a finding.
#
#   tests/fuzz/summary.sh BUILD_DIR HARNESS...
set -u
build=$1
shift
work=$build/fuzz-run
src=$(cd "$(dirname "$0")" && pwd)
found=0
printf '%-10s %12s %8s %7s %7s %8s %9s\n' harness executions exec/s cov ft corpus findings
for h in "$@"; do
  dir=$work/$h log=$work/$h/log
  if [ ! -f "$log" ]; then
    printf '%-10s not run\n' "$h"
    found=1
    continue
  fi
  stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
  last=$(grep -E '^#[0-9]+.* cov: ' "$log" | tail -1)
  field() { sed -n "s/.* $1: \([0-9]*\).*/\1/p" <<<"$last"; }
  corpus=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
  findings=$(find "$dir/artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | sort)
  n=$(grep -c . <<<"$findings")
  status=$(cat "$dir/status" 2>/dev/null || echo '?')
  if [ "$status" != 0 ] && [ "$n" = 0 ]; then
    n="exit $status" # stopped without an artifact: see the log
  fi
  printf '%-10s %12s %8s %7s %7s %8s %9s\n' "$h" "$(stat number_of_executed_units)" \
    "$(stat average_exec_per_sec)" "$(field cov)" "$(field ft)" "$corpus" "$n"
  if [ "$n" != 0 ]; then
    found=1
    for f in $findings; do
      known=""
      for r in "$src/regressions/$h/"*; do
        if [ -f "$r" ] && cmp -s "$f" "$r"; then known=" (the regression input $(basename "$r"), still failing)"; fi
      done
      echo "  finding: $f$known"
      echo "    reproduce: $build/bin/fuzz_$h $f"
      echo "    minimize:  $build/bin/fuzz_$h -minimize_crash=1 -runs=20000 $f"
    done
    grep -m2 -E 'runtime error|ERROR: |invariant broken|^  the driver|SUMMARY: ' "$log" | sed 's/^/    /'
  fi
done
if [ $found = 1 ]; then
  echo "a finding becomes a test: minimize it, then add it to tests/fuzz/regressions/HARNESS/ (tests/fuzz/README.md)"
fi
exit $found
