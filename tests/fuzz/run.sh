#!/usr/bin/env bash
# Runs each fuzz harness for SECONDS on a scratch copy of its seed corpus
# and regression inputs, then prints the summary (summary.sh). `make fuzz`
# calls it; the exit status is 1 if any harness found something.
#
#   tests/fuzz/run.sh BUILD_DIR SECONDS HARNESS...
#
# Per harness, under BUILD_DIR/fuzz-run/HARNESS/: corpus/ (grown by the
# run; never the repository's), artifacts/ (crash-*, leak-*, timeout-*,
# oom-* inputs), log (libFuzzer's output). -timeout makes an input that
# runs longer than FUZZ_TIMEOUT seconds (default 10) a finding (a hang);
# long runs beside other work give it more room (tests/fuzz/README.md).
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 BUILD_DIR SECONDS HARNESS..." >&2
  exit 2
fi
build=$1 seconds=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
work=$build/fuzz-run

for h in "$@"; do
  dir=$work/$h
  rm -rf "$dir"
  mkdir -p "$dir/corpus" "$dir/artifacts" "$dir/tmp"
  cp "$src/corpus/$h/"* "$dir/corpus/"
  if [ -d "$src/regressions/$h" ]; then
    cp "$src/regressions/$h/"* "$dir/corpus/"
  fi
  opts=(-max_total_time="$seconds" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$dir/artifacts/")
  case $h in
    topo) opts+=(-max_len=16384 -dict="$src/topo.dict") ;;
    addr) opts+=(-max_len=64) ;;
    tl_torch) opts+=(-max_len=1024) ;;
  esac
  echo "fuzzing $h for $seconds s (log: $dir/log)"
  KB_FUZZ_TMPDIR=$dir/tmp "$build/bin/fuzz_$h" "${opts[@]}" "$dir/corpus" >"$dir/log" 2>&1
  echo $? >"$dir/status"
done

exec "$src/summary.sh" "$build" "$@"
