#!/usr/bin/env bash
# Runs the conformance scenarios against kernbench and compares each one's
# stdout with the log SimPy printed (NN_name.log), byte for byte.
#   check.sh KERNBENCH [NAME...]   NAME: 01_store_two_workers (or its .lua path);
#                                  no NAME: every scenario
#   check.sh --model KERNBENCH ... the same with simpy_model.lua (a literal
#                                  SimPy 3 model of the sim API) in place of
#                                  kernbench's `sim`: checks the .lua twins
# Prints a unified diff per mismatch and `conformance: N scenarios, M differ`;
# exits 1 if any differ. Needs no Python. KB_CONFORMANCE_TIMEOUT (seconds, default
# 60) bounds each run.
set -u

dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
model=()
if [ "${1:-}" = "--model" ]; then
  model=(-e "sim = dofile([[$dir/simpy_model.lua]])")
  shift
fi
if [ $# -lt 1 ]; then
  echo "usage: $0 [--model] KERNBENCH [NAME...]" >&2
  exit 2
fi
kb=$1
shift
if [ ! -x "$kb" ]; then
  echo "check.sh: kernbench binary '$kb' not found or not executable" >&2
  exit 2
fi

names=()
if [ $# -gt 0 ]; then
  for arg in "$@"; do
    name=$(basename "$arg")
    names+=("${name%.*}")
  done
else
  for f in "$dir"/[0-9]*.lua; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    names+=("${name%.lua}")
  done
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

limit=${KB_CONFORMANCE_TIMEOUT:-60}
runner=()
if command -v timeout >/dev/null 2>&1; then
  runner=(timeout -k 5 "$limit")
fi

total=0
differ=0
failed=()
for name in "${names[@]}"; do
  total=$((total + 1))
  lua="$dir/$name.lua"
  log="$dir/$name.log"
  if [ ! -f "$lua" ] || [ ! -f "$log" ]; then
    echo "=== $name: missing $( [ -f "$lua" ] || echo "$name.lua " )$( [ -f "$log" ] || echo "$name.log" )"
    differ=$((differ + 1))
    failed+=("$name")
    continue
  fi
  "${runner[@]}" "$kb" -q "${model[@]}" "$lua" >"$tmp/out" 2>"$tmp/err" </dev/null
  status=$?
  if cmp -s "$log" "$tmp/out"; then
    if [ "$status" -ne 0 ]; then
      # Same log but a failing exit: report it, it is a divergence too.
      echo "=== $name: output matches but kernbench exited with status $status"
      sed 's/^/    /' "$tmp/err" | head -20
      differ=$((differ + 1))
      failed+=("$name")
    fi
    continue
  fi
  differ=$((differ + 1))
  failed+=("$name")
  echo "=== $name differs (kernbench exit status $status)"
  diff -u --label "$name.log (SimPy)" --label "$name (kernbench)" "$log" "$tmp/out"
  if [ -s "$tmp/err" ]; then
    echo "    stderr:"
    sed 's/^/    /' "$tmp/err" | head -20
  fi
done

echo "conformance: $total scenarios, $differ differ"
if [ "$differ" -gt 0 ]; then
  echo "differ: ${failed[*]}"
  exit 1
fi
exit 0
